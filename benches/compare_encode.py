"""Encode the same real documents with tokenmill and its peers; check every output against
tiktoken; print MB/s and tokenmill's ratio to each peer, all from one run.

    python benches/compare_encode.py [--encoding cl100k_base] [--doc-bytes 4096] [--limit BYTES] [--first-pass]
        FILE [FILE ...]

By default each encoder's best of 5 passes over the same documents (caches warm); with
`--first-pass`, one pass over text none has seen, as when streaming a corpus.

Build tokenmill in release mode first (`pip install .`). Peers that are not installed are
skipped: tiktoken, tokenizers (Hugging Face), quicktok-v1, bpe-openai, fastokens, snaptokens,
splintr-rs (imported as `splintr`; the PyPI project `splintr` is another thing), gigatoken (timed
against tokenmill's `encode_ordinary_to_numpy`: both return NumPy arrays). Every peer is checked
against tiktoken on every document before it is timed (with `--first-pass`, after its one pass,
which a check would warm); one that differs is reported, and no figure of it is shown.
fastokens, snaptokens and splintr-rs also encode whole batches on their own Rayon pools (all
cores), timed against tokenmill's `encode_ordinary_batch` on as many threads. (nanotoken does
WordPiece only: it is in compare_wordpiece.py.) The vocabulary files come from PyPI packages:
bpe-openai (cl100k, o200k) and quicktok-v1 (llama3, qwen3: the open models' ranks and special
tokens; their own split patterns from `tokenizer.json`); fastokens and splintr-rs read the same
`.tiktoken` files, snaptokens (and, for llama3 and qwen3, fastokens and splintr-rs) the
`tokenizer.json` tokenmill writes from them.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import importlib.util
import json
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
BatchEncoder = Callable[[list[str]], list[list[int]]]
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
    "fastokens",
    "snaptokens",
    "splintr",
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


def load_documents(files: list[str], doc_bytes: int, limit: int | None = None) -> list[str]:
    """Each file (its first `limit` bytes, if given) cut into documents of `doc_bytes` characters."""
    docs = []
    for f in files:
        with open(f, "rb") as stream:
            text = stream.read(-1 if limit is None else limit).decode("utf-8", errors="replace")
        docs += [text[i : i + doc_bytes] for i in range(0, len(text), doc_bytes)]
    return docs


# cl100k's split as Hugging Face's `Xenova/gpt-4` tokenizer.json spells it (no possessive
# quantifiers): the spelling snaptokens' own scanner recognizes. The exactness check vets it.
HF_CL100K = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def ordinary_json(tok: tokenmill.Tokenizer, encoding: str) -> str:
    """The tokenizer.json tokenmill writes, without its special tokens: encoding it is
    `encode_ordinary` (no special-token text matched), and the ids stay contiguous, which
    snaptokens requires (cl100k's and o200k's special tokens sit past gaps)."""
    path = Path(tempfile.gettempdir()) / f"tokenmill-bench-{encoding}.json"
    tok.to_huggingface(path)
    spec = json.loads(path.read_text(encoding="utf-8"))
    specials = {added["content"] for added in spec["added_tokens"]}
    spec["added_tokens"] = []
    spec["model"]["vocab"] = {t: i for t, i in spec["model"]["vocab"].items() if t not in specials}
    if encoding == "cl100k_base":
        spec["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = HF_CL100K
    return json.dumps(spec)


def peers(
    encoding: str, tok: tokenmill.Tokenizer, pattern: str | None
) -> tuple[dict[str, Encoder], dict[str, BatchEncoder]]:
    """tokenmill and each installed peer, all splitting with `pattern` (or the encoding's own);
    with a pattern of the user's, only the peers that take one (tiktoken, Hugging Face). Also
    the peers' batch encoders (lists of lists of ids, on their own thread pools)."""
    found: dict[str, Encoder] = {"tokenmill": tok.encode_ordinary}
    batches: dict[str, BatchEncoder] = {}
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
        return found, batches
    openai = encoding in ("cl100k_base", "o200k_base")
    try:
        import fastokens

        if openai:  # its own definition of the split (`encoding=`), the same .tiktoken file
            fast = fastokens.Tokenizer.from_tiktoken(str(vocabulary_file(encoding)), encoding=encoding)
        else:
            fast = fastokens.Tokenizer.from_json_str(ordinary_json(tok, encoding))
        found["fastokens"] = lambda text: fast.encode_ordinary(text).ids
        batches["fastokens"] = lambda docs: [e.ids for e in fast.encode_batch(docs)]
    except ImportError:
        pass
    try:
        import snaptokens

        snap = snaptokens.Tokenizer.from_json_str(ordinary_json(tok, encoding))
        found["snaptokens"] = lambda text: snap.encode(text).ids
        batches["snaptokens"] = lambda docs: [e.ids for e in snap.encode_batch(docs)]
    except ImportError:
        pass
    try:
        import splintr

        if not hasattr(splintr, "from_json_bytes"):  # PyPI's `splintr` is a DNN trainer, not splintr-rs
            raise ImportError("splintr is not splintr-rs")
        if openai:  # its own spelling of the split (regexr has no possessive quantifiers)
            own = {"cl100k_base": splintr.CL100K_BASE_PATTERN, "o200k_base": splintr.O200K_BASE_PATTERN}
            splin = splintr.Tokenizer(str(vocabulary_file(encoding)), own[encoding])
        else:
            splin = splintr.from_json_bytes(ordinary_json(tok, encoding).encode())
        found["splintr"] = splin.encode_ordinary
        batches["splintr"] = splin.encode_batch
    except ImportError:
        pass
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
        # The same output mode on both sides: a NumPy array of ids per document. A tokenizer of
        # its own, so a first pass does not find the list run's pieces in its cache.
        found["tokenmill (array)"] = load_tokenizer(encoding, pattern).encode_ordinary_to_numpy
        found["gigatoken (array)"] = giga.encode
    except ImportError:
        pass
    return found, batches


def _ids(out: object) -> list[int]:
    """A list of ids from an encoder's output (a list, or an array)."""
    return out if isinstance(out, list) else [int(i) for i in out]  # type: ignore[attr-defined]


def first_difference(outputs: list[list[int]], expected: list[list[int]], docs: list[str]) -> str | None:
    """Where the first output differs from the expected ids, or None when all are equal."""
    for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        if got != want:
            k = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
            return f"document {i} (token {k}: {got[k : k + 3]} for {want[k : k + 3]}; text from {docs[i][:60]!r})"
    return None


def throughputs(
    encoders: dict[str, Encoder], docs: list[str], total_bytes: int, repeat: int
) -> tuple[dict[str, float], dict[str, float], dict[str, list[float]]]:
    """Best MB/s of each encoder, the median over rounds of the first encoder's speed over
    each one's in the same round, and each one's seconds per round. Rounds interleave the
    encoders, so that a noisy neighbour slows them all alike; the machines swing between quiet
    and busy phases within seconds, so the per-round ratio, of runs a fraction of a second
    apart, is the steadier figure."""
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
    return best, paired, times


def per_round(times: dict[str, list[float]], ours: str, peer: str) -> float:
    """The median over rounds of `ours`'s speed over `peer`'s in the same round."""
    return statistics.median(p / o for o, p in zip(times[ours], times[peer], strict=True))


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
    parser.add_argument("--limit", type=int, help="bytes of each file to use (default: all)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--first-pass",
        action="store_true",
        help="time one pass over text no encoder has seen (use many MB): the speed of streaming a corpus",
    )
    parser.add_argument("--plot", metavar="FILE.svg", help="also draw each encoder's MB/s as a bar chart (matplotlib)")
    args = parser.parse_args()

    tok = load_tokenizer(args.encoding, args.pattern)
    docs = load_documents(args.files, args.doc_bytes, args.limit)
    total = sum(len(d.encode("utf-8")) for d in docs)
    encoders, batch_peers = peers(args.encoding, tok, args.pattern)
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

    def drop_inexact() -> None:
        """Print, and drop from `encoders` and `batch_peers`, every peer that differs from
        tiktoken on some document (tokenmill's own encoders are flagged but kept)."""
        for name, encode in list(encoders.items()):
            differs = first_difference([_ids(encode(d)) for d in docs], expected, docs)
            if differs:
                print(f"  {name:<17} DIFFERS from tiktoken at {differs}; not timed")
                if not name.startswith("tokenmill"):
                    del encoders[name]
        for name, encode_batch in list(batch_peers.items()):
            differs = first_difference([_ids(ids) for ids in encode_batch(docs)], expected, docs)
            if differs:
                print(f"  {name} encode_batch DIFFERS from tiktoken at {differs}; not timed")
                del batch_peers[name]

    paired: dict[str, float] = {}
    if args.first_pass:
        # Checked after the one pass, which checking first would warm; the figures of a peer
        # that differs are not shown.
        rates = first_pass_throughputs(encoders, docs, total)
        drop_inexact()
    else:
        drop_inexact()  # only the encoders whose every output equals tiktoken's are timed
        rates, paired, _ = throughputs(encoders, docs, total, args.repeat)
    rates = {name: rates[name] for name in encoders}
    paired = {name: ratio for name, ratio in paired.items() if name in encoders}
    for name in encoders:
        print(f"  {name:<17} {rates[name]:7.1f} MB/s  exact")
    # The same rounds time a control: SHA-256 over 64 MB on 1 and 2 threads (hashlib releases
    # the GIL), work that shares nothing between threads. What it reaches is what this machine
    # gives a second thread at the moment; when a neighbour holds the second core, both drop.
    hashing = ThreadPoolExecutor(2)
    blocks = [os.urandom(1 << 16)] * 1024

    def hash_blocks(n: int) -> None:
        list(hashing.map(lambda part: [hashlib.sha256(b).digest() for b in part], [blocks[k::n] for k in range(n)]))

    cores = os.cpu_count() or 2
    batch, batch_paired, batch_times = throughputs(
        {
            f"{n} thread(s)": lambda _, n=n: tok.encode_ordinary_batch(docs, num_threads=n)
            for n in dict.fromkeys((1, 2, cores))  # on all cores too, as the peers' pools run
        }
        | {f"control, {n} thread(s)": lambda _, n=n: hash_blocks(n) for n in (1, 2)}
        | {name: lambda _, e=encode_batch: e(docs) for name, encode_batch in batch_peers.items()},
        [""],
        total,
        args.repeat,
    )
    hashing.shutdown()
    for name in ("1 thread(s)", "2 thread(s)"):
        print(f"  tokenmill encode_batch, {name}: {batch[name]:7.1f} MB/s")
    for name in batch_peers:
        print(f"  {name} encode_batch ({cores} cores, its own pool): {batch[name]:7.1f} MB/s  exact")
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
    if args.plot:
        title = f"{args.encoding}, {total / 1e6:.1f} MB of {', '.join(os.path.basename(f) for f in args.files)}"
        plot_rates(rates, args.plot, title + (", first pass" if args.first_pass else f", best of {args.repeat}"))
    if batch_peers:
        ours = f"{cores} thread(s)"
        print(
            f"  tokenmill encode_ordinary_batch ({cores} threads, {batch[ours]:.1f} MB/s) / peer encode_batch: "
            + ", ".join(
                f"{n} {batch[ours] / batch[n]:.2f}x (per-round median {per_round(batch_times, ours, n):.2f}x)"
                for n in batch_peers
            )
        )


def plot_rates(rates: dict[str, float], path: str, title: str) -> None:
    """Each exact encoder's MB/s as a horizontal bar, tokenmill's highlighted, its ratio to
    tokenmill written beside it (the figure the benchmarks page shows)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(rates, key=rates.__getitem__)
    ours = rates["tokenmill"]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.2))
    colors = ["#d95f02" if n.startswith("tokenmill") else "#7570b3" for n in names]
    ax.barh(names, [rates[n] for n in names], color=colors)
    for k, name in enumerate(names):
        ax.text(rates[name], k, f" {rates[name]:.0f} MB/s ({ours / rates[name]:.2f}×)", va="center", fontsize=8)
    ax.set_xlabel("MB/s, one thread (tokenmill's speed over each in brackets)")
    ax.set_title(title, fontsize=9)
    ax.set_xlim(0, max(rates.values()) * 1.35)
    fig.tight_layout()
    fig.savefig(path)
    print(f"  plot: {path}")


if __name__ == "__main__":
    main()
