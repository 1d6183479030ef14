"""Benchmark data: a text file cut into documents (at newlines, about `doc_bytes` each) and
written as Parquet shards and as plain-text shards holding exactly the same text, in a cache
directory (never in the repository); and the peak memory of a process. Used by
compare_count_scale.py and compare_shards.py."""

from __future__ import annotations

import json
import os
from pathlib import Path


def own_peak() -> int:
    """This process's peak resident bytes (VmHWM: unlike ru_maxrss, not inherited over exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def documents(text: str, doc_bytes: int) -> list[str]:
    """`text` cut after a newline about every `doc_bytes` characters; joined, the pieces give
    `text` back."""
    docs, start = [], 0
    while start < len(text):
        cut = text.find("\n", start + doc_bytes)
        end = len(text) if cut < 0 else cut + 1
        docs.append(text[start:end])
        start = end
    return docs


def make_shards(source: str, out: str, total_bytes: int, shards: int, doc_bytes: int = 4096) -> dict:
    """Writes `shards` Parquet files (column "text") and the same documents as .txt files
    (concatenated) from the first `total_bytes` of `source`; reuses them when present."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(out)
    spec = {"source": os.path.abspath(source), "total_bytes": total_bytes, "shards": shards, "doc_bytes": doc_bytes}
    marker = root / "made.json"
    if marker.exists() and json.loads(marker.read_text())["spec"] == spec:
        return json.loads(marker.read_text())
    root.mkdir(parents=True, exist_ok=True)
    for f in root.iterdir():
        f.unlink()
    with open(source, "rb") as f:
        text = f.read(total_bytes).decode("utf-8", errors="ignore")
    docs = documents(text, doc_bytes)
    del text
    per = -(-len(docs) // shards)
    for i in range(shards):
        part = docs[i * per : (i + 1) * per]
        pq.write_table(pa.table({"text": part}), root / f"shard{i:03d}.parquet", row_group_size=8192)
        with open(root / f"shard{i:03d}.txt", "w", encoding="utf-8") as f:
            f.write("".join(part))
    made = {
        "spec": spec,
        "documents": len(docs),
        "text_bytes": sum(len(d.encode("utf-8")) for d in docs),
        "parquet": sorted(str(p) for p in root.glob("*.parquet")),
        "txt": sorted(str(p) for p in root.glob("*.txt")),
    }
    marker.write_text(json.dumps(made))
    return made
