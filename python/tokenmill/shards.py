"""Token shards for training: a corpus encoded into flat id files that `numpy.memmap` reads.

Layout of an output directory (format version 1)::

    manifest.json        what was encoded and how; the shards that are complete
    00000.bin            token ids of shard 0, documents back to back, each followed by the
                         end-of-document id; little-endian uint16 when every id < 65536
                         (``n_vocab <= 65536``), else little-endian uint32; no header
    00000.idx            little-endian uint64, documents + 1 values: where each document
                         starts in 00000.bin, in tokens (first 0, last the shard's token count);
                         document j is ``bin[idx[j]:idx[j+1]]``, its end-of-document id last
    00000.cu.bin         with `sequence_length` L only: little-endian int32 cu_seqlens of every
                         packed row, row after row; row r is ``bin[r*L:(r+1)*L]`` and its
                         document boundaries are ``cu[cu_idx[r]:cu_idx[r+1]]`` (0 first, L last)
    00000.cu.idx         little-endian uint64, rows + 1 values: where each row's cu_seqlens start

Reading with numpy::

    m = json.load(open("out/manifest.json"))
    ids = np.memmap("out/00000.bin", dtype=m["dtype"], mode="r")     # "<u2" or "<u4"
    starts = np.fromfile("out/00000.idx", dtype="<u8")

``manifest.json`` holds ``format`` (``"tokenmill-token-shards"``), ``version`` (1),
``tokenizer_sha256`` (of the tokenizer's saved JSON), ``n_vocab``, ``dtype`` (``"<u2"`` or
``"<u4"``), ``end_of_document`` (the id), ``sequence_length`` (null or L), ``text_field``,
``allowed_special``, ``complete`` (every input encoded), ``documents`` and ``tokens`` (totals of
the shards listed), and ``shards``: for each complete shard its ``index``, ``source`` (the input
file, or the range of documents of an in-memory corpus), ``source_bytes``, ``documents``,
``tokens`` (end-of-document ids included), ``rows`` and ``unpacked_tokens`` (packing: the tail
shorter than a row, in no row), and ``sha256`` of its ``.bin``.

One shard per input file (per `documents_per_shard` documents of an in-memory corpus). Each file
is written under a temporary name and renamed; the manifest, rewritten atomically, lists a shard
only once all its files are in place. Run again after an interruption and the shards the
manifest lists (with files of the sizes it says) are kept, the rest encoded again: nothing is
duplicated and nothing half-written is taken as complete.

Documents: a Parquet row (column `text_field`, default ``"text"``), a JSON Lines line (with
`text_field`), a dict's `text_field`, a string, a row of an Arrow table or Hugging Face dataset;
a plain text file (``.txt``, ``.gz``, ``.zst``) is one document.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
import queue
import re
import secrets
import sys
import threading
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenmill import _checks, _core, shard_checks
from tokenmill._files import remove_stale_temp_files, temp_name, write_atomically
from tokenmill.columns import DEFAULT_COLUMN, arrow_batches, column_buffers, is_parquet, parquet_batches
from tokenmill.corpus import batched_by_size, document_text, resolve_files, text_batches
from tokenmill.progress import Progress
from tokenmill.tokenizer import Tokenizer

FORMAT = "tokenmill-token-shards"
VERSION = 1
MANIFEST = "manifest.json"
_TEXT_BATCH_BYTES = 8 << 20


@dataclass(frozen=True)
class Settings:
    """What every shard of a directory is encoded with (checked again on resume)."""

    tokenizer_sha256: str
    n_vocab: int
    dtype: str
    end_of_document: int
    sequence_length: int | None
    text_field: str | None
    allowed_special: str | list[str]
    separator: str | None = None

    @property
    def id_width(self) -> int:
        return 2 if self.dtype == "<u2" else 4

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "tokenizer_sha256": self.tokenizer_sha256,
            "n_vocab": self.n_vocab,
            "dtype": self.dtype,
            "end_of_document": self.end_of_document,
            "sequence_length": self.sequence_length,
            "text_field": self.text_field,
            "allowed_special": self.allowed_special,
            "separator": self.separator,
        }


@dataclass(frozen=True)
class Part:
    """One shard's input: a file, or documents `start`..`stop` of an in-memory corpus."""

    index: int
    source: str
    source_bytes: int
    path: str | None = None
    start: int = 0
    stop: int = 0


