"""A Unigram model tokenmill trains exports: to a `tokenizer.json` with any normalizer
Hugging Face can spell (NFKC, lowercasing by character), and to a SentencePiece `.model` when
its normalizer is SentencePiece's own (`normalizer="none"`: the whitespace rules alone); an
NFKC model is refused there with a message that says why and what to do instead."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
import tokenizers

import tokenmill


@pytest.fixture(scope="module")
def lines(stdlib_text: str, multilingual_text: str) -> list[str]:
    return [line for line in (stdlib_text[:200_000] + "\n" + multilingual_text).splitlines() if line.strip()]


@pytest.mark.parametrize("normalizer", ["none", "nfkc", "nfkc+lowercase_chars"])
def test_trained_unigram_models_export_to_tokenizer_json(lines: list[str], normalizer: str, tmp_path: Path) -> None:
    tok = tokenmill.train_unigram(lines, vocab_size=400, normalizer=normalizer, show_progress=False)
    path = tmp_path / "tokenizer.json"
    tok.to_huggingface(path)
    theirs = tokenizers.Tokenizer.from_file(str(path))
    back = tokenmill.Tokenizer.from_huggingface(path)
    # Read back, the file is tokenizers' exactly.
    for line in lines:
        expected = theirs.encode(line, add_special_tokens=False).ids
        assert back.encode(line, allowed_special="all") == expected, line
    # Against the trained tokenizer: SentencePiece's cut (f32 sums over the whole text) and
    # Hugging Face's (f64, each piece alone) part only where two cuts score nearly the same.
    differ = sum(theirs.encode(line, add_special_tokens=False).ids != tok.encode(line) for line in lines)
    assert differ <= len(lines) // 100, f"{differ} of {len(lines)} lines cut otherwise"


def test_a_trained_unigram_model_without_other_normalizers_writes_a_sentencepiece_model(
    lines: list[str], tmp_path: Path
) -> None:
    tok = tokenmill.train_unigram(lines, vocab_size=400, normalizer="none", show_progress=False)
    tok.save_sentencepiece(tmp_path / "m.model")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    assert [sp.encode(line) for line in lines] == [tok.encode(line) for line in lines]
    assert tokenmill.Tokenizer.from_sentencepiece(tmp_path / "m.model").encode(lines[0]) == tok.encode(lines[0])


def test_an_nfkc_model_is_refused_by_the_sentencepiece_writer_with_the_way_out(
    lines: list[str], tmp_path: Path
) -> None:
    tok = tokenmill.train_unigram(lines[:200], vocab_size=200, normalizer="nfkc", show_progress=False)
    with pytest.raises(tokenmill.ConfigError, match="normalizer='none'.*SentencePieceTrainer"):
        tok.save_sentencepiece(tmp_path / "m.model")
    assert not (tmp_path / "m.model").exists()
