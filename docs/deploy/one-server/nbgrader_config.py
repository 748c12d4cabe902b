"""nbgrader's settings for every account on the hub: the course and the exchange.

Installed as ``/opt/autograd-course/venv/etc/jupyter/nbgrader_config.py``: the course
environment's own configuration folder, which every server started from it reads (the learners'
and formgrader). The exchange lies beside the environment, ``/opt/autograd-course/exchange``.
"""

import sys
from pathlib import Path

c = get_config()  # noqa: F821 (defined by traitlets when it loads this file)

c.CourseDirectory.course_id = "autograd"
c.Exchange.root = str(Path(sys.prefix).parent / "exchange")
# Feedback never shows a hidden test's code (nbgrader's default shows every cell as graded):
# the grader's decision under each test still lists what failed and why.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
