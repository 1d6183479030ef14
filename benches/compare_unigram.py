"""Unigram (SentencePiece-style) tokenizers: tokenmill against sentencepiece and Hugging Face
`tokenizers`, training and encoding.

    python benches/compare_unigram.py CORPUS [--vocab-size 16000] [--encode-bytes 4000000]
                                             [--threads 2] [--skip-hf] [--skip-train] [--model M]

Training (one run each, in fresh subprocesses so peak memory is each trainer's own): the corpus's
lines are split into the first 90% (training) and the last 10% (held out), both written as UTF-8
to a temporary directory; then

  tokenmill     tokenmill.train_unigram(TRAIN, vocab_size=V, num_threads=T)   (row skipped if
                this tokenmill has no train_unigram)
  sentencepiece SentencePieceTrainer.train(model_type="unigram", vocab_size=V, num_threads=T),
                its defaults otherwise (nmt_nfkc, character_coverage 0.9995, max piece length
                16, every line read: input_sentence_size 0, train_extremely_large_corpus
                false) except max_sentence_length, raised above the longest line so no line is
                dropped (the number skipped, from its log, is printed and should be 0)
  tokenizers    UnigramTrainer(vocab_size=V, max_piece_length=16, unk "<unk>") behind the
                pipeline of its own SentencePieceUnigramTokenizer: Nmt + NFKC + runs of spaces
                collapsed, Metaspace pre-tokenizer ("▁" prepended); can take minutes: --skip-hf

Printed per trainer: wall time, peak RSS while training (ru_maxrss of the child process, read
right after training returns: interpreter and imports included), vocabulary size reached, and
bytes/token of the trained model on the held-out lines and on the training lines (UTF-8 bytes
of the lines without their newlines / tokens; each model encodes line by line with its own
library); then tokenmill/sentencepiece ratios for time and memory and the bytes/token
difference in percent (positive: tokenmill's vocabulary compresses better).

Encoding: one SentencePiece model (--model, else the one sentencepiece trained above, else with
--skip-train a small one: vocab --encode-vocab on the first --encode-train-bytes of the corpus,
Unigram or --model-type bpe)
is loaded into sentencepiece.SentencePieceProcessor and tokenmill.Tokenizer.from_sentencepiece
(load times, best of 3), and the first --encode-bytes of the corpus, cut at line ends into
~--doc-bytes documents, is encoded: a batch call on 1 and on 2 threads
(`sp.encode(docs, num_threads=n)`, `tok.encode_batch(docs, num_threads=n)`) and a Python loop
of single-text calls, the two libraries taking turns; best of --rounds, ids checked equal to
sentencepiece's, MB/s printed with tokenmill's speed as a multiple of sentencepiece's (of the best
times, and the median of the rounds' paired ratios). With `--hf-json FILE`, a Unigram
`tokenizer.json` is timed too: tokenizers' `encode_batch` against tokenmill's on those documents.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TRAINERS = {
    "tokenmill": """
        import tokenmill
        if not hasattr(tokenmill, "train_unigram"):
            print(json.dumps({"skipped": "this tokenmill has no train_unigram"}))
            raise SystemExit(0)
        start = time.perf_counter()
        try:
            tok = tokenmill.train_unigram(TRAIN, vocab_size=VOCAB, num_threads=THREADS)
        except TypeError:  # no num_threads keyword: it uses every core
            start = time.perf_counter()
            tok = tokenmill.train_unigram(TRAIN, vocab_size=VOCAB)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        vocab = tok.vocab_size
        encode = lambda lines: tok.encode_batch(lines, num_threads=THREADS, disallowed_special=())
        count = lambda out: sum(len(ids) for ids in out)
        extra = {}
    """,
    "sentencepiece": """
        import sentencepiece as spm
        start = time.perf_counter()
        spm.SentencePieceTrainer.train(input=TRAIN, model_prefix=WORK + "/sentencepiece",
                                       model_type="unigram", vocab_size=VOCAB, num_threads=THREADS,
                                       max_sentence_length=MAX_LINE, train_extremely_large_corpus=False)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        sp = spm.SentencePieceProcessor(model_file=WORK + "/sentencepiece.model")
        vocab = sp.get_piece_size()
        encode = lambda lines: sp.encode(lines, num_threads=THREADS)
        count = lambda out: sum(len(ids) for ids in out)
        extra = {"model": WORK + "/sentencepiece.model"}
    """,
    "tokenizers": """
        os.environ["RAYON_NUM_THREADS"] = str(THREADS)
        from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(),
                                               normalizers.Replace(Regex(" {2,}"), " ")])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        trainer = trainers.UnigramTrainer(vocab_size=VOCAB, max_piece_length=16, unk_token="<unk>",
                                          special_tokens=["<unk>"], show_progress=False)
        start = time.perf_counter()
        tok.train([TRAIN], trainer)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        vocab = tok.get_vocab_size()
        encode = lambda lines: tok.encode_batch(lines, add_special_tokens=False)
        count = lambda out: sum(len(e.ids) for e in out)
        extra = {}
    """,
}

CHILD = """
import json, os, resource, time
TRAIN, HELDOUT, WORK = {train!r}, {heldout!r}, {work!r}
VOCAB, THREADS, MAX_LINE, EVAL_BYTES = {vocab}, {threads}, {max_line}, {eval_bytes}
{body}
def bytes_per_token(path, limit):
    with open(path, encoding="utf-8") as f:
        text = f.read(limit) if limit else f.read()
    lines = text.split("\\n")
    if limit:
        lines = lines[:-1] or lines  # the last line may be cut
    size = sum(len(line.encode()) for line in lines)
    tokens = count(encode(lines))
    return size / max(tokens, 1)
