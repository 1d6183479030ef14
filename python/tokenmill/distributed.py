"""Counting words and writing token shards on a Ray cluster (``pip install 'tokenmill[ray]'``).

Counting: one task per shard with tokenmill's Rust counter, then a tree of merge tasks, each
pruning to the memory budget. Token shards (`encode_corpus_on_ray`): one task per input file.

The plan people use on large corpora — count on the cluster, train on one machine:

>>> import tokenmill
>>> counts = count_words_on_ray(["corpus.txt", "en.txt", "de.txt"], max_memory="64MB")
>>> counts.save("corpus.counts")
>>> tok = tokenmill.train_bpe(tokenmill.WordCounts.load("corpus.counts"), vocab_size=400)
>>> tok.tokenize("Hello world")
['Hello', 'Ġworld']

Every task is a pure function of its shard: it returns its counts and writes nothing, so a task
that Ray retries after a worker died starts afresh and only the result of the attempt that
finished is ever merged — nothing is counted twice. The tree has a fixed shape (shards in path
order, `fan_in` per merge), so the result is the same whatever order tasks finish in; with no
pruning it equals `count_words` over the same files.

Shard paths must name the same files on every node (a shared or network file system, or the
same copy everywhere). `ray` is imported only when these functions are called.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from tokenmill import _checks, _core
from tokenmill.columns import DEFAULT_COLUMN, column_buffers
from tokenmill.corpus import resolve_files
from tokenmill.counting import WordCounts, count_words, parse_size
from tokenmill.progress import Progress
from tokenmill.tokenizer import Tokenizer

_CONNECT_TIMEOUT_SECONDS = 10.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise _core.ConfigError("counting on a Ray cluster needs ray: pip install 'tokenmill[ray]'") from None
    return ray


def connect(address: str | None = None) -> Any:
    """Connects to the Ray cluster at `address` (``host:port``, ``ray://host:port`` or
    ``auto``; None: the running one, `RAY_ADDRESS`, or a new local one) unless this process is
    connected already. An address that cannot be reached is a `ConfigError` within seconds
    (Ray itself would keep retrying)."""
    ray = import_ray()
    if address is not None:
        _checks.text("address", address, nonempty=True)
        _check_reachable(address)
    if not ray.is_initialized():
        try:
            ray.init(address=address, logging_level="warning", log_to_driver=True)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise _core.ConfigError(f"cannot connect to the Ray cluster at {address or 'auto'}: {e}") from None
    return ray


def _check_reachable(address: str) -> None:
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        if address.startswith("ray://"):
            host, port = hostport, "10001"
        else:
            raise _core.ConfigError(f"Ray address {address!r}: expected host:port, ray://host:port or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_TIMEOUT_SECONDS) as conn:
            speaks_grpc = _answers_http2(conn)
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise _core.ConfigError(f"cannot reach the Ray cluster at {address}: {reason}") from None
    if not speaks_grpc:
        # ray.init would wait minutes for a handshake that never comes.
        raise _core.ConfigError(f"{address} accepts connections but is not a Ray cluster (it does not speak gRPC)")


# HTTP/2's client preface and an empty SETTINGS frame: a gRPC server (Ray's GCS, or its client
# server behind ray://) answers with a SETTINGS frame of its own.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _answers_http2(conn: socket.socket) -> bool:
    """Whether the server on `conn` answers HTTP/2's preface with a SETTINGS frame (frame type
    4, the fourth byte of the 9-byte frame header) within the connect timeout."""
    conn.settimeout(_CONNECT_TIMEOUT_SECONDS)
    try:
        conn.sendall(_HTTP2_HELLO)
        header = b""
        while len(header) < 9:
            chunk = conn.recv(9 - len(header))
            if not chunk:
                return False
            header += chunk
    except (TimeoutError, OSError):
        return False
    return header[3] == 4


class TaskError(Exception):
    """A tokenmill error raised in a Ray task, carried back by class name (the extension's
    exception classes do not pickle) and raised again as itself by `ray_get`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(kind, message)
        self.kind, self.message = kind, message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@contextlib.contextmanager
def reporting_errors() -> Iterator[None]:
    """Wraps a task's body: a tokenmill error leaves the task as a `TaskError`."""
    try:
        yield
    except _core.TokenmillError as e:
        raise TaskError(type(e).__name__, str(e)) from None


