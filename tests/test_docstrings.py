"""The examples in tokenmill's docstrings run and print what they show (examples that need a
file or a model the reader has are marked `+SKIP`): a docstring cannot drift from the API."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import tokenmill

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(tokenmill.__path__, "tokenmill.") if not m.name.endswith("__main__")
)


def test_the_package_has_examples() -> None:
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for name in MODULES for t in finder.find(importlib.import_module(name)))
    assert examples > 30


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (printed above)"