print(json.dumps({{"seconds": seconds, "peak_gb": peak / 1e6, "vocab": vocab,
                  "heldout_bpt": bytes_per_token(HELDOUT, 0),
                  "train_bpt": bytes_per_token(TRAIN, EVAL_BYTES), **extra}}))
"""


def split_corpus(corpus: Path, work: Path) -> tuple[Path, Path, int, int, int]:
    """First 90% of the lines → train.txt, the rest → heldout.txt, as valid UTF-8. Returns the
    paths, the number of lines, the longest line in bytes and the non-empty training lines."""
    text = corpus.read_bytes().decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cut = int(len(lines) * 0.9)
    train, heldout = work / "train.txt", work / "heldout.txt"
    train.write_text("".join(line + "\n" for line in lines[:cut]), encoding="utf-8")
    heldout.write_text("".join(line + "\n" for line in lines[cut:]), encoding="utf-8")
    longest = max((len(line.encode()) for line in lines), default=0)
    return train, heldout, len(lines), longest, sum(1 for line in lines[:cut] if line)


def run_training(args: argparse.Namespace, work: Path) -> str | None:
    """Trains with every library in its own subprocess; returns sentencepiece's model path."""
    train, heldout, n_lines, longest, non_empty = split_corpus(Path(args.corpus), work)
    max_line = max(4192, longest + 1)
    print(
        f"training: {train.stat().st_size / 1e6:.1f} MB ({int(n_lines * 0.9)} lines), held out "
        f"{heldout.stat().st_size / 1e6:.1f} MB; vocab {args.vocab_size}, {args.threads} threads; "
        f"longest line {longest} bytes (sentencepiece max_sentence_length={max_line})"
    )
    results: dict[str, dict] = {}
    for name, body in TRAINERS.items():
        if name == "tokenizers" and args.skip_hf:
            print(f"  {name:<14} skipped (--skip-hf)")
            continue
        script = CHILD.format(
            train=str(train), heldout=str(heldout), work=str(work), vocab=args.vocab_size,
            threads=args.threads, max_line=max_line, eval_bytes=args.train_eval_bytes,
            body=textwrap.dedent(body),
        )  # fmt: skip
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if run.returncode != 0 or not run.stdout.strip():
            tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
            print(f"  {name:<14} failed (exit {run.returncode}): {' | '.join(tail)}")
            continue
        r = json.loads(run.stdout.strip().splitlines()[-1])
        if "skipped" in r:
            print(f"  {name:<14} skipped: {r['skipped']}")
            continue
        results[name] = r
        note = ""
        if name == "sentencepiece":
            loaded = re.search(r"Loaded all (\d+) sentences", run.stderr)
            skipped = re.search(r"Skipped (\d+) too long", run.stderr)
            note = (
                f"  (read {loaded.group(1) if loaded else '?'} of {non_empty} non-empty lines, "
                f"skipped {skipped.group(1) if skipped else 0} too long)"
            )
        print(
            f"  {name:<14} {r['seconds']:8.1f} s  peak {r['peak_gb']:5.2f} GB  vocab {r['vocab']:>6}  "
            f"bytes/token held-out {r['heldout_bpt']:.3f}  train {r['train_bpt']:.3f}"
            f"  [child {wall:.0f} s]{note}"
        )
    if "tokenmill" in results and "sentencepiece" in results:
        ours, theirs = results["tokenmill"], results["sentencepiece"]
        print(
            f"  tokenmill/sentencepiece: time {ours['seconds'] / theirs['seconds']:.2f}x, memory "
            f"{ours['peak_gb'] / theirs['peak_gb']:.2f}x, bytes/token held-out "
            f"{(ours['heldout_bpt'] / theirs['heldout_bpt'] - 1) * 100:+.1f}%, train "
            f"{(ours['train_bpt'] / theirs['train_bpt'] - 1) * 100:+.1f}%"
        )
    return results.get("sentencepiece", {}).get("model")


