"""Files of documents to token ids on all cores: tokenmill's `encode_files` (flat ids + offsets),
its `encode_corpus` (shards written to disk), its `analysis.count_tokens` (the text file's tokens,
the separators counted as ordinary text) and gigatoken's `encode_files`, on the same file,
the same documents and the same tokenizer (cl100k_base); outputs checked equal before timing;
MB/s and ratios from one run.

    python benches/compare_files.py [--source /tmp/corpora/mix_100m.txt] [--mb 100] [--doc-bytes 8192]
        [--rounds 3] [--threads 2] [--first-pass]

By default each encoder's best of `--rounds` passes over the file (caches warm); with
`--first-pass`, each encoder's one pass over the file in a fresh process, as when a corpus is
encoded once.

The source is cut into documents of about `--doc-bytes` at line ends and written twice: a text
file with `<|endoftext|>` between documents, and JSON Lines (`{"text": ...}` per line). Each
encoder reads the file itself. Rounds alternate between encoders; the best of `--rounds` counts.
gigatoken (with awkward) is skipped when it is not installed (`pip install '.[bench]' awkward`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from vocab_files import vocabulary_path  # noqa: E402  (the pinned cl100k_base file)

import tokenmill  # noqa: E402
import tokenmill.analysis  # noqa: E402
from tokenmill.shards import TokenShards, encode_corpus  # noqa: E402

SEPARATOR = "<|endoftext|>"
COUNT = "tokenmill count_tokens (text)"


def make_files(source: Path, mb: int, doc_bytes: int, where: Path) -> tuple[Path, Path, int]:
    """The text and JSON Lines files of the documents (cached by their parameters)."""
    text_path = where / f"docs-{source.stem}-{mb}-{doc_bytes}.txt"
    lines_path = text_path.with_suffix(".jsonl")
    if not (text_path.exists() and lines_path.exists()):
        raw = source.read_bytes()[: mb * 1_000_000].decode("utf-8", "ignore").replace(SEPARATOR, "")
        docs, start = [], 0
        while start < len(raw):
            end = raw.find("\n", start + doc_bytes)
            end = len(raw) if end < 0 else end + 1
            docs.append(raw[start:end])
            start = end
        text_path.write_text(SEPARATOR.join(docs), encoding="utf-8")
        with open(lines_path, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
    return text_path, lines_path, text_path.stat().st_size


def flat_of_awkward(array: object) -> tuple[np.ndarray, np.ndarray]:
    import awkward as ak

    ids = ak.to_numpy(ak.flatten(array)).astype(np.uint32)
    offsets = np.zeros(len(array) + 1, dtype=np.uint64)
    np.cumsum(ak.to_numpy(ak.num(array)), out=offsets[1:])
    return ids, offsets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=Path("/tmp/corpora/mix_100m.txt"))
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--doc-bytes", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--first-pass", action="store_true")
    parser.add_argument("--only", help=argparse.SUPPRESS)  # one encoder, once: a --first-pass child
    args = parser.parse_args()

    work = Path(tempfile.gettempdir()) / "tokenmill-bench-files"
    work.mkdir(exist_ok=True)
    text_path, lines_path, size = make_files(args.source, args.mb, args.doc_bytes, work)
    vocab = vocabulary_path("cl100k_base")
    tok = tokenmill.Tokenizer.from_tiktoken(vocab, pattern="cl100k_base")
    shards_dir = work / "shards"

    def shards() -> None:
        shutil.rmtree(shards_dir, ignore_errors=True)
        encode_corpus(text_path, tok, shards_dir, separator=SEPARATOR, num_threads=args.threads, show_progress=False)

    def shards_read() -> tuple[np.ndarray, np.ndarray]:
        """The shards' documents without their end-of-document ids (for the check, not timed)."""
        s = TokenShards(shards_dir)
        ids, starts = np.asarray(s.tokens(0)), np.asarray(s.starts(0))
        keep = np.ones(len(ids), dtype=bool)
        keep[starts[1:] - 1] = False  # the end-of-document id after each document
        return ids[keep].astype(np.uint32), starts - np.arange(len(starts), dtype=np.uint64)

    runs: dict[str, Callable[[], object]] = {
        "tokenmill encode_files (text)": lambda: tok.encode_files(
            text_path, separator=SEPARATOR, num_threads=args.threads
        ),
        "tokenmill encode_files (JSON Lines)": lambda: tok.encode_files(
            lines_path, text_field="text", num_threads=args.threads
        ),
        "tokenmill encode_corpus (text → shards)": shards,
        COUNT: lambda: tokenmill.analysis.count_tokens(tok, text_path, num_threads=args.threads).total_tokens,
    }
    try:
        import gigatoken

        os.environ.setdefault("RAYON_NUM_THREADS", str(args.threads))
        giga = gigatoken.Tokenizer.from_tiktoken(str(vocab), pretokenizer="cl100k")
        text_source = gigatoken.TextFileSource([str(text_path)], separator=SEPARATOR)
        lines_source = gigatoken.JsonlFileSource([str(lines_path)], field="text")
        runs["gigatoken encode_files (text)"] = lambda: flat_of_awkward(giga.encode_files(text_source, parallel=True))
        runs["gigatoken encode_files (JSON Lines)"] = lambda: flat_of_awkward(
            giga.encode_files(lines_source, parallel=True)
        )
    except ImportError:
        print("gigatoken (or awkward) is not installed: skipped")

    if args.only is not None:
        start = time.perf_counter()
        runs[args.only]()
        print(time.perf_counter() - start)
        return
    reference = None
    for name, run in runs.items():
        output = run()
        if name == COUNT:
            if output != len(tok.encode_ordinary(text_path.read_text(encoding="utf-8"))):
                raise SystemExit(f"{name}: {output} tokens, not the whole file's")
            continue
        ids, offsets = shards_read() if run is shards else output  # type: ignore[misc]
        if reference is None:
            reference = (ids, offsets)
            print(f"{size / 1e6:.0f} MB, {len(offsets) - 1:,} documents, {len(ids):,} tokens")
        elif not (np.array_equal(ids, reference[0]) and np.array_equal(offsets, reference[1])):
            raise SystemExit(f"{name}: ids differ from tokenmill encode_files'")
    print("outputs equal\n")
    best = {name: float("inf") for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            if args.first_pass:
                child = [sys.executable, __file__, *sys.argv[1:], "--only", name]
                seconds = float(subprocess.run(child, capture_output=True, text=True, check=True).stdout.split()[-1])
            else:
                start = time.perf_counter()
                run()
                seconds = time.perf_counter() - start
            best[name] = min(best[name], seconds)
    for name, seconds in best.items():
        print(f"{name:42s} {size / seconds / 1e6:7.1f} MB/s")
    for kind in ("text", "JSON Lines"):
        ours, theirs = f"tokenmill encode_files ({kind})", f"gigatoken encode_files ({kind})"
        if theirs in best:
            print(f"tokenmill / gigatoken, {kind}: {best[theirs] / best[ours]:.2f}x")
    if "gigatoken encode_files (text)" in best:
        ratio = best["gigatoken encode_files (text)"] / best["tokenmill encode_corpus (text → shards)"]
        print(f"tokenmill shards / gigatoken ids, text: {ratio:.2f}x")


if __name__ == "__main__":
    main()
