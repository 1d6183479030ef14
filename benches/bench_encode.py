"""Encoding speed of a tokenmill-trained vocabulary: one long text, ~4 KB documents, batches."""

from __future__ import annotations

import pytest

import tokenmill


@pytest.fixture(scope="module")
def tok(corpus_text: str) -> tokenmill.Tokenizer:
    return tokenmill.train_bpe([corpus_text[:4_000_000]], vocab_size=16384, show_progress=False)


def test_encode_long_text(benchmark, tok: tokenmill.Tokenizer, corpus_text: str) -> None:  # type: ignore[no-untyped-def]
    ids = benchmark(tok.encode_ordinary, corpus_text)
    assert tok.decode(ids) == corpus_text


def test_encode_4k_documents(benchmark, tok: tokenmill.Tokenizer, corpus_text: str) -> None:  # type: ignore[no-untyped-def]
    docs = [corpus_text[i : i + 4096] for i in range(0, len(corpus_text), 4096)]
    benchmark(lambda: [tok.encode_ordinary(d) for d in docs])


@pytest.mark.parametrize("threads", [1, 2])
def test_encode_batch(benchmark, tok: tokenmill.Tokenizer, corpus_text: str, threads: int) -> None:  # type: ignore[no-untyped-def]
    docs = [corpus_text[i : i + 4096] for i in range(0, len(corpus_text), 4096)]
    benchmark(tok.encode_ordinary_batch, docs, num_threads=threads)
