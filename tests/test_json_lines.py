"""JSON Lines as Python writes them: a UTF-8 byte-order mark at the start of the file, and
escaped lone surrogates (`json.dumps("\\ud800")` is valid JSON), which become U+FFFD as lone
surrogates do when a Python string is encoded. Both are read by Rust (src/io/count.rs)."""

from __future__ import annotations

import json
from pathlib import Path

import tokenmill


def write_lines(path: Path, docs: list[str], prefix: bytes = b"") -> None:
    path.write_bytes(prefix + "\n".join(json.dumps({"text": d}) for d in docs).encode("utf-8"))


def test_plain_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    write_lines(path, ["hello world", "pair \U0001f600 fine"])
    counts = tokenmill.count_words(path, text_field="text", pattern="whitespace")
    assert counts["hello"] == 1 and counts["\U0001f600"] == 1


def test_a_byte_order_mark_opens_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    write_lines(path, ["hello world", "again"], prefix=b"\xef\xbb\xbf")
    counts = tokenmill.count_words(path, text_field="text", pattern="whitespace")
    assert counts["hello"] == 1 and counts["again"] == 1


def test_escaped_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "surrogates.jsonl"
    docs = ["odd \ud800 one", "low \udc00 too", "pair \U0001f600 fine", "back\\slash \\ud800"]
    write_lines(path, docs)
    counts = tokenmill.count_words(path, text_field="text", pattern="whitespace")
    # As a Python string with lone surrogates encodes: each one as U+FFFD.
    assert counts["\ufffd"] == 2 and counts["\U0001f600"] == 1 and counts["\\ud800"] == 1
