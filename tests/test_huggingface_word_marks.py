"""Hugging Face BPE files that mark words: a `continuing_subword_prefix` before every symbol of a
word but the first, an `end_of_word_suffix` joined to its last (openai-gpt's and CLIP's form,
`CharBPETokenizer`'s). tokenmill reads them and must give tokenizers' ids, tokens, offsets and
decoding — on real text and on generated text, character-level and byte-level, with an unknown
token, without one (unknown characters left out), and with tokenizers' own models trained here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

import tokenmill
import tokenmill.tokenizers as tm

# (continuing_subword_prefix, end_of_word_suffix, byte_level, unk_token)
SHAPES = [
    (None, "</w>", False, "<unk>"),
    ("##", None, False, "<unk>"),
    ("##", "</w>", False, None),
    (None, "</w>", True, None),
    ("@@", "</w>", True, None),
]


def _given(**options: Any) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}


@pytest.fixture(scope="module", params=SHAPES, ids=lambda s: f"prefix={s[0]}-suffix={s[1]}-byte={s[2]}-unk={s[3]}")
def pair(request: pytest.FixtureRequest, multilingual_text: str) -> tuple[tm.Tokenizer, HFTokenizer]:
    prefix, suffix, byte_level, unk = request.param
    marks = _given(continuing_subword_prefix=prefix, end_of_word_suffix=suffix)
    hf = HFTokenizer(models.BPE(**_given(unk_token=unk), fuse_unk=unk is not None, **marks))
    if byte_level:
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
        # Not every byte: a byte-level symbol the vocabulary lacks is left out, as tokenizers does.
        trainer = trainers.BpeTrainer(vocab_size=700, show_progress=False, **marks)
    else:
        hf.pre_tokenizer = pre_tokenizers.Whitespace()
        hf.decoder = decoders.BPEDecoder(suffix=suffix or "</w>")
        special = [unk] if unk else []
        trainer = trainers.BpeTrainer(
            vocab_size=700, special_tokens=special, limit_alphabet=80, show_progress=False, **marks
        )
    lines = multilingual_text.splitlines()
    hf.train_from_iterator(lines[::2], trainer)
    return tm.Tokenizer.from_str(hf.to_str()), hf


def _same(ours: tm.Tokenizer, hf: HFTokenizer, text: str) -> None:
    a, b = hf.encode(text), ours.encode(text)
    assert (b.ids, b.tokens, b.offsets) == (a.ids, a.tokens, a.offsets), text
    assert ours.decode(a.ids) == hf.decode(a.ids), text


def test_real_text_as_tokenizers_encodes_and_decodes_it(pair, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    ours, hf = pair
    for line in multilingual_text.splitlines()[1::2][:400]:
        _same(ours, hf, line)
    lines = multilingual_text.splitlines()[1::2][:200]
    assert [e.ids for e in ours.encode_batch(lines)] == [e.ids for e in hf.encode_batch(lines)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_generated_text(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, hf = pair
    _same(ours, hf, text)


def test_files_written_back_and_saved_keep_the_marks(pair, tmp_path: Path, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    ours, hf = pair
    lines = multilingual_text.splitlines()[1::2][:100]
    path = tmp_path / "tokenizer.json"
    ours.save(str(path))
    written = json.loads(path.read_text(encoding="utf-8"))["model"]
    source = json.loads(hf.to_str())["model"]
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        assert written[key] == source[key]
    again = HFTokenizer.from_file(str(path))
    assert [e.ids for e in again.encode_batch(lines)] == [e.ids for e in hf.encode_batch(lines)]
    # tokenmill's own file keeps them too.
    core = tokenmill.Tokenizer.from_huggingface(path)
    core.save(tmp_path / "own.json")
    loaded = tokenmill.Tokenizer.load(tmp_path / "own.json")
    assert [loaded.encode(line) for line in lines] == [e.ids for e in hf.encode_batch(lines)]


def test_models_made_with_marks_encode_as_tokenizers() -> None:
    vocab = {"<unk>": 0, "a": 1, "b": 2, "##b": 3, "##a": 4, "b</w>": 5, "##b</w>": 6, "ab": 7, "ab</w>": 8}
    merges = [("a", "##b</w>"), ("a", "##b")]
    theirs = HFTokenizer(
        models.BPE(vocab, merges, unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>")
    )
    ours = tm.Tokenizer(
        tm.models.BPE(vocab, merges, unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>")
    )
    for text in ("ab", "abab", "b", "ba", "c", "abc", "aab"):
        a, b = theirs.encode(text), ours.encode(text)
        assert (b.ids, b.tokens, b.offsets) == (a.ids, a.tokens, a.offsets), text


def _trained(m: Any, lines: list[str], vocab_size: int, **marks: str) -> Any:
    tok = m.Tokenizer(m.models.BPE(unk_token="<unk>", **marks))
    tok.pre_tokenizer = m.pre_tokenizers.Whitespace()
    trainer = m.trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], show_progress=False, **marks)
    tok.train_from_iterator(lines, trainer)
    return tok


@pytest.mark.parametrize("vocab_size", [700, 1500])
def test_training_with_a_joined_suffix_learns_tokenizers_vocabulary(multilingual_text: str, vocab_size: int) -> None:
    """tokenizers numbers marked characters in hash order, so merges of equal counts come in an
    order that varies between its own runs: the vocabulary and the set of merges are what is
    fixed, and they must be tokenizers'."""
    lines = multilingual_text.splitlines()
    ours, theirs = (
        json.loads(_trained(m, lines, vocab_size, end_of_word_suffix="</w>").to_str())["model"]
        for m in (tm, __import__("tokenizers"))
    )
    assert set(ours["vocab"]) == set(theirs["vocab"])
    assert {tuple(m) for m in ours["merges"]} == {tuple(m) for m in theirs["merges"]}


@pytest.mark.parametrize(
    "marks", [{"continuing_subword_prefix": "##"}, {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"}]
)
def test_models_trained_with_a_prefix_run_in_tokenizers_as_in_tokenmill(
    multilingual_text: str, marks: dict[str, str]
) -> None:
    lines = multilingual_text.splitlines()
    ours = _trained(tm, lines, 1000, **marks)
    model = json.loads(ours.to_str())["model"]
    assert all(right.startswith("##") for _, right in model["merges"])
    theirs = HFTokenizer.from_str(ours.to_str())
    for line in lines:
        a, b = theirs.encode(line), ours.encode(line)
        assert (b.ids, b.offsets) == (a.ids, a.offsets)


def test_char_bpe_tokenizer_as_tokenizers_builds_it(multilingual_text: str, tmp_path: Path) -> None:
    import tokenizers

    lines = multilingual_text.splitlines()
    made = []
    for m in (tm, tokenizers):
        tok = m.CharBPETokenizer(lowercase=True)
        tok.train_from_iterator(lines, vocab_size=900, min_frequency=1, show_progress=False)
        made.append(tok)
    ours, theirs = made
    assert set(ours.get_vocab()) == set(theirs.get_vocab())
    # Files written by tokenizers, read by both.
    theirs.save_model(str(tmp_path))
    ours, theirs = (
        m.CharBPETokenizer.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"), lowercase=True)
        for m in (tm, tokenizers)
    )
    for line in lines + ["Ünïcödé ÅB", "My name is John"]:
        a, b = theirs.encode(line, "pair"), ours.encode(line, "pair")
        assert (b.ids, b.tokens, b.offsets, b.type_ids) == (a.ids, a.tokens, a.offsets, a.type_ids)
        assert ours.decode(a.ids) == theirs.decode(a.ids)
