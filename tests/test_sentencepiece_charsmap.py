"""The precompiled character map walked as it is (src/pipeline/precompiled_charsmap.rs): the same text as
the rules it expands to (`reference_sentencepiece.charsmap_rules`) and as sentencepiece, on real
maps and on maps built by hand to reach sentencepiece's corners; broken and hostile maps refused
fast; the map kept through tokenmill's file (format 4) and written back to `.model` files."""

from __future__ import annotations

import base64
import functools
import json
import pickle
import random
import struct
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

spm = pytest.importorskip("sentencepiece")

from reference_sentencepiece import charsmap_rules  # noqa: E402
from test_sentencepiece_format import TRICKY, processor, trained, with_charsmap  # noqa: E402

import tokenmill  # noqa: E402
from tokenmill import _core  # noqa: E402
from tokenmill.formats.sentencepiece import read_model  # noqa: E402

LEAF, VALUE = 1 << 8, 1 << 31
RULE_NAMES = ["nmt_nfkc", "nfkc_cf", "nmt_nfkc_cf", "nfkc"]


@functools.cache
def walked_and_expanded(rule: str) -> tuple[Any, Any]:
    """A model with sentencepiece's `rule` map, read as it is, and the same tokenizer with the
    map expanded into rules (what the Python reader built before)."""
    data = trained(normalization_rule_name=rule, user_defined_symbols=("<sep>", "ｍｅｔａ"))
    walked = tokenmill.Tokenizer.from_sentencepiece(data)
    doc = json.loads(walked._core.to_json())
    spec = doc["sentencepiece_normalizer"]
    blob = base64.b64decode(spec.pop("precompiled_charsmap"))
    spec["rules"] = sorted(charsmap_rules(blob).items())
    return walked, tokenmill.Tokenizer(_core.CoreTokenizer.from_json(json.dumps(doc)))


texts = st.lists(st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=("Cs",))), max_size=24).map(
    "".join
)


@pytest.mark.parametrize("rule", RULE_NAMES)
@settings(max_examples=150, deadline=None)
@given(text=texts)
def test_the_walk_equals_the_expanded_rules(rule: str, text: str) -> None:
    walked, expanded = walked_and_expanded(rule)
    assert walked.normalize(text) == expanded.normalize(text)
    assert walked.encode(text) == expanded.encode(text)
    ours = walked(text, return_offsets_mapping=True)["offset_mapping"]
    assert ours == expanded(text, return_offsets_mapping=True)["offset_mapping"]


def test_the_walk_equals_the_expanded_rules_on_every_key() -> None:
    """Every key of nmt_nfkc's map, alone and between ASCII letters (the plain-ASCII path)."""
    walked, expanded = walked_and_expanded("nmt_nfkc")
    spec = json.loads(expanded._core.to_json())["sentencepiece_normalizer"]
    keys = [key for key, _ in spec["rules"]]
    assert len(keys) > 100_000
    for chunk in range(0, len(keys), 2000):
        text = " ".join(f"x{key}y" for key in keys[chunk : chunk + 2000])
        assert walked.normalize(text) == expanded.normalize(text)


def blob_of(units: list[int], strings: bytes) -> bytes:
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + strings


def model_with(blob: bytes) -> bytes:
    return with_charsmap(trained(), blob)


def chain(labels: list[list[int]], values: list[int | None]) -> list[int]:
    """A trie of nodes 0..n laid out one block each (node k's base is 256·(k+1)): every byte of
    `labels[k]` leads from node k to node k+1; `values[k+1]`, when set, is the replacement
    offset of the keys ending at node k+1."""
    n = len(labels)
    units = [VALUE] * (256 * (n + 2))
    units[0] = 256 << 10
    for k, bytes_ in enumerate(labels):
        base, child = 256 * (k + 1), 256 * (k + 2)
        for b in bytes_:
            leaf = LEAF if values[k + 1] is not None else 0
            units[base ^ b] = b | leaf | ((base ^ b) ^ child) << 10
        if values[k + 1] is not None:
            units[child] = VALUE | values[k + 1]
    return units


def test_the_first_32_matches_decide_as_in_sentencepiece() -> None:
    """A key of 40 "a"s with a rule at every length: sentencepiece keeps the first 32 matches."""
    strings = b"".join(f"<{k}>".encode() + b"\0" for k in range(1, 41))
    offsets = [None] + [strings.index(f"<{k}>".encode()) for k in range(1, 41)]
    data = model_with(blob_of(chain([[0x61]] * 40, offsets), strings))
    tok, sp = tokenmill.Tokenizer.from_sentencepiece(data), processor(data)
    for n in (1, 31, 32, 33, 40, 50, 100):
        assert tok.normalize("a" * n) == sp.normalize("a" * n), n
    assert tok.normalize("a" * 50) == "▁<32><18>"


def test_a_dag_of_two_to_the_41_keys_loads_fast_and_equals_sentencepiece() -> None:
    """41 levels, each reached by "a" or "b": 2^41 keys in 43 KB, which the expanding reader
    could not hold."""
    blob = blob_of(chain([[0x61, 0x62]] * 41, [None] * 41 + [0]), b"X\0")
    data = model_with(blob)
    start = time.perf_counter()
    tok = tokenmill.Tokenizer.from_sentencepiece(data)
    assert time.perf_counter() - start < 0.5
    sp, rng = processor(data), random.Random(5)
    for _ in range(200):
        text = "".join(rng.choice("ab ") for _ in range(rng.randrange(90)))
        assert tok.normalize(text) == sp.normalize(text), text