def ray_get(ray: Any, refs: Any) -> Any:
    """`ray.get`, with a task's tokenmill error raised as itself and a worker that cannot import
    tokenmill said plainly."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, TaskError):
            kind = getattr(_core, cause.kind, _core.TokenmillError)
            raise kind(cause.message) from None
        text = str(e)
        if isinstance(cause, ModuleNotFoundError) and cause.name == "tokenmill" or "No module named 'tokenmill" in text:
            raise _core.ConfigError(
                "a Ray worker cannot import tokenmill: install the same tokenmill on every node "
                "(or pass runtime_env={'pip': ['tokenmill']})"
            ) from None
        raise _core.TokenmillError(f"a Ray task failed: {_first_line(text)}") from e


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else text


def count_words_on_ray(
    corpus: object,
    *,
    pattern: str = "cl100k",
    normalizer: str = "none",
    special_tokens: Iterable[str] = (),
    byte_level: bool = True,
    text_field: str | None = None,
    max_memory: int | str | None = None,
    address: str | None = None,
    fan_in: int = 8,
    cpus_per_task: int = 1,
    max_retries: int = 3,
    runtime_env: dict[str, Any] | None = None,
    show_progress: bool | None = None,
) -> WordCounts:
    """`count_words` on a Ray cluster: one task per shard (files: paths, globs, directories,
    as `count_words` takes them; or a `ray.data.Dataset` with a text column), merged by a tree
    of tasks of `fan_in` tables each. With `max_memory`, every table — a shard's, a merge's —
    is pruned to that budget, so no task and no result holds more; `dropped_count` sums what
    was pruned. Each shard task asks Ray for `cpus_per_task` CPUs and counts on that many
    threads. A failed task is retried `max_retries` times. `runtime_env` is passed to the
    tasks (e.g. ``{"pip": ["tokenmill"]}`` for nodes without it).

    >>> import tokenmill
    >>> counts = count_words_on_ray(["en.txt", "de.txt"], pattern="whitespace")
    >>> counts == tokenmill.count_words(["en.txt", "de.txt"], pattern="whitespace")
    True
    """
    specials = _checks.texts("special_tokens", special_tokens)
    _checks.text("text_field", text_field, optional=True)
    _checks.count("fan_in", fan_in, minimum=2, maximum=1024)
    _checks.count("max_retries", max_retries, maximum=100)
    _checks.count("cpus_per_task", cpus_per_task, minimum=1, maximum=4096)
    _checks.flag("show_progress", show_progress, optional=True)
    _checks.flag("byte_level", byte_level)
    # Built here once so a bad pattern or normalizer fails before anything is sent to the cluster.
    _core.WordCounter(_checks.pattern(pattern), _checks.text("normalizer", normalizer), specials, byte_level)
    budget = parse_size(max_memory) if max_memory is not None else None
    config = {
        "pattern": pattern,
        "normalizer": normalizer,
        "special_tokens": specials,
        "byte_level": byte_level,
        "text_field": text_field,
    }
    # What to count is settled (and a missing file reported) before the cluster is asked.
    from_dataset = _is_dataset(corpus)
    files = None if from_dataset else resolve_files(corpus)
    if files is None and not from_dataset:
        raise _core.ConfigError(
            "count_words_on_ray takes shard files (paths, globs or directories every node can read) "
            f"or a ray.data.Dataset, not {type(corpus).__name__}"
        )
    ray = connect(address)
    options: dict[str, Any] = {
        "max_retries": max_retries,
        "retry_exceptions": False,
        "runtime_env": _with_threads(runtime_env, cpus_per_task),
    }
    sizes: list[int] = []
    size_refs: list[Any] = []
    if files is None:
        parts = _count_dataset(ray, corpus, config, budget, options)
    else:
        count = ray.remote(_count_shard).options(num_returns=2, num_cpus=cpus_per_task, **options)
        parts = []
        for f in files:
            counts_ref, size_ref = count.remote(os.path.abspath(f), config, budget)
            parts.append(counts_ref)
            size_refs.append(size_ref)
        sizes = [f.stat().st_size for f in files]
    if not parts:
        raise _core.CorpusError("the corpus holds no shards")
    merge = ray.remote(_merge_counts).options(**options)
    # A dataset's parts are tables of saved counts: merged (read) once even when there is one.
    while len(parts) > 1 or from_dataset:
        parts = [merge.remote(budget, *parts[i : i + fan_in]) for i in range(0, len(parts), fan_in)]
        from_dataset = False
    _follow(ray, size_refs, sizes, show_progress)
    return ray_get(ray, parts[0])


def _with_threads(runtime_env: dict[str, Any] | None, threads: int) -> dict[str, Any]:
    """`runtime_env` with the Rust thread pool sized to the task's CPUs (a task on a 64-core
    node must not start 64 threads beside 63 other tasks), unless the caller sized it."""
    env = dict(runtime_env or {})
    env_vars = dict(env.get("env_vars") or {})
    env_vars.setdefault("RAYON_NUM_THREADS", str(threads))
    env["env_vars"] = env_vars
    return env


def _follow(ray: Any, size_refs: list[Any], sizes: list[int], show_progress: bool | None) -> None:
    """Moves the bar as shards finish (bytes of shard files; a task's error surfaces here)."""
    if not size_refs:
        return
    by_ref = dict(zip(size_refs, sizes, strict=True))
    pending = list(size_refs)
    with Progress("counting", sum(sizes), "B", show_progress) as bar:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=1.0, fetch_local=False)
            for ref in ready:
                ray_get(ray, ref)
                bar.update(by_ref[ref])


