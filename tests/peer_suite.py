"""Runs a peer library's own test suite against tokenmill's module of the same shape: the
tests are unpacked from the peer's source archive into a temporary directory (nothing of the
peer is kept in this repository), a one-file module named after the peer on PYTHONPATH puts
ours in its place (in subprocesses too), and a conftest fails the run at once if the import
finds the real library. Used by `tiktoken_suite.py` and `sentencepiece_suite.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from pathlib import Path


def unpack_tests(archive: str, root: Path, folder: str) -> None:
    """The archive's files under any `<folder>/` directory, as `root/<folder>/...`."""
    marker = f"/{folder}/"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if marker in m.name and m.isfile()]
        for member in members:
            member.name = f"{folder}/" + member.name.split(marker, 1)[1]
        tar.extractall(root, members=members, filter="data")


def run_with_shim(
    root: Path, peer: str, ours: str, shim: str, folder: str, pytest_args: list[str], env: Mapping[str, str] = {}
) -> int:
    """pytest on `root/<folder>` with `import <peer>` giving the module `ours` (`shim` is the
    text of the stand-in module)."""
    (root / "conftest.py").write_text(f"import {peer}\n\nassert {peer}.__name__ == {ours!r}, {peer}.__file__\n")
    (root / "shim").mkdir()
    (root / "shim" / f"{peer}.py").write_text(shim)
    full = dict(os.environ, **env)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "shim"), full.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", folder, *pytest_args]
    return subprocess.call(command, cwd=root, env=full)