def small_model(args: argparse.Namespace, work: Path) -> str:
    """A sentencepiece model (--model-type: unigram or bpe) trained on the first
    --encode-train-bytes of the corpus."""
    import sentencepiece as spm

    with open(args.corpus, "rb") as f:
        data = f.read(args.encode_train_bytes)
    if len(data) == args.encode_train_bytes and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]
    sample = work / "small.txt"
    sample.write_text(data.decode("utf-8", errors="ignore"), encoding="utf-8")
    start = time.perf_counter()
    spm.SentencePieceTrainer.train(
        input=str(sample), model_prefix=str(work / "small"), model_type=args.model_type,
        vocab_size=args.encode_vocab, num_threads=args.threads, max_sentence_length=1 << 20,
        hard_vocab_limit=False, minloglevel=2,
    )  # fmt: skip
    print(
        f"model: sentencepiece {args.model_type}, vocab {args.encode_vocab}, trained on the first "
        f"{len(data) / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s"
    )
    return str(work / "small.model")


def documents(corpus: str, limit: int, doc_bytes: int) -> list[str]:
    """The first `limit` bytes of `corpus`, cut at line ends into documents of ~doc_bytes."""
    with open(corpus, "rb") as f:
        data = f.read(limit)
    text = data.decode("utf-8", errors="ignore")  # a character cut at the end is dropped
    docs, current, size = [], [], 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        size += len(line.encode())
        if size >= doc_bytes:
            docs.append("".join(current))
            current, size = [], 0
    if current:
        docs.append("".join(current))
    return docs