def refused(blob: bytes, what: str) -> None:
    start = time.perf_counter()
    with pytest.raises(tokenmill.FormatError, match=f"<bytes>: .*precompiled_charsmap: .*{what}"):
        tokenmill.Tokenizer.from_sentencepiece(model_with(blob))
    assert time.perf_counter() - start < 0.5


def test_broken_and_hostile_maps_are_format_errors() -> None:
    refused(b"\x00", "too short")
    refused(b"\x08\x00\x00\x00\x00\x00\x00\x00", "does not fit")
    refused(b"\x03\x00\x00\x00abcd", "does not fit")
    units = chain([[0x61]], [None, 0])
    refused(blob_of(units, b"b"), "NUL-terminated")
    refused(blob_of(units, b"\xff\0"), "not UTF-8")
    refused(blob_of(chain([[0x61]], [None, 9]), b"b\0"), "offset 9")
    looped = list(units)
    looped[256 ^ 0x61] = 0x61 | ((256 ^ 0x61) ^ 256) << 10  # "a" leads back to the root
    refused(blob_of(looped, b"b\0"), "loops")
    # 2,000 levels of "a": a chain past the longest key allowed (2 MB of units, refused at once).
    refused(blob_of(chain([[0x61]] * 2000, [None] * 2000 + [0]), b"b\0"), "longer than 1024")


@functools.cache
def nmt_nfkc_blob() -> bytes:
    return read_model(trained()).normalizer_spec.precompiled_charsmap


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)), min_size=1, max_size=8), st.integers(0, 10**9))
def test_damaged_real_maps_load_or_are_refused_never_crash(flips: list[tuple[int, int]], cut: int) -> None:
    blob = bytearray(nmt_nfkc_blob())
    for at, value in flips:
        blob[at % len(blob)] = value
    for candidate in (bytes(blob), bytes(blob[: cut % len(blob)])):
        try:
            tok = tokenmill.Tokenizer.from_sentencepiece(model_with(candidate))
        except tokenmill.FormatError:
            continue
        tok.normalize("Ｈｅｌｌｏ ﬁne ｶﾞ 한국어 \u1100\u1161\u11a8 " * 3)


# --- The map kept in files.


def test_tokenmill_files_keep_the_map_and_save_sentencepiece_writes_it_back(tmp_path: Path) -> None:
    data = trained()
    tok = tokenmill.Tokenizer.from_sentencepiece(data)
    tok.save(tmp_path / "tok.json")
    doc = json.loads((tmp_path / "tok.json").read_text())
    assert doc["version"] == _core.FORMAT_VERSION == 4
    assert base64.b64decode(doc["sentencepiece_normalizer"]["precompiled_charsmap"]) == nmt_nfkc_blob()
    assert doc["sentencepiece_normalizer"]["rules"] == []
    again = tokenmill.Tokenizer.load(tmp_path / "tok.json")
    for text in ["Ｈｅｌｌｏ  ﬁne ｶﾞ", *TRICKY]:
        assert again.normalize(text) == tok.normalize(text) == processor(data).normalize(text)
    again.save_sentencepiece(tmp_path / "rebuilt.model")  # no source: built from the description
    assert read_model(tmp_path / "rebuilt.model").normalizer_spec.precompiled_charsmap == nmt_nfkc_blob()


def test_rules_and_a_map_together_are_refused(tmp_path: Path) -> None:
    doc = json.loads(tokenmill.Tokenizer.from_sentencepiece(trained())._core.to_json())
    doc["sentencepiece_normalizer"]["rules"] = [["x", "y"]]
    (tmp_path / "tok.json").write_text(json.dumps(doc))
    with pytest.raises(tokenmill.FormatError, match="rules or a precompiled_charsmap, not both"):
        tokenmill.Tokenizer.load(tmp_path / "tok.json")
    doc["sentencepiece_normalizer"]["rules"] = []
    doc["sentencepiece_normalizer"]["precompiled_charsmap"] = base64.b64encode(b"\x05\0\0\0xy").decode()
    (tmp_path / "tok.json").write_text(json.dumps(doc))
    with pytest.raises(tokenmill.FormatError, match="tok.json: .*precompiled_charsmap: trie size 5"):
        tokenmill.Tokenizer.load(tmp_path / "tok.json")


def test_the_source_file_follows_copies_with_other_model_inputs(tmp_path: Path) -> None:
    data = trained(model_type="bpe")
    tok = tokenmill.Tokenizer.from_sentencepiece(data)
    tok.set_template("$A </s>")
    tok.enable_truncation(max_length=8)
    copy = pickle.loads(pickle.dumps(tok))
    copy.save_sentencepiece(tmp_path / "copy.model")
    assert (tmp_path / "copy.model").read_bytes() == data
    # A pickle of an earlier version held (bytes, digest): the file is rebuilt instead.
    old = tokenmill.tokenizer._from_json(tok._core.to_json(), {}, (data, "digest"))
    assert old._core.sentencepiece_source() is None
