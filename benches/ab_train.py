"""A/B two builds of tokenmill's core on BPE training, in lock-step.

    python benches/ab_train.py OLD.so NEW.so [--pattern cl100k] [--vocab-size 32768] [--rounds 10]
        [--fresh] FILE [FILE ...]

As in `ab_encode.py`: the shared machines swing between quiet and busy phases within seconds, so
two worker processes, one per build, each count the files once and then take turns training on
the same word counts; the figure to read is the median of the paired time ratios. Training runs
on all cores in both. Each worker trains repeatedly in one process, so its pages are already
faulted in after the first run: this measures the trainer's own work; `compare_train.py` (one
fresh process per trainer) measures what a user waits for.

Build each variant with `maturin develop --release` and copy `python/tokenmill/_core.abi3.so`
aside first; each worker gets a copy of the Python package with its own core.
"""

from __future__ import annotations

import statistics

import lockstep

WORKER = r"""
import sys, time, tokenmill
pattern, vocab_size, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
counts = tokenmill.count_words(files, pattern=pattern, show_progress=False)
print("ready", flush=True)
for _ in sys.stdin:
    start = time.perf_counter()
    tokenmill.train_bpe(counts, vocab_size=vocab_size, show_progress=False)
    print(time.perf_counter() - start, flush=True)
"""


def main() -> None:
    parser = lockstep.parser(__doc__)
    parser.add_argument("--pattern", default="cl100k")
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--fresh", action="store_true", help="new worker processes for every round")
    args = parser.parse_args()
    worker_args = [args.pattern, str(args.vocab_size), *args.files]
    if args.fresh:
        times: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for name, seconds in lockstep.run(args.old, args.new, WORKER, worker_args, 1).items():
                times[name] += seconds
    else:
        times = lockstep.run(args.old, args.new, WORKER, worker_args, args.rounds)
    for name in ("old", "new"):
        print(f"{name}: best {min(times[name]):.3f} s, median {statistics.median(times[name]):.3f} s")
    paired = statistics.median(n / o for o, n in zip(times["old"], times["new"], strict=True))
    print(f"new / old time, median of {args.rounds} paired runs: {paired:.3f}")


if __name__ == "__main__":
    main()
