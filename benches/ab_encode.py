"""A/B two builds of tokenmill's core on encoding, in lock-step.

    python benches/ab_encode.py OLD.so NEW.so [--encoding E] [--pattern REGEX] [--rounds 40] [--cpu 1]
        [--first-pass] FILE [FILE ...]

Why lock-step: the shared machines swing between quiet and busy phases (the same build at 60 or
95 MB/s) within seconds, so alternating whole runs cannot tell a 5% change. Here two worker
processes, one per build and both pinned to one core, take turns encoding the same ~4 KB
documents once each; the figure to read is the median of the paired ratios (each pair ran
within a fraction of a second of each other). With `--first-pass`, each round loads the
tokenizer afresh and times one pass over text it has not seen (use several MB).

Build each variant with `maturin develop --release` and copy `python/tokenmill/_core.abi3.so`
aside first; each worker gets a copy of the Python package with its own core.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import lockstep

WORKER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from compare_encode import load_documents, load_tokenizer
encode = load_tokenizer(sys.argv[2], sys.argv[3] or None).encode_ordinary
docs = load_documents(sys.argv[4:], 4096)
for d in docs:
    encode(d)
print("ready", flush=True)
for _ in sys.stdin:
    start = time.perf_counter()
    for d in docs:
        encode(d)
    print(time.perf_counter() - start, flush=True)
"""


# `--first-pass`: each round loads the tokenizer afresh (untimed), so its piece cache and the
# backtracker's compatibility table start empty, as when a corpus is streamed through once.
WORKER_FIRST_PASS = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from compare_encode import load_documents, load_tokenizer
docs = load_documents(sys.argv[4:], 4096)
print("ready", flush=True)
for _ in sys.stdin:
    encode = load_tokenizer(sys.argv[2], sys.argv[3] or None).encode_ordinary
    encode("warm-up: build lazy tables 日本語のテキストを処理します")
    start = time.perf_counter()
    for d in docs:
        encode(d)
    print(time.perf_counter() - start, flush=True)
"""


def main() -> None:
    parser = lockstep.parser(__doc__)
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--pattern", default="", help="split with this regex instead of the encoding's own")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--cpu", type=int, default=1, help="the core both workers run on")
    parser.add_argument(
        "--first-pass", action="store_true", help="time one pass with a freshly loaded tokenizer each round"
    )
    args = parser.parse_args()
    total = sum(len(Path(f).read_text(encoding="utf-8", errors="replace").encode()) for f in args.files)
    benches = str(Path(__file__).resolve().parent)
    script = WORKER_FIRST_PASS if args.first_pass else WORKER
    worker_args = [benches, args.encoding, args.pattern, *args.files]
    times = lockstep.run(args.old, args.new, script, worker_args, args.rounds, args.cpu)
    for name in ("old", "new"):
        best, median = min(times[name]), statistics.median(times[name])
        print(f"{name}: best {total / best / 1e6:.1f} MB/s, median {total / median / 1e6:.1f} MB/s")
    paired = statistics.median(o / n for o, n in zip(times["old"], times["new"], strict=True))
    print(f"new / old speed, median of {args.rounds} paired passes: {paired:.3f}")


if __name__ == "__main__":
    main()
