"""Command line: ``python -m autograder release [--check]``. Each verb forwards to one module."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.release import ReleaseError, release
from autograder.source_check import SourceNotebookError


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
    arguments = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