def best_of(rounds: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def interleaved(rounds: int, run_a, run_b) -> tuple[float, object, float, object, float]:
    """Both runs taken in turns (this machine's speed swings within seconds): each one's best
    time and output, and the median over rounds of a's time / b's time."""
    times_a, times_b, out_a, out_b = [], [], None, None
    for r in range(rounds):
        for which in ("a", "b") if r % 2 else ("b", "a"):
            start = time.perf_counter()
            if which == "a":
                out_a = run_a()
                times_a.append(time.perf_counter() - start)
            else:
                out_b = run_b()
                times_b.append(time.perf_counter() - start)
    ratios = sorted(a / b for a, b in zip(times_a, times_b, strict=True))
    return min(times_a), out_a, min(times_b), out_b, ratios[len(ratios) // 2]


def run_encoding(args: argparse.Namespace, model: str) -> None:
    import sentencepiece as spm

    import tokenmill

    load_sp, sp = best_of(args.rounds, lambda: spm.SentencePieceProcessor(model_file=model))
    load_tm, tok = best_of(args.rounds, lambda: tokenmill.Tokenizer.from_sentencepiece(model))
    print(
        f"load {Path(model).name} ({os.path.getsize(model) / 1e3:.0f} KB, {sp.get_piece_size()} pieces): "
        f"sentencepiece {load_sp * 1e3:.1f} ms, tokenmill from_sentencepiece {load_tm * 1e3:.1f} ms "
        f"({load_tm / load_sp:.1f}x the time)"
    )
    docs = documents(args.corpus, args.encode_bytes, args.doc_bytes)
    size = sum(len(d.encode()) for d in docs)
    print(f"encoding {size / 1e6:.2f} MB in {len(docs)} documents of ~{args.doc_bytes} bytes, best of {args.rounds}:")
    runs = [
        ("batch, 1 thread",
         lambda: sp.encode(docs, num_threads=1),
         lambda: tok.encode_batch(docs, num_threads=1, disallowed_special=())),
        ("batch, 2 threads",
         lambda: sp.encode(docs, num_threads=2),
         lambda: tok.encode_batch(docs, num_threads=2, disallowed_special=())),
        ("loop of encode()",
         lambda: [sp.encode(d) for d in docs],
         lambda: [tok.encode(d, disallowed_special=()) for d in docs]),
    ]  # fmt: skip
    reference = None
    for label, run_sp, run_tm in runs:
        t_sp, ids_sp, t_tm, ids_tm, paired = interleaved(args.rounds, run_sp, run_tm)
        reference = reference if reference is not None else ids_sp
        bad = [i for i, (a, b) in enumerate(zip(ids_tm, reference, strict=False)) if a != b]
        check = (
            "ids equal"
            if not bad and len(ids_tm) == len(reference) and ids_sp == reference
            else (f"IDS DIFFER in {len(bad)} of {len(docs)} documents (first: #{bad[0] if bad else '?'})")
        )
        print(
            f"  {label:<17} sentencepiece {size / t_sp / 1e6:6.2f} MB/s  tokenmill {size / t_tm / 1e6:6.2f} MB/s"
            f"  tokenmill {t_sp / t_tm:.2f}x sentencepiece's speed (paired median {paired:.2f}x)  ({check})"
        )
    tokens = sum(len(ids) for ids in reference or [])
    print(f"  {tokens} tokens, {size / max(tokens, 1):.2f} bytes/token")
    if args.hf_json:
        compare_tokenizer_json(args, docs, size)


def compare_tokenizer_json(args: argparse.Namespace, docs: list[str], size: int) -> None:
    """A Unigram `tokenizer.json` (`--hf-json`, e.g. one transformers converted from the model):
    tokenizers' `encode_batch` (all cores) against tokenmill's `encode_batch` on `--threads`
    threads, taking turns, ids checked equal."""
    import tokenizers

    import tokenmill

    hf = tokenizers.Tokenizer.from_file(args.hf_json)
    tok = tokenmill.Tokenizer.from_huggingface(args.hf_json)
    t_hf, ids_hf, t_tm, ids_tm, paired = interleaved(
        args.rounds,
        lambda: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)],
        lambda: tok.encode_batch(docs, num_threads=args.threads, allowed_special="all"),
    )
    check = "ids equal" if ids_hf == ids_tm else "IDS DIFFER"
    print(
        f"{Path(args.hf_json).name}: tokenizers {size / t_hf / 1e6:6.2f} MB/s  tokenmill {size / t_tm / 1e6:6.2f} MB/s"
        f"  tokenmill {t_hf / t_tm:.2f}x tokenizers' speed (paired median {paired:.2f}x)  ({check})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("--vocab-size", type=int, default=16000)
    parser.add_argument("--threads", type=int, default=2, help="training threads (and for evaluation)")
    parser.add_argument("--skip-hf", action="store_true", help="do not train with tokenizers")
    parser.add_argument("--skip-train", action="store_true", help="encoding comparison only")
    parser.add_argument(
        "--train-eval-bytes", type=int, default=0, help="bytes/token on this much of the training part (0: all)"
    )
    parser.add_argument("--model", help="a sentencepiece .model for the encoding comparison")
    parser.add_argument(
        "--model-type", choices=("unigram", "bpe"), default="unigram", help="the small model's type (--skip-train)"
    )
    parser.add_argument("--encode-bytes", type=int, default=4_000_000)
    parser.add_argument("--doc-bytes", type=int, default=4096)
    parser.add_argument("--encode-vocab", type=int, default=8000, help="small model's vocabulary")
    parser.add_argument("--encode-train-bytes", type=int, default=5_000_000, help="small model's training text")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hf-json", help="also time this Unigram tokenizer.json against tokenizers")
    args = parser.parse_args()
    if not Path(args.corpus).is_file():
        parser.error(f"no such file: {args.corpus}")
    with tempfile.TemporaryDirectory(prefix="compare_unigram_") as tmp:
        work = Path(tmp)
        model = args.model
        if not args.skip_train:
            trained = run_training(args, work)
            model = model or trained
        run_encoding(args, model or small_model(args, work))


if __name__ == "__main__":
    main()
