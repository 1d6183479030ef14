"""BPE-dropout (`encode(text, dropout=p, seed=s)`, `encode(text, sample=True, alpha=p)`): the
same merges in the same order as `encode` with some skipped, on byte-level, rank-based
(tiktoken) and SentencePiece BPE models; compared in distribution with sentencepiece's own
dropout, which skips merges the same way."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import ConfigError

spm = pytest.importorskip("sentencepiece")

from conftest import MULTILINGUAL  # noqa: E402
from test_sentencepiece import train, training_lines  # noqa: E402
from vocab_files import vocabulary_path  # noqa: E402

SENTENCE = "The committee's report wasn't ready, so we'll meet again on Tuesday."


@pytest.fixture(scope="module")
def sentencepiece_bpe(stdlib_text: str) -> tuple[object, tokenmill.Tokenizer]:
    proto = train(training_lines(stdlib_text), model_type="bpe", vocab_size=1000, byte_fallback=True)
    return spm.SentencePieceProcessor(model_proto=proto), tokenmill.Tokenizer.from_sentencepiece(proto)


@pytest.fixture(scope="module", params=["byte_level", "cl100k", "sentencepiece"])
def model(request: pytest.FixtureRequest, stdlib_text: str, sentencepiece_bpe) -> tokenmill.Tokenizer:
    if request.param == "byte_level":
        return tokenmill.train_bpe([stdlib_text[:300_000]], vocab_size=1000)
    if request.param == "cl100k":
        return tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base")
    return sentencepiece_bpe[1]


def test_no_dropout_is_encode_and_full_dropout_is_no_merge(model: tokenmill.Tokenizer) -> None:
    for text in [SENTENCE, *MULTILINGUAL]:
        assert model.encode(text, dropout=0.0, seed=1) == model.encode(text)
        assert model.encode(text, sample=True, alpha=0.0, seed=1) == model.encode(text)
        unmerged = model.encode(text, dropout=1.0, seed=1)
        assert model.decode(unmerged) == model.decode(model.encode(text))
        # No merge at all: every token is one byte (byte-level; tiktoken's whole-piece rule too
        # gives way under dropout), or one character or one byte of byte fallback (SentencePiece).
        for token_id in unmerged:
            if model.token_kind(token_id) == "byte":
                continue
            if model.byte_level:
                assert len(model.decode_single_token_bytes(token_id)) == 1
            else:
                assert len(model.id_to_token(token_id)) == 1, model.id_to_token(token_id)


def test_dropout_is_reproducible_lossless_and_varied(model: tokenmill.Tokenizer) -> None:
    best = model.encode(SENTENCE)
    draws = [model.encode(SENTENCE, dropout=0.2, seed=s) for s in range(40)]
    assert draws[:5] == [model.encode(SENTENCE, dropout=0.2, seed=s) for s in range(5)]
    assert all(model.decode(d) == model.decode(best) for d in draws)
    assert len({tuple(d) for d in draws}) > 10
    assert statistics.mean(map(len, draws)) > len(best), "skipped merges leave more tokens"
    # Sampling used its own symbols: the best cuts (and the piece cache behind them) are unchanged.
    assert model.encode(SENTENCE) == best


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_dropout_decodes_to_what_encode_decodes_to(sentencepiece_bpe, text: str) -> None:
    _, tok = sentencepiece_bpe
    assert tok.decode(tok.encode(text, dropout=0.3, seed=len(text))) == tok.decode(tok.encode(text))


def test_dropout_matches_sentencepiece_in_distribution(sentencepiece_bpe) -> None:
    """sentencepiece skips each merge with probability alpha as its turn comes, as tokenmill
    does: the number of tokens a sentence gets has the same distribution (means within a few
    standard errors over 2000 draws each)."""
    sp, tok = sentencepiece_bpe
    text = " ".join(MULTILINGUAL[:3])
    for p in (0.1, 0.4):
        ours = [len(tok.encode(text, dropout=p, seed=s)) for s in range(2000)]
        theirs = [len(sp.encode(text, enable_sampling=True, alpha=p)) for _ in range(2000)]
        spread = (statistics.pstdev(ours) ** 2 / 2000 + statistics.pstdev(theirs) ** 2 / 2000) ** 0.5
        assert abs(statistics.mean(ours) - statistics.mean(theirs)) < 5 * spread + 0.05, p


def test_dropout_keeps_special_tokens() -> None:
    tok = tokenmill.train_bpe(["low lower lowest newest"] * 20, vocab_size=280, special_tokens=["<|end|>"])
    end = tok.token_to_id("<|end|>")
    ids = tok.encode("lowest<|end|>newest", dropout=0.5, seed=3, allowed_special="all")
    assert end in ids and tok.decode(ids) == "lowest<|end|>newest"
    with pytest.raises(tokenmill.DisallowedSpecialError):
        tok.encode("lowest<|end|>", dropout=0.5, seed=3)


def test_sampling_arguments_are_checked(sentencepiece_bpe, stdlib_text: str) -> None:
    _, tok = sentencepiece_bpe
    for bad in (-0.1, 1.5, float("nan"), True, "0.1"):
        with pytest.raises(ConfigError):
            tok.encode("x", dropout=bad)
    with pytest.raises(ConfigError, match="sample=True"):
        tok.encode("x", alpha=0.1)
    with pytest.raises(ConfigError, match="not both"):
        tok.encode("x", dropout=0.1, sample=True, alpha=0.2)
    with pytest.raises(ConfigError):
        tok.encode("x", dropout=0.1, seed=-1)
    unigram = tokenmill.Tokenizer.from_sentencepiece(train(training_lines(stdlib_text)))
    with pytest.raises(ConfigError, match="BPE"):
        unigram.encode("x", dropout=0.1)
    wordpiece = tokenmill.train_wordpiece(["low lower lowest"] * 10, vocab_size=60)
    with pytest.raises(ConfigError, match="wordpiece"):
        wordpiece.encode("low", sample=True)
