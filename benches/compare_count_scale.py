"""Counting 1 GB of shards: plain-text shards and Parquet shards on this machine, and the Parquet
shards on a two-node Ray cluster started here (127.0.0.1 only, 1 CPU per node); time, peak
memory of every process, and whether the Ray counts equal the one-machine counts.

    python benches/compare_count_scale.py [--source /work/corpora/code_c.txt] [--bytes 1000000000]
        [--shards 8] [--cache /tmp/tokenmill-bench-shards] [--pattern cl100k]

The shards (Parquet, column "text", ~4 KB documents cut at newlines; and .txt files holding
the same text) are made once in --cache from the first --bytes of --source. Each run is a fresh
subprocess, so each peak is its own. Ray's start-up is timed apart from the counting.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # ray_cluster: the tests' loopback-only cluster
from corpus_shards import own_peak  # noqa: E402  (benches/ is on the path now)


def run(name: str, files: list[str], pattern: str, out: str) -> dict:
    import tokenmill

    result: dict = {"name": name}
    if name.startswith("ray"):
        from ray_cluster import peak_memory, start_loopback_cluster

        from tokenmill.distributed import count_words_on_ray

        start = time.perf_counter()
        cluster, ray = start_loopback_cluster(object_store_memory=512 * 2**20)
        result["startup_s"] = time.perf_counter() - start
        try:
            start = time.perf_counter()
            counts = count_words_on_ray(files, pattern=pattern, show_progress=False)
            result["seconds"] = time.perf_counter() - start
            result["processes"] = [(name, peak) for _, name, peak in peak_memory()]
        finally:
            ray.shutdown()
            cluster.shutdown()
    else:
        start = time.perf_counter()
        counts = tokenmill.count_words(files, pattern=pattern, show_progress=False)
        result["seconds"] = time.perf_counter() - start
        result["processes"] = [("python", own_peak())]
    counts.save(out)
    result.update(words=len(counts), total=counts.total, text_bytes=counts.text_bytes)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default="/work/corpora/code_c.txt")
    ap.add_argument("--bytes", type=int, default=1_000_000_000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--cache", default="/tmp/tokenmill-bench-shards")
    ap.add_argument("--pattern", default="cl100k")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run(args.run, json.loads(args.files), args.pattern, args.cache + f"/{args.run}.counts")))
        return
    from corpus_shards import make_shards

    made = make_shards(args.source, args.cache, args.bytes, args.shards)
    print(f"{made['text_bytes'] / 1e9:.2f} GB of text, {made['documents']} documents, {args.shards} shards")
    results = {}
    runs = (("local-txt", made["txt"]), ("local-parquet", made["parquet"]), ("ray-parquet", made["parquet"]))
    for name, files in runs:
        cmd = [sys.executable, __file__, "--run", name, "--files", json.dumps(files), "--cache", args.cache]
        proc = subprocess.run([*cmd, "--pattern", args.pattern], capture_output=True, text=True, env=os.environ)
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-3000:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results[name] = r
        extra = f" (+{r['startup_s']:.1f} s cluster start)" if "startup_s" in r else ""
        print(f"{name:14} {r['seconds']:7.2f} s{extra}  {r['words']} words, total {r['total']}")
        for proc_name, peak in sorted(r["processes"], key=lambda p: -p[1])[:8]:
            print(f"{'':14} peak {peak / 1e9:5.2f} GB  {proc_name}")
    if "local-txt" in results and "local-parquet" in results:
        ratio = results["local-parquet"]["seconds"] / results["local-txt"]["seconds"]
        print(f"Parquet / plain text time: {ratio:.2f}x (the issue asks for at most 1.3x)")
    if "ray-parquet" in results and "local-parquet" in results:
        saved = [Path(args.cache, f"{name}.counts").read_bytes() for name in ("ray-parquet", "local-parquet")]
        same = saved[0] == saved[1]
        ratio = results["ray-parquet"]["seconds"] / results["local-parquet"]["seconds"]
        print(f"Ray (2 nodes) / one machine time: {ratio:.2f}x; counts equal: {same}")


if __name__ == "__main__":
    main()
