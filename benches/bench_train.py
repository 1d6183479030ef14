"""Training speed: count + merge on the benchmark corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

import tokenmill


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k"])
def test_train_bpe_8k(benchmark, corpus_files: list[Path], pattern: str) -> None:  # type: ignore[no-untyped-def]
    files = [str(f) for f in corpus_files]
    tok = benchmark.pedantic(
        lambda: tokenmill.train_bpe(files, vocab_size=8192, pattern=pattern, show_progress=False),
        rounds=3,
        iterations=1,
    )
    assert tok.vocab_size == 8192
