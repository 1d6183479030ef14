"""`tokenmill count` and `tokenmill encode-corpus`: the corpus-scale commands (one machine or a
Ray cluster), and reading `.counts` files for `tokenmill train`."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

from tokenmill import ConfigError
from tokenmill.counting import WordCounts, count_words

COUNTS_MAGIC = b"TMWC"
_ADDRESS = re.compile(r"(?:ray://)?\[?[A-Za-z0-9_.:\-]+\]?:[0-9]+|ray://[A-Za-z0-9_.\-]+|auto|local")


def add_parsers(sub: Any) -> None:
    c = sub.add_parser(
        "count",
        help="count words (on this machine or a Ray cluster) into a .counts file",
        description=(
            "Count the words of a corpus into a .counts file for `tokenmill train`: on this machine, or with "
            "--ray on a Ray cluster (one task per shard; shards must be readable by every node)."
        ),
    )
    c.add_argument("corpus", nargs="*", help="files, directories or globs (.txt, .gz, .zst, .jsonl, .parquet)")
    c.add_argument("-o", "--output", required=True, help="where to save the counts, e.g. corpus.counts")
    _add_ray(c)
    c.add_argument("--pattern", default="cl100k", help="pre-tokenizer preset or regex (default cl100k)")
    c.add_argument("--normalizer", default="none", help="e.g. nfc, nfkc+lowercase (default none)")
    c.add_argument("--special-token", action="append", help="a special token never split (repeatable)")
    c.add_argument("--char-level", action="store_true", help="count for character-level BPE")
    c.add_argument("--text-field", help="JSON Lines field / Parquet column holding the text (Parquet: default text)")
    c.add_argument("--max-memory", help="prune the rarest words to stay within this size, e.g. 8GB")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    c.set_defaults(run=cmd_count)

    e = sub.add_parser(
        "encode-corpus",
        help="encode a corpus into token shards for training",
        description=(
            "Encode a corpus into token shard files (.bin ids, .idx document starts, manifest.json; layout in "
            "tokenmill.shards), one shard per input file. Run again after an interruption to resume."
        ),
    )
    e.add_argument("corpus", nargs="*", help="files, directories or globs (.txt, .gz, .zst, .jsonl, .parquet)")
    e.add_argument("-t", "--tokenizer", required=True, help="tokenizer file")
    e.add_argument("-o", "--output", required=True, help="output directory")
    _add_ray(e)
    e.add_argument("--text-field", help="JSON Lines field / Parquet column holding the text (Parquet: default text)")
    e.add_argument(
        "--separator",
        type=_unescaped,
        help="text files hold documents separated by this (\\n, \\t allowed; default: a file is a document)",
    )
    e.add_argument("--end-of-document", help="token (or id) after each document (default <|endoftext|>)")
    e.add_argument("--allow-special", action="store_true", help="encode special-token text as special tokens")
    e.add_argument("--sequence-length", type=int, help="also write packed rows of this length with cu_seqlens")
    e.add_argument("--threads", type=int, help="encoding threads (default: all cores; with --ray: per task)")
    e.add_argument("--overwrite", action="store_true", help="discard shards already in the output directory")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    e.set_defaults(run=cmd_encode_corpus)


def _unescaped(value: str) -> str:
    r"""A separator as typed on a command line: `\n`, `\t` and `\\` written as escapes."""
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def _add_ray(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run on a Ray cluster: host:port, ray://host:port or auto (default: RAY_ADDRESS or a local Ray)",
    )


def _ray_address(args: argparse.Namespace) -> tuple[bool, str | None]:
    """(use Ray, address). `--ray 'shards/*.parquet'` puts the corpus where an address may
    stand: what does not look like an address goes back to the corpus."""
    if args.ray is None:
        return False, None
    if args.ray and not _ADDRESS.fullmatch(args.ray):
        args.corpus.insert(0, args.ray)
        return True, None
    return True, args.ray or None


def _corpus(args: argparse.Namespace) -> list[str]:
    if not args.corpus:
        raise ConfigError("give the corpus: files, directories or globs")
    return list(args.corpus)


def cmd_count(args: argparse.Namespace) -> int:
    on_ray, address = _ray_address(args)
    corpus = _corpus(args)
    out = Path(args.output)
    if out.is_dir() or not out.parent.is_dir():
        raise ConfigError(f"{args.output}: give a file name in an existing directory")
    options: dict[str, Any] = {
        "pattern": args.pattern,
        "normalizer": args.normalizer,
        "special_tokens": args.special_token or (),
        "byte_level": not args.char_level,
        "text_field": args.text_field,
        "max_memory": args.max_memory,
        "show_progress": False if args.no_progress else None,
    }
    start = time.perf_counter()
    if on_ray:
        from tokenmill.distributed import count_words_on_ray

        counts = count_words_on_ray(corpus, address=address, **options)
    else:
        counts = count_words(corpus, **options)
    seconds = time.perf_counter() - start
    counts.save(out)
    print(f"text            {counts.text_bytes / 1e6:.1f} MB")
    print(f"unique words    {len(counts)} (total {counts.total})")
    if counts.dropped_words:
        print(f"pruned          {counts.dropped_words} words, count {counts.dropped_count}")
    print(f"time            {seconds:.2f} s" + (" on Ray" if on_ray else ""))
    print(f"saved           {out} (train with: tokenmill train {out})")
    return 0


def cmd_encode_corpus(args: argparse.Namespace) -> int:
    from tokenmill.tokenizer import Tokenizer

    on_ray, address = _ray_address(args)
    corpus = _corpus(args)
    tok = Tokenizer.load(args.tokenizer)
    eod: int | str | None = args.end_of_document
    if isinstance(eod, str) and eod.isascii() and eod.isdigit():
        eod = int(eod)
    options: dict[str, Any] = {
        "text_field": args.text_field,
        "separator": args.separator,
        "end_of_document": eod,
        "allowed_special": "all" if args.allow_special else (),
        "sequence_length": args.sequence_length,
        "overwrite": args.overwrite,
        "show_progress": False if args.no_progress else None,
    }
    start = time.perf_counter()
    if on_ray:
        from tokenmill.distributed import encode_corpus_on_ray

        manifest = encode_corpus_on_ray(
            corpus, tok, args.output, address=address, cpus_per_task=args.threads or 1, **options
        )
    else:
        from tokenmill.shards import encode_corpus

        manifest = encode_corpus(corpus, tok, args.output, num_threads=args.threads, **options)
    seconds = time.perf_counter() - start
    print(f"shards          {len(manifest['shards'])} in {args.output} ({manifest['dtype']})")
    print(f"documents       {manifest['documents']}")
    print(f"tokens          {manifest['tokens']} ({manifest['tokens'] / max(seconds, 1e-9):,.0f} tokens/s)")
    print(f"time            {seconds:.2f} s")
    return 0


def is_counts_file(name: str) -> bool:
    try:
        with open(name, "rb") as f:
            return f.read(4) == COUNTS_MAGIC
    except OSError:
        return False


def load_counts(names: list[str]) -> WordCounts:
    """The sum of `.counts` files (made the same way)."""
    total = WordCounts.load(names[0])
    for name in names[1:]:
        total = total + WordCounts.load(name)
    return total


def counts_only(corpus: list[str]) -> bool:
    """True when every corpus item names a `.counts` file (train on the counts); a mix of counts
    and text is an error."""
    flags = [is_counts_file(c) for c in corpus]
    if any(flags) and not all(flags):
        raise ConfigError("give either .counts files or text files to train on, not both")
    if flags and all(flags):
        print(f"training on word counts from {len(corpus)} file(s)", file=sys.stderr)
    return bool(flags) and all(flags)
