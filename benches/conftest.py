"""Benchmarks run against a release build (`pip install .`), never in the normal test run:

    pytest benches/ --benchmark-only [--corpus FILE]

Without --corpus they use the standard-library sources, which exist on every machine.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--corpus", default=None, help="text file to benchmark on (default: stdlib sources)")


@pytest.fixture(scope="session")
def corpus_files(request: pytest.FixtureRequest) -> list[Path]:
    path = request.config.getoption("--corpus")
    if path:
        return [Path(path)]
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)


@pytest.fixture(scope="session")
def corpus_text(corpus_files: list[Path]) -> str:
    parts, size = [], 0
    for f in corpus_files:
        t = f.read_text(encoding="utf-8", errors="replace")
        parts.append(t)
        size += len(t)
        if size > 8_000_000:
            break
    return "".join(parts)
