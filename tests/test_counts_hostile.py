"""Word-count files whose header fields say something else — any JSON value for any setting, sizes
and counts of any magnitude, words that are not UTF-8 — with the checksum made to match, so the
reader cannot lean on it: loading and training on them either works or raises a tokenmill error
naming the file, in a child with memory and time limits (a crash or a hang fails the test)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from bounded import bounded, expect_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)
SETTINGS = ["pattern", "keep_gaps", "normalizer", "special_tokens", "byte_level"]
HUGE = st.one_of(st.integers(0, 300), st.integers(0, 2**64 - 1))


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def counts_file(meta: Any, text_bytes: int, words: list[tuple[bytes, int]], declared: int | None) -> bytes:
    """A version-2 count file with these fields, its checksum right."""
    header = json.dumps(meta).encode() if not isinstance(meta, bytes) else meta
    body = b"TMWC" + (2).to_bytes(4, "little") + _varint(len(header)) + header + _varint(text_bytes)
    body += _varint(len(words) if declared is None else declared)
    for word, n in words:
        body += _varint(len(word)) + word + _varint(n)
    return body + zlib.crc32(body).to_bytes(4, "little")


def _load_and_train(path: Path) -> None:
    """Run in a bounded child: a load error names the file; what loads trains and is saved again."""
    try:
        counts = tokenmill.WordCounts.load(path)
    except tokenmill.TokenmillError as e:
        assert str(path) in str(e), e
        return
    counts.most_common(3)
    counts.save(path.with_suffix(".again"))
    assert tokenmill.WordCounts.load(path.with_suffix(".again")) == counts
    try:
        tokenmill.train_bpe(counts, vocab_size=270)
    except tokenmill.TokenmillError:
        pass


GOOD = {"pattern": "cl100k", "keep_gaps": False, "normalizer": "none", "special_tokens": [], "byte_level": True}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    field=st.sampled_from([*SETTINGS, None]),
    value=JSON,
    text_bytes=HUGE,
    words=st.lists(st.tuples(st.binary(max_size=6), HUGE), max_size=6),
    declared=st.one_of(st.none(), HUGE),
    raw_header=st.one_of(st.none(), st.binary(max_size=8)),
)
def test_any_header_field_any_value_loads_right_or_fails_cleanly(
    tmp_path: Path,
    field: str | None,
    value: Any,
    text_bytes: int,
    words: list[tuple[bytes, int]],
    declared: int | None,
    raw_header: bytes | None,
) -> None:
    meta: Any = dict(GOOD)
    if field is None:
        meta = value  # the whole header another value
    else:
        meta[field] = value
    path = tmp_path / "c.counts"
    path.write_bytes(counts_file(raw_header if raw_header is not None else meta, text_bytes, words, declared))
    expect_clean(bounded(_load_and_train, path), (tokenmill.TokenmillError,), (meta, raw_header, declared))


def test_a_file_made_here_reads_as_written(tmp_path: Path) -> None:
    path = tmp_path / "c.counts"
    path.write_bytes(counts_file(GOOD, 11, [(b" world", 1), (b"hello", 2)], None))
    counts = tokenmill.WordCounts.load(path)
    assert counts.most_common(2) == [("hello", 2), (" world", 1)] and counts.text_bytes == 11
