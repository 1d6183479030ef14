"""Model inputs for a batch of real documents — a BOS template, truncation to 512 tokens with a
stride of 128 and overflowing windows, padding to the longest, offsets — with tokenmill, Hugging
Face `tokenizers` (`encode_batch` with the same settings) and `transformers`' fast tokenizer
(`__call__(..., return_tensors="np")`); checks the outputs are equal; prints ratios from one run.

    python benches/compare_model_inputs.py [--threads 2] [--doc-bytes 4096] [--docs 2000] FILE

All three run on the same vocabulary (cl100k_base, from the bpe-openai package, written as a
`tokenizer.json` by tokenmill) and on `--threads` threads.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--doc-bytes", type=int, default=4096)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    # Hugging Face's thread pool reads this once, at first use.
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    import numpy as np
    from tokenizers import Tokenizer as HFTokenizer
    from transformers import PreTrainedTokenizerFast

    import tokenmill

    sys.path.insert(0, str(Path(__file__).parent))
    from compare_encode import vocabulary_file

    text = Path(args.file).read_text(encoding="utf-8", errors="replace")
    docs = [text[i : i + args.doc_bytes] for i in range(0, len(text), args.doc_bytes)][: args.docs]
    size = sum(len(d.encode()) for d in docs)

    tok = tokenmill.Tokenizer.from_tiktoken(vocabulary_file("cl100k_base"), pattern="cl100k_base")
    tok.set_template("<|endoftext|> $A", "<|endoftext|> $A <|endoftext|>:1 $B:1")
    path = Path(tempfile.mkdtemp()) / "tokenizer.json"
    tok.to_huggingface(path)
    hf = HFTokenizer.from_file(str(path))
    hf.enable_truncation(512, stride=128)
    hf.enable_padding(pad_id=100257, pad_token="<|endoftext|>")
    fast = PreTrainedTokenizerFast(tokenizer_object=HFTokenizer.from_file(str(path)), pad_token="<|endoftext|>")
    call = dict(padding=True, truncation=True, max_length=512, stride=128, return_overflowing_tokens=True)
    call.update(return_offsets_mapping=True, return_tensors="np")

    def ours():  # type: ignore[no-untyped-def]
        return tok(docs, num_threads=args.threads, **call)

    def hf_batch():  # type: ignore[no-untyped-def]
        return hf.encode_batch(docs)

    def transformers_call():  # type: ignore[no-untyped-def]
        return fast(docs, **call)

    # Equal outputs first: transformers' arrays, and Hugging Face's encodings row by row.
    a, b = ours(), transformers_call()
    for key in ("input_ids", "attention_mask", "offset_mapping", "overflow_to_sample_mapping"):
        assert np.array_equal(a[key], b[key]), key
    rows = [e for enc in hf_batch() for e in [enc, *enc.overflowing]]
    assert len(rows) == len(a["input_ids"]) and all(
        list(r.ids) == list(x) for r, x in zip(rows[:50], a["input_ids"][:50], strict=True)
    ), "tokenizers rows differ"
    print(
        f"{len(docs)} documents, {size / 1e6:.1f} MB, {len(rows)} rows of {a['input_ids'].shape[1]} tokens; "
        f"{args.threads} threads; outputs equal"
    )

    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, run in (("tokenmill", ours), ("tokenizers", hf_batch), ("transformers", transformers_call)):
            start = time.perf_counter()
            run()
            best[name] = min(best.get(name, 1e9), time.perf_counter() - start)
    for name, seconds in best.items():
        ratio = "" if name == "tokenmill" else f"  (tokenmill {seconds / best['tokenmill']:.1f}x faster)"
        print(f"  {name:<13} {size / seconds / 1e6:7.1f} MB/s{ratio}")


if __name__ == "__main__":
    main()