def _count_shard(path: str, config: dict[str, Any], budget: int | None) -> tuple[WordCounts, int]:
    """One shard's counts (pruned to `budget`), and the shard's size on disk for progress."""
    with reporting_errors():
        counts = _count_file(path, config, budget)
    _fail_once_for_tests(path)
    return counts, os.path.getsize(path)


def _count_file(path: str, config: dict[str, Any], budget: int | None) -> WordCounts:
    return count_words(
        [Path(path)],
        pattern=config["pattern"],
        normalizer=config["normalizer"],
        special_tokens=config["special_tokens"],
        byte_level=config["byte_level"],
        text_field=config["text_field"],
        max_memory=budget,
        show_progress=False,
    )


def _fail_once_for_tests(path: str) -> None:
    """Testing hook: with `TOKENMILL_TEST_CRASH_DIR` set (through `runtime_env`), the first
    attempt at each shard kills its worker after counting, as a lost node would, and Ray retries."""
    crash_dir = os.environ.get("TOKENMILL_TEST_CRASH_DIR")
    if crash_dir:
        marker = Path(crash_dir) / (Path(path).name + ".crashed")
        if not marker.exists():
            marker.touch()
            os._exit(1)


def _merge_counts(budget: int | None, *parts: Any) -> WordCounts:
    """The sum of `parts` (`WordCounts`, or Arrow tables of saved counts from a dataset),
    pruned to 3/4 of `budget` when it passes the budget (as `count_words` prunes)."""
    with reporting_errors():
        return _merge(budget, parts)


