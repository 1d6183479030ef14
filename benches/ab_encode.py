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
import statistics
from pathlib import Path

import lockstep

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
    benches = str(Path(__file__).resolve().parent)
    times = lockstep.run(args.old, args.new, WORKER, [benches, args.encoding, *args.files], args.rounds, args.cpu)
    for name in ("old", "new"):
        best, median = min(times[name]), statistics.median(times[name])
        print(f"{name}: best {total / best / 1e6:.1f} MB/s, median {total / median / 1e6:.1f} MB/s")
    paired = statistics.median(o / n for o, n in zip(times["old"], times["new"], strict=True))
    print(f"new / old speed, median of {args.rounds} paired passes: {paired:.3f}")


if __name__ == "__main__":
    main()
