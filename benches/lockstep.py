"""Lock-step A/B runs of two builds of tokenmill's core, shared by `ab_encode.py` and `ab_train.py`.

Two worker processes, one per build, each import a copy of the Python package with its own core,
get ready (print "ready"), then time one unit of work per line they read from stdin and print
the seconds. The workers take turns, alternating who goes first, so that each pair of times was
taken within moments of each other on a machine whose speed swings within seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def parser(doc: str | None) -> argparse.ArgumentParser:
    """The arguments every A/B script takes: the two builds' cores, then the files."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("files", nargs="+")
    return p


def start_worker(core: Path, home: Path, script: str, args: list[str], cpu: int | None = None) -> subprocess.Popen[str]:
    """Runs `script` with `args` in a copy of the package (made under `home`) whose core is `core`,
    pinned to core `cpu` if given; returns once it is ready."""
    package = Path(__file__).resolve().parent.parent / "python" / "tokenmill"
    shutil.copytree(package, home / "tokenmill", ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    shutil.copy(core, home / "tokenmill" / "_core.abi3.so")
    command = [sys.executable, "-c", script, *args]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    worker = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(home))
    )
    assert worker.stdout is not None and worker.stdout.readline().strip() == "ready", "worker failed to start"
    return worker


def run(
    old: Path, new: Path, script: str, args: list[str], rounds: int, cpu: int | None = None
) -> dict[str, list[float]]:
    """The seconds each build's worker took per round, as {"old": [...], "new": [...]}."""
    with tempfile.TemporaryDirectory() as tmp:
        workers = {}
        for name, core in (("old", old), ("new", new)):
            (Path(tmp) / name).mkdir()
            workers[name] = start_worker(core, Path(tmp) / name, script, args, cpu)
        times: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(rounds):
            for name in ("old", "new") if r % 2 else ("new", "old"):
                w = workers[name]
                assert w.stdin is not None and w.stdout is not None
                w.stdin.write("go\n")
                w.stdin.flush()
                times[name].append(float(w.stdout.readline()))
        for w in workers.values():
            assert w.stdin is not None
            w.stdin.close()
            w.wait()
    return times
