"""A/B two builds of tokenmill's core on encoding, in lock-step.

    python benches/ab_encode.py OLD.so NEW.so [--encoding cl100k_base] [--rounds 40] [--cpu 1] FILE [FILE ...]

Why lock-step: the shared machines swing between quiet and busy phases (the same build at 60 or
95 MB/s) within seconds, so alternating whole runs cannot tell a 5% change. Here two worker
processes, one per build and both pinned to one core, take turns encoding the same ~4 KB
documents once each; the figure to read is the median of the paired ratios (each pair ran
within a fraction of a second of each other).

Build each variant with `maturin develop --release` and copy `python/tokenmill/_core.abi3.so`
aside first; each worker gets a copy of the Python package with its own core.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from compare_encode import load_documents, load_tokenizer
encode = load_tokenizer(sys.argv[2]).encode_ordinary
docs = load_documents(sys.argv[3:], 4096)
for d in docs:
    encode(d)
print("ready", flush=True)
for _ in sys.stdin:
    start = time.perf_counter()
    for d in docs:
        encode(d)
    print(time.perf_counter() - start, flush=True)
"""


def start_worker(core: Path, home: Path, args: argparse.Namespace) -> subprocess.Popen[str]:
    """A worker importing a copy of the package whose core is `core`."""
    package = Path(__file__).resolve().parent.parent / "python" / "tokenmill"
    shutil.copytree(package, home / "tokenmill", ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    shutil.copy(core, home / "tokenmill" / "_core.abi3.so")
    benches = str(Path(__file__).resolve().parent)
    command = ["taskset", "-c", str(args.cpu), sys.executable, "-c", WORKER, benches, args.encoding, *args.files]
    worker = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(home))
    )
    assert worker.stdout is not None and worker.stdout.readline().strip() == "ready", "worker failed to start"
    return worker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--cpu", type=int, default=1, help="the core both workers run on")
    args = parser.parse_args()
    total = sum(len(Path(f).read_text(encoding="utf-8", errors="replace").encode()) for f in args.files)
    with tempfile.TemporaryDirectory() as tmp:
        workers = {}
        for name in ("old", "new"):
            (Path(tmp) / name).mkdir()
            workers[name] = start_worker(getattr(args, name), Path(tmp) / name, args)
        times: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(args.rounds):
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
    for name in ("old", "new"):
        best, median = min(times[name]), statistics.median(times[name])
        print(f"{name}: best {total / best / 1e6:.1f} MB/s, median {total / median / 1e6:.1f} MB/s")
    paired = statistics.median(o / n for o, n in zip(times["old"], times["new"], strict=True))
    print(f"new / old speed, median of {args.rounds} paired passes: {paired:.3f}")


if __name__ == "__main__":
    main()