def settings_for(
    tokenizer: Tokenizer,
    end_of_document: int | str | None,
    sequence_length: int | None,
    text_field: str | None,
    allowed_special: str | Collection[str],
    separator: str | None = None,
) -> Settings:
    if not isinstance(tokenizer, Tokenizer):
        raise _core.ConfigError(f"tokenizer must be a tokenmill.Tokenizer, got {type(tokenizer).__name__}")
    _checks.count("sequence_length", sequence_length, minimum=1, maximum=2**31 - 1, optional=True)
    _checks.text("text_field", text_field, optional=True, nonempty=True)
    _checks.text("separator", separator, optional=True, nonempty=True)
    if separator is not None and text_field is not None:
        raise _core.ConfigError("give separator= (text files) or text_field= (JSON Lines, Parquet), not both")
    if allowed_special != "all":
        allowed_special = sorted(_checks.texts("allowed_special", allowed_special))
    n_vocab = tokenizer.n_vocab
    return Settings(
        tokenizer_sha256=hashlib.sha256(tokenizer._core.to_json().encode("utf-8")).hexdigest(),
        n_vocab=n_vocab,
        dtype="<u2" if n_vocab <= 2**16 else "<u4",
        end_of_document=_end_of_document_id(tokenizer, end_of_document),
        sequence_length=sequence_length,
        text_field=text_field,
        allowed_special=allowed_special,
        separator=separator,
    )


def _end_of_document_id(tokenizer: Tokenizer, token: int | str | None) -> int:
    if token is None:
        eot = tokenizer.special_tokens.get("<|endoftext|>")
        if eot is None:
            raise _core.ConfigError(
                "this tokenizer has no <|endoftext|> token: give end_of_document= (a special token or an id)"
            )
        return eot
    if isinstance(token, str):
        found = tokenizer._core.special_id(token)
        if found is None:
            found = tokenizer._core.token_id(token.encode("utf-8"))
        if found is None:
            raise _core.ConfigError(f"end_of_document {token!r} is not a token of this tokenizer")
        return found
    return _checks.count("end_of_document", token, maximum=tokenizer.n_vocab - 1)


def encode_corpus(
    corpus: object,
    tokenizer: Tokenizer,
    output_dir: str | os.PathLike[str],
    *,
    text_field: str | None = None,
    separator: str | None = None,
    end_of_document: int | str | None = None,
    allowed_special: str | Collection[str] = (),
    sequence_length: int | None = None,
    documents_per_shard: int = 100_000,
    num_threads: int | None = None,
    overwrite: bool = False,
    show_progress: bool | None = None,
) -> dict[str, Any]:
    """Encodes `corpus` into token shards in `output_dir` (layout: this module's docstring) and
    returns the manifest. Resumes where an earlier run stopped: complete shards are kept.
    Special-token text in the documents is ordinary text unless `allowed_special` names it
    (or is ``"all"``). `sequence_length` also writes packed rows' cu_seqlens. Text files are
    one document each, or with `separator` the pieces between its occurrences (empty pieces are
    no documents); they and JSON Lines are read and encoded in Rust, no Python object per
    document.

    >>> m = encode_corpus(["en.txt", "de.txt"], tok, "tokens/", separator="\\n")   # a line a document
    >>> m["dtype"], m["end_of_document"], m["documents"], m["tokens"]   # cl100k_base: ids >= 65536
    ('<u4', 100257, 6, 47)
    >>> [(s["source"].rsplit("/", 1)[-1], s["documents"], s["tokens"]) for s in m["shards"]]
    [('en.txt', 3, 22), ('de.txt', 3, 25)]
    """
    settings = settings_for(tokenizer, end_of_document, sequence_length, text_field, allowed_special, separator)
    _checks.count("documents_per_shard", documents_per_shard, minimum=1)
    _checks.count("num_threads", num_threads, minimum=1, maximum=4096, optional=True)
    out = prepare_output(output_dir, settings, overwrite)
    manifest = read_manifest(out, settings) if not overwrite else None
    files = resolve_files(corpus)
    if files is not None:
        parts = file_parts(files)
        done = completed(out, manifest, parts)
        entries = dict(done)
        with Progress("encoding", None, "tokens", show_progress) as bar:
            for part in parts:
                if part.index in done:
                    continue
                entries[part.index] = encode_part(part, tokenizer, settings, out, num_threads, bar.update)
                write_manifest(out, settings, entries, complete=False)
        return write_manifest(out, settings, entries, complete=True)
    if separator is not None:
        raise _core.ConfigError("separator= applies to text files; this corpus is not files")
    return _encode_in_memory(
        corpus, tokenizer, settings, out, manifest, documents_per_shard, num_threads, show_progress
    )


