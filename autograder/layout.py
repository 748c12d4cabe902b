"""Where things live in the course repository: units, their source and learner notebooks.

Example::

    >>> from pathlib import Path
    >>> layout = CourseLayout(Path("."))
    >>> layout.source_notebook("01_leaf_tensors").as_posix()
    'solutions/01_leaf_tensors/01_leaf_tensors.ipynb'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["CourseLayout"]


@dataclass(frozen=True)
class CourseLayout:
    """The fixed layout: ``solutions/UNIT/UNIT.ipynb`` is released to ``course/UNIT/UNIT.ipynb``
    and, in each translation, to ``course/LANG/UNIT/UNIT.ipynb``."""

    root: Path

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def course(self) -> Path:
        return self.root / "course"

    @property
    def nbgrader_config(self) -> Path:
        return self.root / "autograder" / "nbgrader_config.py"

    def units(self) -> list[str]:
        """Every unit with a source notebook, in course order (``01_...``, ``02_...``)."""
        return sorted(
            folder.name
            for folder in self.solutions.iterdir()
            if folder.is_dir() and (folder / f"{folder.name}.ipynb").is_file()
        )

    def source_notebook(self, unit: str) -> Path:
        return self.solutions / unit / f"{unit}.ipynb"

    def learner_notebook(self, unit: str, language: str = "en") -> Path:
        """``course/UNIT/UNIT.ipynb``, or ``course/LANG/UNIT/UNIT.ipynb`` for a translation."""
        folder = self.course if language == "en" else self.course / language
        return folder / unit / f"{unit}.ipynb"
