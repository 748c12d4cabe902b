"""nbgrader configuration for this course: solutions/ is the source, course/ the release.

nbgrader finds this file through ``JUPYTER_CONFIG_PATH=autograder`` (set by the Makefile and
by :mod:`autograder.authoring.release`).
"""

from pathlib import Path

c = get_config()  # noqa: F821 (defined by traitlets when it loads this file)

c.CourseDirectory.root = str(Path(__file__).resolve().parent.parent)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "course"
# A unit's translation catalogs (solutions/UNIT/LANG.po) hold its hidden tests' messages:
# never released. Translated learner notebooks are built by `make release` into course/LANG/.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.po"]
# A learner's record of first predictions (autograder.checks.first_predictions.RECORD_FILE) is
# theirs: autograde never overwrites it with one that a run of the solution left in solutions/.
c.Autograde.exclude_overwriting = {
    unit.name: ["first_predictions.json"]
    for unit in (Path(c.CourseDirectory.root) / "solutions").iterdir()
    if unit.is_dir()
}
# Feedback never shows a hidden test's code (nbgrader's default shows every cell as graded):
# the grader's decision under each test still lists what failed and why.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
