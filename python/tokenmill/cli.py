"""The `tokenmill` command: train, encode, decode."""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

from tokenmill import OutOfVocabularyError, TokenmillError
from tokenmill.corpus import default_corpus_files, resolve_files
from tokenmill.counting import count_words
from tokenmill.tokenizer import Tokenizer
from tokenmill.training import train_bpe

SAMPLE = "The quick brown fox jumps over the lazy dog: def tokenize(text): return text.split()  # 12345"


def _held_out(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """Every 50th file (at least one, when there are two or more) is kept back for evaluation."""
    if len(files) < 2:
        return files, []
    held = files[::50] if len(files) >= 100 else files[-1:]
    keep = [f for f in files if f not in set(held)]
    return keep, held


def _read_head(path: Path, n: int) -> bytes:
    """Up to `n` bytes of a file's text, without reading the rest: a corpus file may be a
    gigabyte on one line. Compressed files are decompressed; .zst needs `zstandard`, else it
    gives no sample."""
    if path.suffix == ".gz":
        with gzip.open(path) as f:
            return f.read(n)
    if path.suffix in (".zst", ".zstd"):
        try:
            import zstandard
        except ImportError:
            return b""
        with open(path, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as f:
            return f.read(n)
    with open(path, "rb") as f:
        return f.read(n)


def _read_sample(files: list[Path], limit: int = 4 << 20) -> str:
    parts, size = [], 0
    for f in files:
        data = _read_head(f, limit - size)
        parts.append(data.decode("utf-8", errors="replace"))
        size += len(data)
        if size >= limit:
            break
    return "".join(parts)


def _count_tokens(tok: Tokenizer, text: str) -> int | None:
    """Tokens in `text`, or None when a character-level vocabulary without `unk_token` cannot
    encode it (characters unseen in training or left out by --limit-alphabet)."""
    try:
        return len(tok.encode_ordinary(text))
    except OutOfVocabularyError:
        return None


def cmd_train(args: argparse.Namespace) -> int:
    if args.corpus:
        files = resolve_files(list(args.corpus))
        assert files is not None
        source = f"{len(files)} file(s)"
    else:
        files = default_corpus_files()
        source = f"Python standard library sources ({len(files)} files)"
    train_files, eval_files = _held_out(files)
    print(f"training on {source}", file=sys.stderr)
    progress = False if args.no_progress else None
    start = time.perf_counter()
    # Counted as a step of its own so that the summary can say how many unique words there were.
    counts = count_words(
        train_files,
        pattern=args.pattern,
        normalizer=args.normalizer,
        special_tokens=args.special_token or (),
        byte_level=not args.char_level,
        show_progress=progress,
    )
    tok = train_bpe(
        counts,
        vocab_size=None if args.num_merges is not None else args.vocab_size,
        num_merges=args.num_merges,
        pattern=args.pattern,
        normalizer=args.normalizer,
        byte_level=not args.char_level,
        end_of_word_suffix=args.end_of_word_suffix,
        unk_token=args.unk_token,
        special_tokens=args.special_token or (),
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        limit_alphabet=args.limit_alphabet,
        initial_alphabet=args.initial_alphabet or "",
        show_progress=progress,
    )
    seconds = time.perf_counter() - start
    out = Path(args.output)
    tok.save(out)
    listing = out.with_suffix(".vocab.txt")
    tok.save_vocab(listing)

    corpus_bytes = sum(f.stat().st_size for f in train_files)
    eval_text = _read_sample(eval_files) if eval_files else _read_sample(train_files, 1 << 20)
    eval_label = "held-back text" if eval_files else "training text (one file: nothing held back)"
    n_tokens = _count_tokens(tok, eval_text) if eval_text else 0
    if n_tokens is None:
        bpt_line = f"n/a: {eval_label} has characters outside the alphabet (set --unk-token)"
    else:
        bpt = len(eval_text.encode("utf-8")) / n_tokens if n_tokens else float("nan")
        bpt_line = f"{bpt:.3f} on {eval_label}"
    asked = args.num_merges if args.num_merges is not None else args.vocab_size
    learned = len(tok.merges) if args.num_merges is not None else tok.vocab_size
    # Training stops early, without error, when no pair is left that may be merged.
    early = f"; stopped early, no pair left that may be merged; asked for {asked}" if learned < asked else ""
    print(f"corpus          {corpus_bytes / 1e6:.1f} MB in {len(train_files)} file(s)")
    print(f"unique words    {len(counts)} (total {counts.total})")
    print(f"vocab size      {tok.vocab_size} ({len(tok.merges)} merges{early})")
    print(f"time            {seconds:.2f} s")
    print(f"bytes/token     {bpt_line}")
    try:
        sample: object = tok.tokenize(SAMPLE)
    except OutOfVocabularyError:
        sample = "n/a (characters outside the alphabet)"
    print(f"sample          {sample}")
    print(f"saved           {out} (and {listing} for people)")
    return 0


def _read_text(args: argparse.Namespace) -> str:
    if args.file:
        return Path(args.file).read_text(encoding="utf-8")
    if args.text is not None:
        return str(args.text)
    return sys.stdin.read()


def cmd_encode(args: argparse.Namespace) -> int:
    tok = Tokenizer.load(args.tokenizer)
    text = _read_text(args)
    if args.tokens:
        print("\n".join(repr(t) for t in tok.tokenize(text)))
    else:
        allowed = "all" if args.allow_special else frozenset()
        print(" ".join(map(str, tok.encode(text, allowed_special=allowed))))
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    tok = Tokenizer.load(args.tokenizer)
    words = args.ids if args.ids else sys.stdin.read().split()
    try:
        ids = [int(w) for w in words]
    except ValueError as e:
        raise TokenmillError(f"ids must be integers: {e}") from None
    sys.stdout.write(tok.decode(ids, errors=args.errors))
    sys.stdout.write("\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tokenmill", description="Train, encode and decode subword tokenizers.")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser(
        "train",
        help="train a BPE tokenizer",
        description=(
            "Train a BPE tokenizer on files or globs; with no corpus, on this Python's standard-library sources."
        ),
    )
    t.add_argument("corpus", nargs="*", help="files, directories or globs (quote globs for recursion: 'data/**/*.txt')")
    t.add_argument("--vocab-size", type=int, default=8192, help="tokens in all, special tokens included (default 8192)")
    t.add_argument("--num-merges", type=int, help="number of merges instead of --vocab-size")
    t.add_argument(
        "--pattern", default="cl100k", help="gpt2, cl100k, o200k, whitespace, none or a regex (default cl100k)"
    )
    t.add_argument("--normalizer", default="none", help="e.g. nfc, nfkc+lowercase (default none)")
    t.add_argument("--char-level", action="store_true", help="character-level instead of byte-level BPE")
    t.add_argument("--end-of-word-suffix", help="end-of-word symbol for character-level BPE, e.g. '</w>'")
    t.add_argument("--unk-token", help="token for unseen characters (character-level)")
    t.add_argument("--special-token", action="append", help="a special token (repeatable); ids 0, 1, … in order")
    t.add_argument("--min-frequency", type=int, default=1, help="never merge pairs seen fewer times")
    t.add_argument("--max-token-length", type=int, help="longest token to create")
    t.add_argument("--limit-alphabet", type=int, help="keep at most N characters, the most frequent (character-level)")
    t.add_argument(
        "--initial-alphabet", metavar="CHARS", help="characters always in the alphabet, e.g. 'abcäöü' (character-level)"
    )
    t.add_argument("-o", "--output", default="tokenizer.json", help="where to save (default tokenizer.json)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    t.set_defaults(run=cmd_train)

    e = sub.add_parser("encode", help="text → ids", description="Encode text (argument, --file or stdin) to ids.")
    e.add_argument("-t", "--tokenizer", required=True, help="tokenizer file from `tokenmill train`")
    e.add_argument("text", nargs="?", help="text to encode (default: read stdin)")
    e.add_argument("-f", "--file", help="encode this file")
    e.add_argument("--tokens", action="store_true", help="print tokens, one per line, instead of ids")
    e.add_argument("--allow-special", action="store_true", help="encode special-token text as special tokens")
    e.set_defaults(run=cmd_encode)

    d = sub.add_parser("decode", help="ids → text", description="Decode ids (arguments or stdin) to text.")
    d.add_argument("-t", "--tokenizer", required=True, help="tokenizer file from `tokenmill train`")
    d.add_argument("ids", nargs="*", help="token ids (default: read stdin)")
    d.add_argument("--errors", default="replace", help="how to treat invalid UTF-8, as bytes.decode (default replace)")
    d.set_defaults(run=cmd_decode)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (TokenmillError, OSError) as e:
        print(f"tokenmill: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tokenmill: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
