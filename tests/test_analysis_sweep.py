"""tokenmill.analysis.sweep: vocabulary-size sweep by truncation, efficiency and 2·V·d."""

from __future__ import annotations

import math

import pytest

import tokenmill
from tokenmill.analysis import efficiencies, vocab_sweep
from tokenmill.analysis._words import count_words_in


def test_efficiency_by_hand() -> None:
    # p = (1/2, 1/4, 1/4) over V = 4: H = 1.5 bits of log2 4 = 2 bits.
    shannon, renyi = efficiencies([2, 1, 1, 0], 4)
    assert shannon == pytest.approx(0.75)
    assert renyi == pytest.approx(math.log2(0.5**2.5 + 2 * 0.25**2.5) / (1 - 2.5) / 2)
    assert efficiencies([5, 5, 5, 5], 4) == pytest.approx((1.0, 1.0))
    assert efficiencies([7, 0, 0], 3) == (0.0, 0.0)  # one token carries no information
    assert efficiencies([1, 3], 2, alpha=1)[0] == efficiencies([1, 3], 2, alpha=1)[1]
    assert efficiencies([], 4) == (0.0, 0.0)


@pytest.fixture(scope="module")
def trained(stdlib_text: str) -> tokenmill.Tokenizer:
    return tokenmill.train_bpe([stdlib_text[:400_000]], vocab_size=2048, show_progress=False)


def test_sweep_equals_truncated_tokenizers(trained: tokenmill.Tokenizer, stdlib_text: str) -> None:
    held = stdlib_text[400_000:600_000]
    sweep = vocab_sweep(trained, {"held": [held]}, sizes=[512, 1024, 2048], d_model=64, body_params=1_000_000)
    assert [r.vocab_size for r in sweep.rows] == [512, 1024, 2048]
    words = count_words_in([held])
    assert sweep.words == words and sweep.text_bytes == len(held.encode())
    for row in sweep.rows:
        tok = trained if row.vocab_size == 2048 else trained.truncated(row.vocab_size)
        ids = tok.encode_ordinary(held)
        assert row.tokens == len(ids)
        assert row.bytes_per_token == len(held.encode()) / len(ids)
        assert row.tokens_per_word == len(ids) / words
        counts = [ids.count(i) for i in range(tok.n_vocab)]
        assert (row.shannon_efficiency, row.renyi_efficiency) == pytest.approx(efficiencies(counts, row.vocab_size))
        assert row.embedding_params == 2 * row.vocab_size * 64
        assert row.embedding_share == pytest.approx(row.embedding_params / (1_000_000 + row.embedding_params))
    # A larger vocabulary compresses more, and costs more parameters.
    bpt = [r.bytes_per_token for r in sweep.rows]
    assert bpt == sorted(bpt) and bpt[0] < bpt[-1]
    assert "2·V·d" in sweep.format() and sweep.to_dict()["rows"][0]["vocab_size"] == 512


def test_default_sizes_skip_what_truncation_refuses(trained: tokenmill.Tokenizer, stdlib_text: str) -> None:
    sweep = vocab_sweep(trained, {"held": [stdlib_text[400_000:420_000]]})
    sizes = [r.vocab_size for r in sweep.rows]
    assert sizes == [256, 512, 1024, 2048]  # halvings below the 256 bytes cannot exist
    assert all(r.embedding_params is None and r.embedding_share is None for r in sweep.rows)
    with pytest.raises(tokenmill.ConfigError, match="vocab_size must be between"):
        vocab_sweep(trained, {"held": ["x"]}, sizes=[100])
    with pytest.raises(tokenmill.ConfigError, match="d_model"):
        vocab_sweep(trained, {"held": ["x"]}, d_model=0)
    with pytest.raises(tokenmill.ConfigError, match="renyi_alpha"):
        vocab_sweep(trained, {"held": ["x"]}, renyi_alpha=-1)
