"""The `tokenmill` command: train, encode, decode, analyze; count and encode-corpus (`cli_corpus.py`)."""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time
from pathlib import Path

from tokenmill import ConfigError, CorpusError, OutOfVocabularyError, TokenIdError, TokenmillError, __version__
from tokenmill.cli_corpus import add_parsers as add_corpus_parsers
from tokenmill.cli_corpus import counts_only, load_counts
from tokenmill.corpus import default_corpus_files, expand_paths
from tokenmill.counting import count_words
from tokenmill.tokenizer import Tokenizer
from tokenmill.training import check_options, train_bpe
from tokenmill.training_unigram import train_unigram
from tokenmill.training_wordpiece import train_wordpiece

SAMPLE = "The quick brown fox jumps over the lazy dog: def tokenize(text): return text.split()  # 12345"


def _held_out(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """Every 50th file (at least one, when there are two or more) is kept back for evaluation."""
    if len(files) < 2:
        return files, []
    held = files[::50] if len(files) >= 100 else files[-1:]
    keep = [f for f in files if f not in set(held)]
    return keep, held


class SampleUnavailable(Exception):
    """The evaluation sample cannot be read here (says why)."""


def _read_head(path: Path, n: int) -> bytes:
    """Up to `n` bytes of a file's text, without reading the rest: a corpus file may be a
    gigabyte on one line. Compressed files are decompressed; .zst needs `zstandard` here (Rust
    reads zstd for training, but gives Python no sample)."""
    if path.suffix == ".gz":
        with gzip.open(path) as f:
            return f.read(n)
    if path.suffix in (".zst", ".zstd"):
        try:
            import zstandard
        except ImportError:
            raise SampleUnavailable(f"{path.name} is zstd-compressed; `pip install zstandard` to measure it") from None
        with open(path, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as f:
            return f.read(n)
    with open(path, "rb") as f:
        return f.read(n)


def _read_sample(files: list[Path], limit: int = 4 << 20) -> str:
    """Up to `limit` bytes of the files' text; `SampleUnavailable` if none can be read."""
    parts, size = [], 0
    skipped = None
    for f in files:
        try:
            data = _read_head(f, limit - size)
        except SampleUnavailable as e:
            skipped = e
            continue
        parts.append(data.decode("utf-8", errors="replace"))
        size += len(data)
        if size >= limit:
            break
    if not size and skipped is not None:
        raise skipped
    return "".join(parts)


def _count_tokens(tok: Tokenizer, text: str) -> int | None:
    """Tokens in `text`, or None when a character-level vocabulary without `unk_token` cannot
    encode it (characters unseen in training or left out by --limit-alphabet)."""
    try:
        return len(tok.encode_ordinary(text))
    except OutOfVocabularyError:
        return None


def _output_path(name: str) -> Path:
    """Where to save, checked before training: an hour of training must not end in a bad path."""
    if not name:
        raise ConfigError("the output file name is empty")
    out = Path(name)
    if out.is_dir():
        raise ConfigError(f"{name}: is a directory; give a file name such as {out / 'tokenizer.json'}")
    parent = out.parent
    if not parent.is_dir():
        raise ConfigError(f"{name}: directory {parent} does not exist")
    return out


def _bytes_per_token(tok: Tokenizer, files: list[Path], limit: int, label: str) -> str:
    """The summary's bytes/token line: a number, or n/a and why."""
    try:
        text = _read_sample(files, limit)
    except SampleUnavailable as e:
        return f"n/a: could not read a sample of the {label}: {e}"
    except (OSError, EOFError, ValueError) as e:
        return f"n/a: could not read a sample of the {label}: {e}"
    if not text:
        return f"n/a: the {label} is empty"
    n_tokens = _count_tokens(tok, text)
    if n_tokens is None:
        return f"n/a: {label} has characters outside the alphabet (set --unk-token)"
    if not n_tokens:
        return f"n/a: the {label} gives no tokens"
    return f"{len(text.encode('utf-8')) / n_tokens:.3f} on {label}"


def cmd_train(args: argparse.Namespace) -> int:
    counted = load_counts(args.corpus) if args.corpus and counts_only(args.corpus) else None
    if counted is not None:
        files = []
        source = f"word counts ({len(counted)} words)"
    elif args.corpus:
        files = expand_paths(args.corpus)
        source = f"{len(files)} file(s)"
    else:
        files = default_corpus_files()
        source = f"Python standard library sources ({len(files)} files)"
    options = {
        "vocab_size": None if args.num_merges is not None else args.vocab_size,
        "num_merges": args.num_merges,
        "pattern": args.pattern,
        "normalizer": args.normalizer,
        "byte_level": not args.char_level,
        "end_of_word_suffix": args.end_of_word_suffix,
        "unk_token": args.unk_token,
        "special_tokens": args.special_token or (),
        "min_frequency": args.min_frequency,
        "max_token_length": args.max_token_length,
        "limit_alphabet": args.limit_alphabet,
        "initial_alphabet": args.initial_alphabet or "",
    }
    wordpiece = args.model == "wordpiece"
    if wordpiece:
        # BERT's pipeline: its normalizer (lowercased unless --cased) and pre-tokenizer.
        from tokenmill.formats.wordpiece import BERT_SPECIALS, bert_normalizer

        options.update(pattern="bert", normalizer=bert_normalizer(lowercase=not args.cased), byte_level=False)
        options["special_tokens"] = tuple(args.special_token or BERT_SPECIALS)
        if args.num_merges is not None:
            raise ConfigError("--num-merges is for BPE; give --vocab-size for WordPiece")
    unigram = args.model == "unigram"
    if unigram:
        # SentencePiece's pipeline: spaces as ▁ (one in front), words cut before each ▁.
        normalizer = "nfkc" if args.normalizer == "none" else args.normalizer
        options.update(pattern="metaspace", normalizer=f"{normalizer}+sentencepiece", byte_level=False)
        if args.num_merges is not None:
            raise ConfigError("--num-merges is for BPE; give --vocab-size for Unigram")
    if counted is not None:
        if (wordpiece or unigram) and (counted.pattern, counted.normalizer) != (
            options["pattern"],
            options["normalizer"],
        ):
            raise ConfigError(
                f"these counts were split with pattern {counted.pattern!r} and normalizer {counted.normalizer!r}; "
                f"{args.model} needs counts made with --pattern {options['pattern']} "
                f"--normalizer {options['normalizer']}"
            )
        options.update(pattern=counted.pattern, normalizer=counted.normalizer)
    check_options(**options)
    out = _output_path(args.output)
    train_files, eval_files = _held_out(files)
    print(f"training on {source}", file=sys.stderr)
    progress = False if args.no_progress else None
    start = time.perf_counter()
    # Counted as a step of its own so that the summary can say how many unique words there were.
    counts = counted or count_words(
        train_files,
        pattern=options["pattern"],
        normalizer=options["normalizer"],
        special_tokens=options["special_tokens"],
        byte_level=options["byte_level"],
        show_progress=progress,
    )
    if unigram:
        tok = train_unigram(
            counts,
            vocab_size=args.vocab_size,
            special_tokens=options["special_tokens"],
            byte_fallback=args.byte_fallback,
            show_progress=progress,
        )
    elif wordpiece:
        tok = train_wordpiece(
            counts,
            vocab_size=args.vocab_size,
            special_tokens=options["special_tokens"],
            min_frequency=args.min_frequency,
            limit_alphabet=args.limit_alphabet,
            show_progress=progress,
        )
    else:
        tok = train_bpe(counts, **options, show_progress=progress)
    seconds = time.perf_counter() - start
    tok.save(out)
    listing = out.with_suffix(".vocab.txt")
    tok.save_vocab(listing)

    if counted is not None:
        corpus_bytes = counted.text_bytes
        bpt_line = "n/a: trained from word counts (no text here to measure)"
    else:
        corpus_bytes = sum(f.stat().st_size for f in train_files)
        eval_label = "held-back text" if eval_files else "training text (one file: nothing held back)"
        bpt_line = _bytes_per_token(tok, eval_files or train_files, 4 << 20 if eval_files else 1 << 20, eval_label)
    asked = args.num_merges if args.num_merges is not None else args.vocab_size
    learned = len(tok.merges) if args.num_merges is not None and not unigram else tok.vocab_size
    # Training stops early, without error, when no pair is left that may be merged.
    early = f"; stopped early, no pair left that may be merged; asked for {asked}" if learned < asked else ""
    where = "of word counts" if counted is not None else f"in {len(train_files)} file(s)"
    print(f"corpus          {corpus_bytes / 1e6:.1f} MB {where}")
    print(f"unique words    {len(counts)} (total {counts.total})")
    made = "" if wordpiece or unigram else f" ({len(tok.merges)} merges{early})"
    print(f"vocab size      {tok.vocab_size}{made}")
    print(f"time            {seconds:.2f} s")
    print(f"bytes/token     {bpt_line}")
    try:
        sample: object = tok.tokenize(SAMPLE)
    except OutOfVocabularyError:
        sample = "n/a (characters outside the alphabet)"
    print(f"sample          {sample}")
    print(f"saved           {out} (and {listing} for people)")
    return 0


def _utf8(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        # The same words as the Rust reader's error for a corpus file.
        raise CorpusError(f"{name}: invalid UTF-8 at byte offset {e.start}") from None


def _read_text(args: argparse.Namespace) -> str:
    """The text to encode: the argument, `--file` or stdin (one of them), strictly UTF-8."""
    if args.file is not None and args.text is not None:
        raise ConfigError("give the text as an argument or with --file, not both")
    if args.file is not None:
        return _utf8(_read_file(args.file), args.file)
    if args.text is not None:
        return str(args.text)
    return _utf8(sys.stdin.buffer.read(), "<stdin>")


def _read_file(name: str) -> bytes:
    if not name:
        raise CorpusError("the file name is empty")
    try:
        with open(name, "rb") as f:
            return f.read()
    except OSError as e:
        raise CorpusError(f"{name}: {e.strerror}") from None


_TOKENIZER_HELP = "tokenizer file or model directory: tokenmill's own, tokenizer.json, .model, .tiktoken, vocab.txt"


def _load(name: str) -> Tokenizer:
    if not name:
        raise CorpusError("the tokenizer file name is empty")
    from tokenmill.formats.files import open_any

    return open_any(name)


def cmd_encode(args: argparse.Namespace) -> int:
    tok = _load(args.tokenizer)
    text = _read_text(args)
    if args.tokens:
        print("\n".join(repr(t) for t in tok.tokenize(text)))
    else:
        allowed = "all" if args.allow_special else frozenset()
        print(" ".join(map(str, tok.encode(text, allowed_special=allowed))))
    return 0


_MAX_ID = 2**32 - 1


def _token_id(word: str) -> int:
    if not (word.isascii() and word.isdigit()) or int(word) > _MAX_ID:
        raise TokenIdError(f"token ids are integers from 0 to {_MAX_ID}, got {word!r}")
    return int(word)


def cmd_decode(args: argparse.Namespace) -> int:
    tok = _load(args.tokenizer)
    words = args.ids if args.ids else _utf8(sys.stdin.buffer.read(), "<stdin>").split()
    ids = [_token_id(w) for w in words]
    try:
        text = tok.decode(ids, errors=args.errors)
    except UnicodeDecodeError as e:
        raise TokenIdError(
            f"the ids decode to invalid UTF-8 at byte offset {e.start} (use --errors replace to decode anyway)"
        ) from None
    sys.stdout.write(text)
    sys.stdout.write("\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokenmill",
        description="Train, encode and decode subword tokenizers.",
        epilog="Exit status: 0 on success, 2 for any error (one line on stderr), 130 when interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"tokenmill {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser(
        "train",
        help="train a tokenizer (BPE, WordPiece or Unigram)",
        description=(
            "Train a BPE, WordPiece or Unigram tokenizer on files or globs; with no corpus, on this Python's "
            "standard-library sources."
        ),
    )
    t.add_argument(
        "corpus",
        nargs="*",
        help="files, directories or globs (quote globs for recursion: 'data/**/*.txt'), or .counts files",
    )
    t.add_argument(
        "--model", choices=["bpe", "wordpiece", "unigram"], default="bpe", help="subword model (default bpe)"
    )
    t.add_argument("--byte-fallback", action="store_true", help="Unigram: unknown characters become byte tokens")
    t.add_argument("--cased", action="store_true", help="WordPiece: keep case and accents (BERT cased)")
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
    e.add_argument("-t", "--tokenizer", required=True, help=_TOKENIZER_HELP)
    e.add_argument("text", nargs="?", help="text to encode (default: read stdin)")
    e.add_argument("-f", "--file", help="encode this file (UTF-8; not with a text argument)")
    e.add_argument("--tokens", action="store_true", help="print tokens, one per line, instead of ids")
    e.add_argument("--allow-special", action="store_true", help="encode special-token text as special tokens")
    e.set_defaults(run=cmd_encode)

    d = sub.add_parser("decode", help="ids → text", description="Decode ids (arguments or stdin) to text.")
    d.add_argument("-t", "--tokenizer", required=True, help=_TOKENIZER_HELP)
    d.add_argument("ids", nargs="*", help="token ids (default: read stdin)")
    d.add_argument(
        "--errors",
        default="replace",
        help="ids that decode to invalid UTF-8: replace (default), strict (an error), ignore, backslashreplace",
    )
    d.set_defaults(run=cmd_decode)

    add_corpus_parsers(sub)

    from tokenmill.analysis.cli import add_parser as add_analyze_parser

    add_analyze_parser(sub)
    return parser


EXIT_ERROR = 2  # argparse's status for a usage error; every other error uses it too


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (TokenmillError, OSError) as e:
        if isinstance(e, BrokenPipeError):
            # The reader went away (`tokenmill encode ... | head`): nothing left to say to it.
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stdout stays open until exit
            return EXIT_ERROR
        print(f"tokenmill: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("tokenmill: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        # A failure no reader turned into a tokenmill error is a bug, but the user still gets
        # one line, not a traceback (TOKENMILL_TRACEBACK=1 shows it, for a report).
        if os.environ.get("TOKENMILL_TRACEBACK"):
            raise
        print(
            f"tokenmill: error: {type(e).__name__}: {_one_line(e)} "
            "(unexpected: please report it; TOKENMILL_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        where = e.filename if e.filename is not None else ""
        return f"{where}: {e.strerror}" if where else e.strerror
    return " ".join(str(e).split("\n"))


if __name__ == "__main__":
    sys.exit(main())
