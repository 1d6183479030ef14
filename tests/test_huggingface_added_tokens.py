"""Added tokens marked `normalized: true` in a `tokenizer.json`: `tokenizers` matches them in
the normalized text, as the normalizer spells them (lowercased, `▁`-prefixed, composed…), after
cutting the raw text at the other added tokens. tokenmill against `tokenizers` on files it builds
here with every normalizer chain the components tests use: ids, token strings and offsets on
generated text, and the flag kept through tokenmill's file and written back."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_huggingface_components import _hf_normalizers, byte_tokenizer
from tokenizers import AddedToken, Tokenizer

import tokenmill

ADDED = [
    AddedToken("foo", normalized=True),
    AddedToken("Été", normalized=True),
    AddedToken("Bar", normalized=True, single_word=True),
    AddedToken("<x>", normalized=True, lstrip=True, rstrip=True),
    AddedToken("a b", normalized=True),
    AddedToken("<raw>", normalized=False),
]
SPECIAL = [AddedToken("[MASK]", special=True, normalized=True), AddedToken("<s>", special=True, normalized=False)]

PARTS = st.sampled_from(
    ["foo", "FOO", "Foo", " foo", "xfoo", "Été", "ÉTÉ", "ete", "e\u0301te", "Bar", "bar", "BAR", "Bars", " Bar "]
    + ["<x>", " <x> ", "<X>", "a b", "a  b", "A B", "<raw>", "<RAW>", "[MASK]", "[mask]", "<s>", " ", "  ", "z", "``"]
)


@pytest.fixture(scope="module", params=sorted(_hf_normalizers()))
def added_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    hf = byte_tokenizer(request.param)
    hf.add_tokens(ADDED)
    hf.add_special_tokens(SPECIAL)
    path = tmp_path_factory.mktemp("added") / "tokenizer.json"
    hf.save(str(path))
    return hf, tokenmill.Tokenizer.from_huggingface(path), path


def check(hf: Tokenizer, tok: tokenmill.Tokenizer, text: str) -> None:
    theirs, ours = hf.encode(text), tok.encode_for_model(text)
    assert ours.ids == theirs.ids, text
    assert ours.offsets == theirs.offsets, text
    # An added token shows the text it matched (normalized, with any whitespace it took in).
    assert ours.tokens == theirs.tokens, text
    assert tok.encode(text, allowed_special="all") == theirs.ids, text
    assert tok.encode(text, allowed_special="all", dropout=0.0, seed=1) == theirs.ids, text


@settings(max_examples=200, deadline=None)
@given(text=st.lists(PARTS, max_size=8).map("".join))
def test_normalized_added_tokens_match_as_tokenizers_matches_them(added_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    hf, tok, _ = added_pair
    check(hf, tok, text)


def test_each_token_where_only_its_normalized_spelling_occurs(added_pair) -> None:  # type: ignore[no-untyped-def]
    hf, tok, _ = added_pair
    for text in ["FOO bar", "x foo y", "ÉTÉ été", "a  b A B", "<X> [mask] <RAW>", "xfoo", "foo", ""]:
        check(hf, tok, text)


def test_the_flag_survives_tokenmills_file_and_is_written_back(added_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hf, tok, path = added_pair
    text = "FOO <x>  été, Bar [MASK] a b <raw>"
    tok.save(tmp_path / "tok.json")
    again = tokenmill.Tokenizer.load(tmp_path / "tok.json")
    assert again.encode_for_model(text).ids == hf.encode(text).ids
    tok.to_huggingface(tmp_path / "tokenizer.json")

    def flags(file: Path) -> dict[str, bool]:
        return {t["content"]: t["normalized"] for t in json.loads(file.read_text())["added_tokens"]}

    assert flags(tmp_path / "tokenizer.json") == flags(path)
    assert Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(text).ids == hf.encode(text).ids


def test_encode_judges_normalized_tokens_by_their_own_text(added_pair) -> None:  # type: ignore[no-untyped-def]
    _, tok, _ = added_pair
    with pytest.raises(tokenmill.DisallowedSpecialError, match="foo"):
        tok.encode("FOO" if tok.normalize("FOO") == tok.normalize("foo") else "foo")
    assert tok.encode_ordinary("foo") == tok.encode("foo", disallowed_special=())


@settings(max_examples=100, deadline=None)
@given(text=st.lists(PARTS, max_size=8).map("".join))
def test_added_tokens_decode_through_the_byte_level_table_as_tokenizers_decodes_them(added_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    """tokenizers' ByteLevel decoder reads every token string as byte-level characters, added
    tokens too: `Été` (all three characters in the table) decodes to bytes that are not UTF-8,
    `<x>` to itself, `[MASK]` to itself (its `[`… are byte-level characters for themselves)."""
    hf, tok, path = added_pair
    ids = hf.encode(text).ids
    for skip in (False, True):
        assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip), text
    # Kept through tokenmill's own file (pickling writes it).
    assert pickle.loads(pickle.dumps(tok)).decode(ids) == hf.decode(ids, skip_special_tokens=False)
