"""The course's grading side: check helpers for test cells, release and grading pipelines.

Test cells import :mod:`autograder.checks`; instructors run ``python -m autograder``.
"""
