"""The course's grading side, in four parts that follow its two pipelines.

- :mod:`autograder.checks`: what test cells import (the checks, their evidence and rules);
- :mod:`autograder.authoring`: from ``solutions/`` to learners (source check, release, handout);
- :mod:`autograder.grading`: ``make grade`` from intake to scoring, the sandbox and its worker;
- :mod:`autograder.reporting`: what grading writes (feedback, class report, CSV, gradebook).

Instructors run ``python -m autograder release|handout|grade``.
"""
