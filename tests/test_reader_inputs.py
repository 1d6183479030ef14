"""What the file readers are given: a path that is not a regular file is refused before anything
reads it (a FIFO would block for ever), and a vocabulary of the wrong shape is refused rather
than read with ids it does not name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tokenmill
from tokenmill import CorpusError, FormatError

READERS = {
    "tokenizer.json": lambda p: tokenmill.Tokenizer.from_huggingface(p),
    ".tiktoken": lambda p: tokenmill.Tokenizer.from_tiktoken(p, pattern="gpt2"),
    "vocab.txt": lambda p: tokenmill.Tokenizer.from_wordpiece_vocab(p),
    ".model": lambda p: tokenmill.Tokenizer.from_sentencepiece(p),
    "GPT-2 pair": lambda p: tokenmill.Tokenizer.from_gpt2(p, p),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("reader", READERS)
def test_a_fifo_is_refused_not_read(reader: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(CorpusError, match="pipe: is not a regular file"):
        READERS[reader](fifo)


@pytest.mark.parametrize("reader", READERS)
def test_a_directory_is_refused(reader: str, tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="is a directory"):
        READERS[reader](tmp_path)


def test_a_bpe_vocabulary_given_as_a_list_is_refused(tmp_path: Path) -> None:
    # A list of pairs would otherwise be read as Unigram's [piece, score]: ids by position.
    vocab = [[chr(0x100 + i) if i < 33 else chr(i), i] for i in range(40)]
    doc = {"model": {"type": "BPE", "vocab": vocab, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="maps each token to its id"):
        tokenmill.Tokenizer.from_huggingface(path)
