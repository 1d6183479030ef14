"""Byte-level `tokenizer.json` files whose vocabulary lacks some bytes text can hold (pix2tex's
LaTeX vocabulary has printable ASCII only, without `%`). Without an unknown token, `tokenizers`
leaves such bytes out — the bytes either side become neighbours and may merge — and places each
token right after the one before in the piece's byte-level spelling. tokenmill against
`tokenizers` on files trained and cut down here: ids, token strings, offsets and decoding, with
the file's `ByteLevel` decoder and with none (tokens joined with spaces); and the refusals where
tokenmill could not run a file exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import MULTILINGUAL
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

import tokenmill

# Bytes the cut-down vocabularies lack: all of them above ASCII, and three ASCII ones a merge
# can cross ('%' and 'q' inside words, '\n' between them).
LACKING = {*range(0x80, 0x100), ord("%"), ord("q"), ord("\n")}


def byte_level_char(b: int) -> str:
    """GPT-2's printable spelling of byte `b`."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    if b in printable:
        return chr(b)
    return chr(256 + [x for x in range(256) if x not in printable].index(b))


def cut_down(data: dict[str, Any], decoder: Any) -> dict[str, Any]:
    """The trained file without any token that holds a lacking byte (ids renumbered densely),
    without the merges that need one, with `decoder`."""
    gone = {byte_level_char(b) for b in LACKING}
    model = data["model"]
    kept = sorted((i, t) for t, i in model["vocab"].items() if not gone & set(t))
    new_id = {t: n for n, (_, t) in enumerate(kept)}
    merges = [m if isinstance(m, list) else m.split(" ") for m in model["merges"]]
    model["merges"] = [[a, b] for a, b in merges if a in new_id and b in new_id and a + b in new_id]
    model["vocab"] = new_id
    data["decoder"] = decoder
    return data


TEXTS = [
    *MULTILINGUAL,
    "50% of the quick queue: \\frac{q}{p}",
    "a%b qq q%q %%",
    "é",
    "line one\nline two\n\nthree",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(TEXTS * 20, trainer)
    path = tmp_path_factory.mktemp("trained") / "tokenizer.json"
    hf.save(str(path))
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}


@pytest.fixture(scope="module", params=["ByteLevel", "none"])
def pair(request: pytest.FixtureRequest, trained: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    data = cut_down(json.loads(json.dumps(trained)), BYTE_LEVEL if request.param == "ByteLevel" else None)
    path = tmp_path_factory.mktemp("lacking") / "tokenizer.json"
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return Tokenizer.from_file(str(path)), tokenmill.Tokenizer.from_huggingface(path), path


def check(hf: Tokenizer, tok: tokenmill.Tokenizer, text: str) -> None:
    theirs, ours = hf.encode(text), tok.encode_for_model(text)
    assert ours.ids == theirs.ids, text
    assert ours.tokens == theirs.tokens, text
    assert [tuple(o) for o in ours.offsets] == [tuple(o) for o in theirs.offsets], text
    assert tok.encode(text) == theirs.ids, text
    assert tok.decode(theirs.ids) == hf.decode(theirs.ids), text


def test_the_cut_down_vocabulary_lacks_the_bytes(pair: tuple) -> None:  # type: ignore[type-arg]
    hf, tok, _ = pair
    assert hf.encode("é%q").ids == []
    assert tok.encode("é%q") == []
    # A merge across a left-out byte ('q' inside a word; '%' would cut the word in two): the
    # longest word token with a 'q' and an 'é' inside is still that token.
    word = max((t for t in hf.get_vocab() if t.isalpha() and t.isascii()), key=len)
    crossed = word[:1] + "q" + word[1:-1] + "é" + word[-1:]
    assert tok.encode(crossed) == hf.encode(crossed).ids == tok.encode(word) == [hf.token_to_id(word)]


@pytest.mark.parametrize("text", TEXTS)
def test_real_text_equals_tokenizers(pair: tuple, text: str) -> None:  # type: ignore[type-arg]
    hf, tok, _ = pair
    check(hf, tok, text)


PARTS = st.sampled_from(["the", " quick", "q", "%", "é", "ü", "\n", " ", "a", "b", "qu", "50", "中", "😀", "\\frac"])


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.lists(PARTS, max_size=12).map("".join), st.text(max_size=30)))
def test_generated_text_equals_tokenizers(pair: tuple, text: str) -> None:  # type: ignore[type-arg]
    hf, tok, _ = pair
    check(hf, tok, text)


def test_written_back_the_same(pair: tuple, tmp_path: Path) -> None:  # type: ignore[type-arg]
    hf, tok, _ = pair
    out = tmp_path / "again.json"
    tok.to_huggingface(out)
    again = Tokenizer.from_file(str(out))
    for text in TEXTS:
        assert again.encode(text).ids == hf.encode(text).ids, text
        ids = hf.encode(text).ids
        assert again.decode(ids) == hf.decode(ids), text
    assert tokenmill.Tokenizer.from_huggingface(out).encode(TEXTS[0]) == tok.encode(TEXTS[0])
    own = tmp_path / "own.json"
    tok.save(own)
    loaded = tokenmill.Tokenizer.load(own)
    for text in TEXTS:
        check(hf, loaded, text)


def test_with_an_unknown_token_the_file_is_refused(trained: dict[str, Any], tmp_path: Path) -> None:
    """tokenizers would give the unknown token for a lacking byte's spelling; tokenmill refuses
    the file rather than leave the byte out."""
    data = cut_down(json.loads(json.dumps(trained)), BYTE_LEVEL)
    data["model"]["vocab"]["<unk>"] = len(data["model"]["vocab"])
    data["model"]["unk_token"] = "<unk>"
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(tokenmill.TokenmillError, match="lacks the single byte"):
        tokenmill.Tokenizer.from_huggingface(path)


def test_a_decoder_tokenmill_cannot_run_on_byte_level_tokens_is_refused(
    trained: dict[str, Any], tmp_path: Path
) -> None:
    data = json.loads(json.dumps(trained))
    data["decoder"] = {"type": "WordPiece", "prefix": "##", "cleanup": True}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(tokenmill.TokenmillError, match=f"{path}.*decoder WordPiece on a byte-level BPE file"):
        tokenmill.Tokenizer.from_huggingface(path)


@pytest.fixture(scope="module")
def char_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    """A character-level BPE file without an unknown token: characters outside it are left
    out, and the tokens after them placed as tokenizers places them."""
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "é": 5, "bé": 6}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=[("a", "b"), ("ab", "c"), ("b", "é")]))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path_factory.mktemp("char") / "tokenizer.json"
    hf.save(str(path))
    return hf, tokenmill.Tokenizer.from_huggingface(path)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "b", "c", "é", "x", "ü", "😀", " ", "ab"]), max_size=12).map("".join))
def test_characters_left_out_of_a_character_level_file_as_tokenizers(char_pair: tuple, text: str) -> None:  # type: ignore[type-arg]
    hf, tok = char_pair
    theirs, ours = hf.encode(text), tok.encode_for_model(text)
    assert ours.ids == theirs.ids, text
    assert [tuple(o) for o in ours.offsets] == [tuple(o) for o in theirs.offsets], text