def prepare_output(output_dir: str | os.PathLike[str], settings: Settings, overwrite: bool) -> Path:
    out = Path(output_dir)
    if not os.fspath(output_dir):
        raise _core.ConfigError("the output directory name is empty")
    if out.exists() and not out.is_dir():
        raise _core.ConfigError(f"{out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _core.CorpusError(f"{out}: {e.strerror}") from None
    if overwrite:
        # Only the files this module writes: other files in the directory are left alone.
        for f in out.iterdir():
            if f.name == MANIFEST or _SHARD_FILE.fullmatch(f.name):
                f.unlink()
    # Temporary files a killed run left, of every shard (a shard kept on resume is never
    # written again, so its writer would not see them) and of the manifest.
    for name in {m.group(1) for f in out.iterdir() if (m := _TEMP_OF.fullmatch(f.name))}:
        if name == MANIFEST or _SHARD_FILE.fullmatch(name):
            remove_stale_temp_files(out / name)
    return out


_SHARD_FILE = re.compile(r"[0-9]{5,}(?:\.cu)?\.(?:bin|idx)")
# A temporary file's name: `.NAME.PID.NONCE.tmp` (see `tokenmill._files.temp_name`).
_TEMP_OF = re.compile(r"\.(.+)\.[0-9]+\.[0-9a-f]{8}\.tmp")


def read_manifest(out: Path, settings: Settings | None = None) -> dict[str, Any] | None:
    """The manifest of `out` (None if there is none), its fields checked (`shard_checks`); with
    `settings`, a `ConfigError` when the shards there were made differently."""
    path = out / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise _core.FormatError(f"{path}: not a token-shard manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _core.FormatError(f"{path}: not a token-shard manifest")
    if manifest.get("version") != VERSION:
        raise _core.FormatError(f"{path}: format version {manifest.get('version')}; this tokenmill reads {VERSION}")
    shard_checks.checked_manifest(path, manifest)
    if settings is not None:
        differ = [k for k, v in settings.header().items() if manifest.get(k) != v]
        if differ:
            raise _core.ConfigError(
                f"{out} holds shards made with another {', '.join(differ)}; "
                "use a new directory, or overwrite=True (--overwrite) to start again"
            )
    return manifest


def file_parts(files: list[Path]) -> list[Part]:
    parts = []
    for i, f in enumerate(files):
        try:
            size = f.stat().st_size
        except OSError as e:
            raise _core.CorpusError(f"{f}: {e.strerror}") from None
        parts.append(Part(i, os.path.abspath(f), size, path=os.path.abspath(f)))
    return parts


def completed(out: Path, manifest: dict[str, Any] | None, parts: list[Part]) -> dict[int, dict[str, Any]]:
    """The shards of `parts` the manifest lists as complete, with their files in place."""
    if manifest is None:
        return {}
    by_index = {p.index: p for p in parts}
    done = {}
    for entry in manifest.get("shards", []):
        part = by_index.get(entry.get("index"))
        if part is None or entry.get("source") != part.source or entry.get("source_bytes") != part.source_bytes:
            continue
        if all(_has_size(out / name, size) for name, size in _expected_files(entry, manifest["dtype"])):
            done[part.index] = entry
    return done


def _expected_files(entry: dict[str, Any], dtype: str) -> list[tuple[str, int]]:
    name = shard_name(entry["index"])
    files = [
        (name + ".bin", entry["tokens"] * (2 if dtype == "<u2" else 4)),
        (name + ".idx", 8 * (entry["documents"] + 1)),
    ]
    if entry.get("rows") is not None:
        files += [(name + ".cu.idx", 8 * (entry["rows"] + 1)), (name + ".cu.bin", 4 * entry["cu_seqlens"])]
    return files


def _has_size(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size == size
    except OSError:
        return False


def shard_name(index: int) -> str:
    return f"{index:05d}"


def write_manifest(
    out: Path, settings: Settings, entries: dict[int, dict[str, Any]], *, complete: bool
) -> dict[str, Any]:
    shards = [entries[i] for i in sorted(entries)]
    manifest = dict(settings.header())
    manifest.update(
        complete=complete,
        documents=sum(s["documents"] for s in shards),
        tokens=sum(s["tokens"] for s in shards),
        shards=shards,
    )
    write_atomically(out / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    return manifest


# -- encoding one shard ------------------------------------------------------------------------


def encode_part(
    part: Part,
    tokenizer: Tokenizer,
    settings: Settings,
    out: Path,
    num_threads: int | None,
    on_tokens: Any = lambda n: None,
    documents: Iterable[Any] | None = None,
) -> dict[str, Any]:
    """Encodes one part into its shard files (each written, then renamed) and returns its
    manifest entry. `documents` (batches: Arrow arrays or lists of str) replaces reading `part`."""
    name = shard_name(part.index)
    digest = hashlib.sha256()
    counts = array("Q")
    with ShardWriter(out / (name + ".bin")) as ids_file:

        def store(ids: bytes) -> None:
            ids_file.write(ids)
            digest.update(ids)

        behind = _Behind(store)

        def write(ids: bytes, doc_counts: bytes, *_: int) -> None:
            behind.put(ids)
            more = array("Q")
            more.frombytes(doc_counts)
            counts.extend(more)
            on_tokens(len(ids) // settings.id_width)

        try:
            if documents is None and part.path is not None and not is_parquet(part.path):
                # Text and JSON Lines files: read, cut and encoded in Rust, batch by batch.
                tokenizer._core.encode_files_flat(
                    [part.path],
                    settings.separator,
                    settings.text_field,
                    settings.allowed_special,
                    settings.end_of_document,
                    settings.id_width,
                    num_threads,
                    write,
                )
            else:
                for batch in documents if documents is not None else read_part(part, settings.text_field):
                    write(*encode_batch(tokenizer, batch, settings, num_threads))
        except BaseException:
            behind.close(check=False)
            raise
        behind.close()
    starts = array("Q", itertools.accumulate(counts, initial=0))
    tokens = starts[-1]
    _write_new(out / (name + ".idx"), _little_endian(starts))
    entry: dict[str, Any] = {
        "index": part.index,
        "source": part.source,
        "source_bytes": part.source_bytes,
        "documents": len(counts),
        "tokens": tokens,
        "sha256": digest.hexdigest(),
    }
    if settings.sequence_length is not None:
        cu, rows = packed_rows(starts, settings.sequence_length)
        _write_new(out / (name + ".cu.bin"), _little_endian(cu))
        _write_new(out / (name + ".cu.idx"), _little_endian(rows))
        entry.update(rows=len(rows) - 1, cu_seqlens=len(cu), unpacked_tokens=tokens % settings.sequence_length)
    return entry


class _Behind:
    """Hands each batch's ids to `sink` (write and hash) on a thread of its own, so the encoder
    goes on with the next batch meanwhile: file writes and hashlib release the GIL. At most two
    batches wait; the first error is raised at the next `put` or at `close`."""

    def __init__(self, sink: Callable[[bytes], None]) -> None:
        self._sink = sink
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=2)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tokenmill-shard-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._sink(data)
                except BaseException as e:  # noqa: BLE001 - handed to the encoding thread
                    self._error = e

    def put(self, data: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(data)

    def close(self, check: bool = True) -> None:
        self._queue.put(None)
        self._thread.join()
        if check and self._error is not None:
            raise self._error


def packed_rows(starts: array, length: int) -> tuple[array, array]:
    """cu_seqlens of each full row of `length` tokens (document boundaries in the row, 0 first,
    `length` last), flat, and where each row's start.

    >>> cu, rows = packed_rows(array("Q", [0, 3, 10, 12]), 4)   # documents of 3, 7 and 2 tokens
    >>> list(cu), list(rows)                                    # rows [0,4) [4,8) [8,12)
    ([0, 3, 4, 0, 4, 0, 2, 4], [0, 3, 5, 8])
    """
    n_rows = starts[-1] // length
    cu, rows = array("i"), array("Q", [0])
    j = 1  # the next document end to place
    for r in range(n_rows):
        lo, hi = r * length, (r + 1) * length
        cu.append(0)
        while j < len(starts) and starts[j] <= lo:
            j += 1
        while j < len(starts) and starts[j] < hi:
            cu.append(starts[j] - lo)
            j += 1
        cu.append(length)
        rows.append(len(cu))
    return cu, rows


def _little_endian(values: array) -> bytes:
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def encode_batch(tokenizer: Tokenizer, batch: Any, settings: Settings, num_threads: int | None) -> tuple[bytes, bytes]:
    """(flat ids, u64 per-document counts) of a batch: an Arrow string array or a list of str."""
    core = tokenizer._core
    args = (settings.allowed_special, frozenset(), settings.end_of_document, settings.id_width, num_threads)
    if isinstance(batch, list):
        return core.encode_flat(batch, *args)
    data, offsets, width = column_buffers(batch)
    return core.encode_column(data, offsets, width, *args)


def read_part(part: Part, text_field: str | None) -> Iterator[Any]:
    """A file's documents in batches (Arrow arrays for Parquet, lists of str otherwise)."""
    path = part.path
    assert path is not None
    if is_parquet(path):
        yield from parquet_batches(path, text_field or DEFAULT_COLUMN)
        return
    if text_field is None:
        yield [_read_text(path)]
        return
    yield from batched_by_size(_json_lines_texts(path, text_field), _TEXT_BATCH_BYTES)


def _json_lines_texts(path: str, text_field: str) -> Iterator[str]:
    """The `text_field` of each object of a JSON Lines file."""
    with _open_text(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise _core.FormatError(f"{path}: JSON Lines: line {n}: {e}") from None
            if not isinstance(row, dict):
                raise _core.FormatError(f"{path}: JSON Lines: line {n}: not an object")
            try:
                text = document_text(row, text_field, n)
            except _core.CorpusError:
                raise _core.FormatError(f'{path}: JSON Lines: line {n}: no string field "{text_field}"') from None
            yield text


def _open_text(path: str) -> Any:
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rt", encoding="utf-8", errors="strict")
        if path.endswith((".zst", ".zstd")):
            try:
                import zstandard
            except ImportError:
                raise _core.ConfigError(f"{path}: reading .zst here needs zstandard: pip install zstandard") from None
            import io

            raw = open(path, "rb")  # noqa: SIM115 - closed with the wrapper
            return io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True), encoding="utf-8")
        return open(path, encoding="utf-8", errors="strict")  # noqa: SIM115
    except OSError as e:
        raise _core.CorpusError(f"{path}: {e.strerror}") from None


def _read_text(path: str) -> str:
    try:
        with _open_text(path) as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise _core.CorpusError(f"{path}: invalid UTF-8 at byte offset {e.start}") from None


# -- in-memory corpora --------------------------------------------------------------------------


def _encode_in_memory(
    corpus: object,
    tokenizer: Tokenizer,
    settings: Settings,
    out: Path,
    manifest: dict[str, Any] | None,
    per_shard: int,
    num_threads: int | None,
    show_progress: bool | None,
) -> dict[str, Any]:
    """An iterable of str or dicts, an Arrow table or a dataset: shards of `per_shard` documents.
    On resume the documents of complete shards are read past, not encoded (the corpus must
    yield the same documents in the same order)."""
    kept = {e["index"]: e for e in (manifest or {}).get("shards", [])}
    entries: dict[int, dict[str, Any]] = {}
    with Progress("encoding", None, "tokens", show_progress) as bar:
        for index, batches in enumerate(_grouped(_document_batches(corpus, settings.text_field), per_shard)):
            start = index * per_shard
            source = f"documents {start}..{start + _batches_len(batches)}"
            part = Part(index, source, sum(_batch_bytes(b) for b in batches), start=start)
            old = kept.get(index)
            if old is not None and old.get("source") == source and old.get("source_bytes") == part.source_bytes:
                if completed(out, manifest, [part]):
                    entries[index] = old
                    continue
            entries[index] = encode_part(part, tokenizer, settings, out, num_threads, bar.update, documents=batches)
            write_manifest(out, settings, entries, complete=False)
    return write_manifest(out, settings, entries, complete=True)


def _document_batches(corpus: object, text_field: str | None) -> Iterator[Any]:
    column = text_field or DEFAULT_COLUMN
    arrow = arrow_batches(corpus, column)
    if arrow is not None:
        yield from arrow
        return
    if isinstance(corpus, (str, bytes, bytearray)) or not isinstance(corpus, Iterable):
        raise _core.CorpusError(
            "corpus must be files, an iterable of str or dicts, an Arrow table or a dataset, "
            f"not {type(corpus).__name__}"
        )
    yield from text_batches(corpus, column)


def _batches_len(batches: list[Any]) -> int:
    return sum(len(b) for b in batches)


def _batch_bytes(batch: Any) -> int:
    if isinstance(batch, list):
        return sum(len(t.encode("utf-8", "surrogatepass")) for t in batch)
    import pyarrow.compute as pc

    return pc.sum(pc.binary_length(batch)).as_py() or 0


def _grouped(batches: Iterator[Any], per_shard: int) -> Iterator[list[Any]]:
    """Batches regrouped into lists holding `per_shard` documents each (the last fewer)."""
    group: list[Any] = []
    have = 0
    for batch in batches:
        while batch is not None and len(batch):
            take = min(per_shard - have, len(batch))
            head, batch = (batch[:take], batch[take:]) if take < len(batch) else (batch, None)
            group.append(head)
            have += take
            if have == per_shard:
                yield group
                group, have = [], 0
    if group:
        yield group


# -- writing files -------------------------------------------------------------------------------


class ShardWriter:
    """A file written under a temporary name beside its target and renamed over it on success;
    removed on any failure, so a shard file exists only complete. A full disk is a
    `CorpusError` that says so."""

    def __init__(self, path: Path) -> None:
        self.path = path
        remove_stale_temp_files(path)
        self.tmp = path.parent / temp_name(path.name, os.getpid(), secrets.token_hex(4))
        try:
            fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as e:
            raise _core.CorpusError(f"{path}: {e.strerror}") from None
        self.file = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        try:
            self.file.write(data)
        except OSError as e:
            raise _write_error(self.path, e) from None

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        try:
            if kind is None:
                try:
                    self.file.flush()
                    os.fsync(self.file.fileno())
                    self.file.close()
                    os.replace(self.tmp, self.path)
                except OSError as e:
                    raise _write_error(self.path, e) from None
        finally:
            if not self.file.closed:
                try:
                    self.file.close()
                except OSError:
                    pass
            if self.tmp.exists():
                self.tmp.unlink()


def _write_error(path: Path, e: OSError) -> _core.CorpusError:
    return _core.CorpusError(
        f"{path}: {e.strerror or e}; the shard was not completed (nothing half-written is kept): "
        "make room and run again to resume"
    )


def _write_new(path: Path, data: bytes) -> None:
    with ShardWriter(path) as f:
        f.write(data)


# -- reading ------------------------------------------------------------------------------------


class TokenShards:
    """Reads an output directory with numpy (memory-mapped, nothing loaded).

    The ids of shard 0's second document, end-of-text token last:

    >>> manifest = encode_corpus("en.txt", tok, "tokens/", separator="\\n")
    >>> shards = TokenShards("tokens/")
    >>> shards.document(0, 1)
    memmap([  1687,    527,   2133,    311,    279,   6246,     13, 100257], dtype=uint32)
    >>> tok.decode(shards.document(0, 1).tolist())
    'We are going to the park.<|endoftext|>'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        manifest = read_manifest(self.path)
        if manifest is None:
            raise _core.CorpusError(f"{self.path}: no {MANIFEST} (not a token-shard directory)")
        self.manifest = manifest  # its fields checked by `read_manifest`
        # Each shard's files, checked against the manifest when first read.
        self._read: dict[int, tuple[Any, Any]] = {}

    def __len__(self) -> int:
        return len(self.manifest["shards"])

    def _stem(self, i: int) -> Path:
        shards = self.manifest["shards"]
        if not isinstance(i, int) or not -len(shards) <= i < len(shards):
            raise IndexError(f"shard {i!r} out of range: the directory holds {len(shards)}")
        return self.path / shard_name(shards[i]["index"])

    def _shard(self, i: int) -> tuple[Any, Any]:
        stem = self._stem(i)
        i %= len(self)
        if i not in self._read:
            self._read[i] = shard_checks.checked_shard(stem, self.manifest["shards"][i], self.manifest)
        return self._read[i]

    def tokens(self, i: int) -> Any:
        """Shard `i`'s ids (`numpy.memmap`)."""
        return self._shard(i)[0]

    def starts(self, i: int) -> Any:
        """Where each document of shard `i` starts, in tokens (documents + 1 values)."""
        return self._shard(i)[1]

    def document(self, i: int, j: int) -> Any:
        ids, starts = self._shard(i)
        documents = len(starts) - 1
        if not isinstance(j, int) or not -documents <= j < documents:
            raise IndexError(f"document {j!r} out of range: shard {i} holds {documents}")
        j %= documents
        return ids[starts[j] : starts[j + 1]]

    def packed(self, i: int) -> Iterator[tuple[Any, Any]]:
        """(row of `sequence_length` ids, its cu_seqlens) for each packed row of shard `i`."""
        ids, _ = self._shard(i)
        length = self.manifest["sequence_length"]
        cu, rows = shard_checks.checked_rows(self._stem(i), self.manifest["shards"][i], self.manifest)
        for r in range(len(rows) - 1):
            yield ids[r * length : (r + 1) * length], cu[rows[r] : rows[r + 1]]