def _merge(budget: int | None, parts: tuple[Any, ...]) -> WordCounts:
    tables = [p for part in parts for p in _as_counts(part)]
    if not tables:
        raise _core.CorpusError("the dataset holds no rows")
    total = tables[0]
    for t in tables[1:]:
        total = total + t
    if len(tables) == 1:
        total = WordCounts(total._core.copy(), total.dropped_words, total.dropped_count)
    if budget is not None and total.memory_bytes > budget:
        words, mass = total._core.prune_to(budget * 3 // 4)
        total.dropped_words += words
        total.dropped_count += mass
    return total


def _as_counts(part: Any) -> list[WordCounts]:
    if isinstance(part, WordCounts):
        return [part]
    rows = part.to_pydict()
    return [
        WordCounts(WordCounts.from_bytes(data)._core, w, c)
        for data, w, c in zip(rows["counts"], rows["dropped_words"], rows["dropped_count"], strict=True)
    ]


def _is_dataset(corpus: object) -> bool:
    # Only a ray.data object brings ray.data in (it needs pandas, which counting files does not).
    if not (type(corpus).__module__ or "").startswith("ray.data"):
        return False
    import ray.data

    return isinstance(corpus, ray.data.Dataset)


def _count_dataset(
    ray: Any, dataset: Any, config: dict[str, Any], budget: int | None, options: dict[str, Any]
) -> list[Any]:
    """Counts each block of a Ray Data dataset with `map_batches` over Arrow batches; returns
    references to one-row tables of saved counts, merged by the caller's tree."""
    column = config["text_field"] or DEFAULT_COLUMN
    names = dataset.schema().names
    if column not in names:
        cols = ", ".join(map(repr, names))
        raise _core.FormatError(f"the dataset has no column {column!r} (columns: {cols}); pass text_field=")
    counted = dataset.select_columns([column]).map_batches(
        _count_batch,
        batch_format="pyarrow",
        batch_size=None,
        zero_copy_batch=True,
        fn_kwargs={"column": column, "config": config, "budget": budget},
        max_retries=options["max_retries"],
        runtime_env=options["runtime_env"],
    )
    try:
        return list(counted.to_arrow_refs())
    except ray.exceptions.RayError as e:
        text = str(e)
        for kind in ("FormatError", "CorpusError", "ConfigError", "TokenmillError"):
            if f"TaskError: {kind}: " in text:
                message = text.split(f"TaskError: {kind}: ", 1)[1].splitlines()[0]
                raise getattr(_core, kind)(message) from None
        raise _core.TokenmillError(f"counting the dataset failed: {_first_line(text)}") from e


def _count_batch(batch: Any, *, column: str, config: dict[str, Any], budget: int | None) -> Any:
    with reporting_errors():
        return _count_arrow(batch, column, config, budget)


def _count_arrow(batch: Any, column: str, config: dict[str, Any], budget: int | None) -> Any:
    import pyarrow as pa

    counter = _core.WordCounter(config["pattern"], config["normalizer"], config["special_tokens"], config["byte_level"])
    data, offsets, width = column_buffers(batch.column(column))
    counter.add_column(data, offsets, width)
    words = mass = 0
    if budget is not None and counter.memory_bytes > budget:
        words, mass = counter.prune_to(budget * 3 // 4)
    saved = WordCounts(counter).to_bytes()
    return pa.table({"counts": [saved], "dropped_words": [words], "dropped_count": [mass]})


def encode_corpus_on_ray(
    corpus: object,
    tokenizer: Tokenizer,
    output_dir: str | os.PathLike[str],
    *,
    text_field: str | None = None,
    separator: str | None = None,
    end_of_document: int | str | None = None,
    allowed_special: str | Collection[str] = (),
    sequence_length: int | None = None,
    overwrite: bool = False,
    address: str | None = None,
    cpus_per_task: int = 1,
    max_retries: int = 3,
    runtime_env: dict[str, Any] | None = None,
    show_progress: bool | None = None,
) -> dict[str, Any]:
    """`tokenmill.shards.encode_corpus` on a Ray cluster: one task per input file, each writing
    its shard into `output_dir` (which every node must see: a shared file system) on
    `cpus_per_task` threads; the driver records each finished shard in the manifest. The files
    are the same, byte for byte, as one machine writes, and an interrupted run resumes the same way.

    >>> from tokenmill.shards import encode_corpus
    >>> m = encode_corpus_on_ray(["en.txt", "de.txt"], tok, "tokens/", separator="\\n")
    >>> m["documents"], m["tokens"]
    (6, 47)
    >>> one = encode_corpus(["en.txt", "de.txt"], tok, "here/", separator="\\n")
    >>> [s["sha256"] for s in m["shards"]] == [s["sha256"] for s in one["shards"]]
    True
    """
    from tokenmill import shards

    settings = shards.settings_for(tokenizer, end_of_document, sequence_length, text_field, allowed_special, separator)
    _checks.count("cpus_per_task", cpus_per_task, minimum=1, maximum=4096)
    _checks.count("max_retries", max_retries, maximum=100)
    files = resolve_files(corpus)
    if files is None:
        raise _core.ConfigError(
            "encode_corpus_on_ray takes files (paths, globs or directories every node can read), "
            f"not {type(corpus).__name__}"
        )
    out = shards.prepare_output(output_dir, settings, overwrite)
    manifest = shards.read_manifest(out, settings) if not overwrite else None
    parts = shards.file_parts(files)
    entries = dict(shards.completed(out, manifest, parts))
    ray = connect(address)
    options: dict[str, Any] = {
        "max_retries": max_retries,
        "retry_exceptions": False,
        "num_cpus": cpus_per_task,
        "runtime_env": _with_threads(runtime_env, cpus_per_task),
    }
    encode = ray.remote(_encode_shard).options(**options)
    tok_ref = ray.put(tokenizer)
    pending = [
        encode.remote(part, tok_ref, settings, os.path.abspath(out), cpus_per_task)
        for part in parts
        if part.index not in entries
    ]
    with Progress("encoding", None, "tokens", show_progress) as bar:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=1.0)
            for ref in ready:
                entry = ray_get(ray, ref)
                entries[entry["index"]] = entry
                shards.write_manifest(out, settings, entries, complete=False)
                bar.update(entry["tokens"])
    return shards.write_manifest(out, settings, entries, complete=True)


def _encode_shard(part: Any, tokenizer: Tokenizer, settings: Any, out: str, threads: int) -> dict[str, Any]:
    from tokenmill import shards

    with reporting_errors():
        return shards.encode_part(part, tokenizer, settings, Path(out), threads)
