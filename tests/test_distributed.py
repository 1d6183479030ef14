"""Counting on a real two-node Ray cluster (127.0.0.1 only) against the one-machine result."""

from __future__ import annotations

import json
import socket
import time

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("ray")

from ray_cluster import is_loopback, listening_sockets  # noqa: E402

import tokenmill  # noqa: E402
from tokenmill import ConfigError, FormatError, count_words  # noqa: E402
from tokenmill.distributed import count_words_on_ray, ray_get  # noqa: E402


def _documents(stdlib_text: str, n: int, size: int = 2000) -> list[str]:
    return [stdlib_text[i * size : (i + 1) * size] for i in range(n)]


@pytest.fixture(scope="module")
def shards(tmp_path_factory, stdlib_text):
    """Five plain-text shards, three Parquet shards and two JSON Lines shards of real text."""
    root = tmp_path_factory.mktemp("shards")
    docs = _documents(stdlib_text, 400)
    for i in range(5):
        (root / f"part{i}.txt").write_text("\n".join(docs[i * 40 : (i + 1) * 40]), encoding="utf-8")
    for i in range(3):
        rows = docs[200 + i * 40 : 200 + (i + 1) * 40]
        pq.write_table(pa.table({"text": rows, "n": list(range(len(rows)))}), root / f"part{i}.parquet")
    for i in range(2):
        rows = docs[320 + i * 40 : 320 + (i + 1) * 40]
        with open(root / f"part{i}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"text": r}) + "\n" for r in rows)
    return root


def test_the_cluster_has_two_nodes_that_listen_and_advertise_loopback_only(ray_cluster):
    import ray

    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) == 2
    assert {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
    assert ray_cluster.address.startswith("127.0.0.1:")
    bound = listening_sockets()
    assert len(bound) >= 4  # GCS, two raylets (two ports each), workers
    assert [(pid, a) for pid, a in bound if not is_loopback(a)] == []


def test_counts_on_the_cluster_equal_one_machine(ray_cluster, shards):
    files = sorted(shards.glob("*.txt"))
    local = count_words(files)
    on_ray = count_words_on_ray(files, fan_in=2, show_progress=False)  # 5 shards: a tree of 3 levels
    assert on_ray == local
    assert on_ray.total == local.total and len(on_ray) == len(local) > 1000
    assert on_ray.dropped_count == 0


def test_parquet_and_json_lines_shards_on_the_cluster(ray_cluster, shards):
    files = sorted(shards.glob("*.parquet")) + sorted(shards.glob("*.jsonl"))
    on_ray = count_words_on_ray(files, text_field="text", pattern="gpt2", show_progress=False)
    assert on_ray == count_words(files, text_field="text", pattern="gpt2")
    texts = [r for f in sorted(shards.glob("*.parquet")) for r in pq.read_table(f)["text"].to_pylist()]
    for f in sorted(shards.glob("*.jsonl")):
        texts += [json.loads(line)["text"] for line in f.read_text(encoding="utf-8").splitlines()]
    assert on_ray == count_words(iter(texts), pattern="gpt2")


def test_a_budget_prunes_every_table_and_loses_no_count_unrecorded(ray_cluster, shards):
    files = sorted(shards.glob("*.txt"))
    full = count_words(files)
    budget = full.memory_bytes // 4
    pruned = count_words_on_ray(files, max_memory=budget, fan_in=2, show_progress=False)
    assert pruned.memory_bytes <= budget
    assert pruned.dropped_count > 0 and pruned.dropped_words > 0
    assert pruned.total + pruned.dropped_count == full.total
    # The most frequent words survive with their exact counts.
    for word, count in full.most_common(20):
        assert pruned[word] == count


# Ray Data warns about its own deprecated settings as it starts.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_ray_dataset_is_counted_with_map_batches(ray_cluster, shards):
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    files = sorted(shards.glob("*.parquet"))
    # From Arrow tables in the object store: read_parquet would need an fsspec with aiohttp.
    dataset = ray.data.from_arrow([pq.read_table(f) for f in files])
    assert count_words_on_ray(dataset, show_progress=False) == count_words(files)
    with pytest.raises(FormatError, match="no column 'body'"):
        count_words_on_ray(dataset, text_field="body")


def test_a_worker_that_dies_is_retried_without_counting_twice(ray_cluster, shards, tmp_path):
    files = sorted(shards.glob("*.txt"))[:3]
    crash_dir = tmp_path / "crashes"
    crash_dir.mkdir()
    on_ray = count_words_on_ray(
        files, runtime_env={"env_vars": {"TOKENMILL_TEST_CRASH_DIR": str(crash_dir)}}, show_progress=False
    )
    # Every shard's first attempt counted it, then its worker died: the retry's counts alone count.
    assert sorted(p.name for p in crash_dir.iterdir()) == [f.name + ".crashed" for f in files]
    assert on_ray == count_words(files)


def test_a_shard_that_is_not_parquet_or_lacks_the_column(ray_cluster, shards, tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet at all", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.parquet: not a Parquet file"):
        count_words_on_ray([bad, shards / "part0.parquet"], show_progress=False)
    with pytest.raises(FormatError, match=r"part0\.parquet: no column 'body' \(columns: 'text', 'n'\)"):
        count_words_on_ray([shards / "part0.parquet"], text_field="body", show_progress=False)


def test_a_worker_without_tokenmill_is_said_plainly(ray_cluster):
    import ray

    @ray.remote(max_retries=0)
    def import_fails():
        raise ModuleNotFoundError("No module named 'tokenmill'", name="tokenmill")

    with pytest.raises(ConfigError, match="a Ray worker cannot import tokenmill"):
        ray_get(ray, import_fails.remote())


def test_a_cluster_that_cannot_be_reached(ray_cluster, shards):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    start = time.monotonic()
    with pytest.raises(ConfigError, match=rf"cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused"):
        count_words_on_ray(shards / "part0.txt", address=f"127.0.0.1:{port}")
    assert time.monotonic() - start < 5
    with pytest.raises(ConfigError, match="expected host:port"):
        count_words_on_ray(shards / "part0.txt", address="nowhere")


@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 400 Bad Request\r\n\r\n"])
def test_a_server_that_is_not_ray_is_refused_within_seconds(shards, answer: bytes) -> None:  # type: ignore[no-untyped-def]
    """Something else listening at the address (silent, or an HTTP/1.1 server): refused in
    seconds, where ray.init waited minutes for a handshake."""
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(1024)
            if answer:
                conn.sendall(answer)
            time.sleep(3 if not answer else 0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    start = time.monotonic()
    try:
        with pytest.raises(ConfigError, match=f"127.0.0.1:{port} accepts connections but is not a Ray cluster"):
            count_words_on_ray(shards / "part0.txt", address=f"127.0.0.1:{port}")
    finally:
        server.close()
        thread.join(timeout=15)
    assert time.monotonic() - start < 15


def test_word_counts_travel_through_the_object_store(ray_cluster, stdlib_text):
    import ray

    counts = count_words(iter([stdlib_text[:50_000]]), pattern="o200k")
    counts.dropped_words, counts.dropped_count = 3, 7
    back = ray.get(ray.put(counts))
    assert back == counts and (back.dropped_words, back.dropped_count) == (3, 7)
    assert back.pattern == counts.pattern


def test_other_inputs_are_refused_before_the_cluster_is_asked(shards):
    with pytest.raises(ConfigError, match="takes shard files"):
        count_words_on_ray(iter(["some text"]))
    with pytest.raises(tokenmill.PatternError):
        count_words_on_ray(shards / "part0.txt", pattern="(unclosed")


def test_token_shards_written_on_the_cluster_equal_one_machine(ray_cluster, shards, tmp_path):
    from tokenmill.distributed import encode_corpus_on_ray
    from tokenmill.shards import encode_corpus

    files = sorted(shards.glob("*.parquet")) + sorted(shards.glob("*.jsonl"))
    counts = count_words(files, text_field="text", special_tokens=["<|endoftext|>"])
    tok = tokenmill.train_bpe(counts, vocab_size=400, special_tokens=["<|endoftext|>"])
    local = encode_corpus(files, tok, tmp_path / "local", text_field="text", sequence_length=128, show_progress=False)
    on_ray = encode_corpus_on_ray(
        files, tok, tmp_path / "ray", text_field="text", sequence_length=128, show_progress=False
    )
    assert on_ray == local and local["documents"] == 200
    names = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "ray").iterdir())
    for name in names:
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    # Run again: every shard is complete, nothing is encoded or rewritten.
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "ray").iterdir() if p.suffix != ".json"}
    assert encode_corpus_on_ray(files, tok, tmp_path / "ray", text_field="text", sequence_length=128) == local
    assert before == {p.name: p.stat().st_mtime_ns for p in (tmp_path / "ray").iterdir() if p.suffix != ".json"}
