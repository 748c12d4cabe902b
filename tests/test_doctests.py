"""Every docstring example in the support packages runs and shows what it claims."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.conftest import ROOT

MODULES = sorted(
    ".".join(part for part in path.relative_to(ROOT).with_suffix("").parts if part != "__init__")
    for package in ("autograder", "gradgraph")
    for path in (ROOT / package).rglob("*.py")
    if path.name not in {"nbgrader_config.py", "__main__.py"}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
