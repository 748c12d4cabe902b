"""Command line: ``python -m autograder release [--check]``, ``translate [--check]``,
``handout``, ``grade SUBMISSIONS``, ``canvas-csv``.

Each verb forwards to one module.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from autograder.authoring.handout import DEFAULT_HANDOUT, HandoutError, build_handout
from autograder.authoring.release import ReleaseError, release
from autograder.authoring.source_check import SourceNotebookError
from autograder.authoring.translation import (
    TRANSLATIONS,
    translation_problems,
    update_translations,
    write_preview,
)
from autograder.grading.grade import GradingError, grade
from autograder.grading.sandbox import SandboxUnavailable
from autograder.layout import CourseLayout
from autograder.reporting.canvas_csv import MATCH_COLUMNS, CanvasCsvError, write_canvas_csv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    release_parser = verbs.add_parser(
        "release", help="regenerate course/ from solutions/ through nbgrader"
    )
    release_parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    release_parser.add_argument(
        "--check", action="store_true", help="write nothing; fail if course/ is out of date"
    )
    translate_parser = verbs.add_parser(
        "translate",
        help="bring every translation catalog in step with the English, then list what is "
        "missing or stale",
    )
    translate_parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    translate_parser.add_argument(
        "--check", action="store_true", help="write nothing; fail if a translation is missing"
    )
    translate_parser.add_argument(
        "--preview",
        metavar="UNIT",
        default=None,
        help="write UNIT's answer key in each translation to build/preview/LANG/UNIT/, to run",
    )
    handout_parser = verbs.add_parser(
        "handout", help="zip course/ and the packages it imports for learners (no solutions)"
    )
    handout_parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    handout_parser.add_argument(
        "--out", type=Path, default=None, help=f"the zip to write (default: ROOT/{DEFAULT_HANDOUT})"
    )
    grade_parser = verbs.add_parser(
        "grade", help="grade a class: a folder STUDENT/UNIT/UNIT.ipynb or an LMS zip"
    )
    grade_parser.add_argument("submissions", type=Path, help="folder or .zip of submissions")
    grade_parser.add_argument("--out", type=Path, default=Path("graded"), help="output folder")
    grade_parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    grade_parser.add_argument("--workers", type=int, default=None, help="default: one per core")
    grade_parser.add_argument("--db", default=None, help="SQLAlchemy URL of the gradebook")
    grade_parser.add_argument(
        "--nbgrader-course",
        type=Path,
        default=None,
        help="an nbgrader course folder whose submitted/ is graded: place the feedback in its "
        "feedback/ for `nbgrader release_feedback`",
    )
    grade_parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run learner code WITHOUT isolation (only where bubblewrap cannot run)",
    )
    canvas_parser = verbs.add_parser(
        "canvas-csv", help="the gradebook's scores as a CSV for Canvas's gradebook import"
    )
    canvas_parser.add_argument(
        "--db",
        default=None,
        help="SQLAlchemy URL of the gradebook (default: sqlite:///graded/gradebook.db)",
    )
    canvas_parser.add_argument(
        "--out", type=Path, default=Path("grades-canvas.csv"), help="the CSV to write"
    )
    canvas_parser.add_argument(
        "--match",
        choices=MATCH_COLUMNS,
        default="SIS Login ID",
        help="the Canvas column that gets nbgrader's student id (default: SIS Login ID)",
    )
    arguments = parser.parse_args(argv)

    if arguments.verb == "canvas-csv":
        url = arguments.db or f"sqlite:///{(Path('graded') / 'gradebook.db').resolve()}"
        try:
            written = write_canvas_csv(db_url=url, out=arguments.out, match=arguments.match)
        except CanvasCsvError as error:
            print(f"canvas-csv failed: {error}", file=sys.stderr)
            return 1
        print(f"Canvas grades written: {written}")
        return 0

    if arguments.verb == "grade":
        try:
            grade(
                arguments.submissions,
                out=arguments.out,
                root=arguments.root,
                workers=arguments.workers,
                sandbox=not arguments.no_sandbox,
                db_url=arguments.db,
                nbgrader_course=arguments.nbgrader_course,
            )
        except (GradingError, SandboxUnavailable, ValueError, SQLAlchemyError) as error:
            print(f"grading failed: {error}", file=sys.stderr)
            return 1
        return 0

    if arguments.verb == "translate":
        if arguments.preview:
            return _preview(arguments.root, arguments.preview)
        return _translate(arguments.root, check=arguments.check)

    if arguments.verb == "handout":
        try:
            written = build_handout(root=arguments.root, out=arguments.out)
        except HandoutError as error:
            print(f"handout failed: {error}", file=sys.stderr)
            return 1
        print(f"handout written: {written}")
        return 0
    try:
        changed = release(root=arguments.root, check=arguments.check)
    except (SourceNotebookError, ReleaseError) as error:
        print(f"release failed: {error}", file=sys.stderr)
        return 1
    if arguments.check and changed:
        listed = "\n".join(f"  {path}" for path in changed)
        print(f"course/ is out of date; run `make release`:\n{listed}", file=sys.stderr)
        return 1
    verb = "differ" if arguments.check else "written or removed"
    print(f"{len(changed)} file(s) {verb} in course/")
    return 0


def _translate(root: Path, *, check: bool) -> int:
    try:
        if not check:
            for path in update_translations(root=root):
                print(f"updated {path.relative_to(root.resolve())}")
        problems = translation_problems(root=root)
    except (ValueError, OSError) as error:
        print(f"translate failed: {error}", file=sys.stderr)
        return 1
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} translation(s) to write or fix", file=sys.stderr)
    return 1 if check and problems else 0


def _preview(root: Path, unit: str) -> int:
    if unit not in CourseLayout(root).units():
        print(f"translate failed: no unit {unit!r} in {root / 'solutions'}", file=sys.stderr)
        return 1
    for language in TRANSLATIONS:
        path = write_preview(root=root, unit=unit, language=language, out=root / "build/preview")
        print(f"preview written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
