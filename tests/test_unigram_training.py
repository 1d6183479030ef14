"""Unigram training: the Rust trainer against the pure-Python reference of SentencePiece's
recipe and against `sentencepiece` itself on the same text; what it trains encodes losslessly,
saves, loads and is deterministic."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import MULTILINGUAL
from reference_unigram import train as reference_train

import tokenmill
from tokenmill import ConfigError

spm = pytest.importorskip("sentencepiece")


def corpus_lines(stdlib_text: str, n: int = 4000) -> list[str]:
    return [line.strip() for line in stdlib_text.splitlines() if len(line.strip()) > 10][:n]


def bytes_per_token(encode, lines: list[str]) -> float:
    return sum(len(line.encode()) for line in lines) / sum(len(encode(line)) for line in lines)


def test_compresses_like_sentencepiece(stdlib_text: str) -> None:
    """Trained on the same lines with the same size, tokenmill's vocabulary cuts held-back text
    into about as many tokens as SentencePiece's (within 3% on this small corpus)."""
    lines = corpus_lines(stdlib_text, 6000)
    train, held = lines[:5000], lines[5000:]
    ours = tokenmill.train_unigram(train, vocab_size=1000, show_progress=False)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train), model_writer=out, vocab_size=1000, model_type="unigram", minloglevel=2
    )
    sp = spm.SentencePieceProcessor(model_proto=out.getvalue())
    assert ours.vocab_size == 1000
    ratio = bytes_per_token(ours.encode, held) / bytes_per_token(sp.encode, held)
    assert 0.97 < ratio < 1.03, ratio


def test_agrees_with_the_reference_recipe(stdlib_text: str) -> None:
    """The reference follows SentencePiece step by step on sentences; the Rust trainer seeds from
    words and works in f64, so the vocabularies differ at the margin — most pieces agree."""
    lines = corpus_lines(stdlib_text, 300)
    counts = tokenmill.count_words(lines, pattern="metaspace", normalizer="sentencepiece", show_progress=False)
    ours = tokenmill.train_unigram(counts, vocab_size=300, control_tokens=(), show_progress=False)
    sentences: dict[str, int] = {}
    for line in lines:
        normalized = ours.normalize(line)
        if normalized:
            sentences[normalized] = sentences.get(normalized, 0) + 1
    theirs = reference_train(sentences, vocab_size=300, meta_pieces=("<unk>",))
    mine = {ours.id_to_token(i) for i in range(ours.vocab_size) if ours.token_kind(i) == "normal"}
    overlap = len(mine & set(theirs)) / len(theirs)
    assert overlap > 0.85, overlap


def test_lossless_deterministic_and_saved(stdlib_text: str, tmp_path: Path) -> None:
    lines = corpus_lines(stdlib_text, 2000) + MULTILINGUAL * 5
    tok = tokenmill.train_unigram(lines, vocab_size=800, special_tokens=["<sep>"], show_progress=False)
    again = tokenmill.train_unigram(lines, vocab_size=800, special_tokens=["<sep>"], show_progress=False)
    assert [again.id_to_token(i) for i in range(800)] == [tok.id_to_token(i) for i in range(800)]
    assert [tok.token_kind(i) for i in range(4)] == ["unknown", "control", "control", "special"]
    scores = [tok.score(i) for i in range(4, 800)]
    assert scores == sorted(scores, reverse=True), "pieces come best first"
    for line in lines[:200]:
        assert tok.decode(tok.encode(line)) == " ".join(line.split()) or "<unk>" in tok.tokenize(line)
    assert 3 in tok.encode("a<sep>b", allowed_special="all"), "special tokens are matched in text"
    assert 3 not in tok.encode("a<sep>b", disallowed_special=())
    tok.save(tmp_path / "u.json")
    loaded = tokenmill.Tokenizer.load(tmp_path / "u.json")
    assert all(loaded.encode(line) == tok.encode(line) for line in lines[:200])


def test_byte_fallback_spells_unknown_characters(stdlib_text: str) -> None:
    tok = tokenmill.train_unigram(corpus_lines(stdlib_text, 1000), vocab_size=600, byte_fallback=True)
    ids = tok.encode("x 🦜")
    assert [tok.token_kind(i) for i in ids[-4:]] == ["byte"] * 4
    assert tok.decode(ids) == "x 🦜"


def test_bad_settings(stdlib_text: str) -> None:
    lines = corpus_lines(stdlib_text, 200)
    with pytest.raises(ConfigError, match="room"):
        tokenmill.train_unigram(lines, vocab_size=3)
    with pytest.raises(ConfigError, match="characters"):
        tokenmill.train_unigram(lines, vocab_size=20, show_progress=False)
    with pytest.raises(ConfigError, match="character_coverage"):
        tokenmill.train_unigram(lines, vocab_size=500, character_coverage=1.5)
    with pytest.raises(ConfigError, match="pattern"):
        tokenmill.train_unigram(tokenmill.count_words(lines, pattern="cl100k"), vocab_size=500)


def test_cli_trains_unigram(tmp_path: Path, stdlib_text: str) -> None:
    import subprocess
    import sys

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(corpus_lines(stdlib_text, 3000)))
    out = tmp_path / "u.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tokenmill.cli",
            "train",
            str(corpus),
            "--model",
            "unigram",
            "--vocab-size",
            "700",
            "-o",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    tok = tokenmill.Tokenizer.load(out)
    assert tok.model_type == "unigram" and tok.vocab_size == 700
