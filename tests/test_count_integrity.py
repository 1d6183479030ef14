"""Counts are never silently wrong: no wraparound near 2^64, and damaged count files are refused."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import tokenmill
from tokenmill import ConfigError, FormatError


def test_pair_counts_that_would_wrap_are_an_error() -> None:
    # Summed in a u64, 2^63 + 2^63 wraps to 0 and the merge (x, a) would win.
    with pytest.raises(ConfigError, match="2\\^64"):
        tokenmill.train_bpe({"ab": 2**63, "xab": 2**63, "cd": 2**62}, num_merges=1)


def test_large_counts_that_fit_train_exactly() -> None:
    # (a, b): 2^62 + 2^61; (c, d): one more.
    tok = tokenmill.train_bpe({"ab": 2**62, "xab": 2**61, "cd": 2**62 + 2**61 + 1}, num_merges=1)
    assert tok.merges == [(b"c", b"d")]


def test_totals_past_two_to_the_64_are_exact() -> None:
    counts = tokenmill.count_words({"a": 2**63, "b": 2**63, "c": 5}, pattern="whitespace")
    assert counts.total == 2**64 + 5


@pytest.mark.parametrize("word", ["a", "a-word-longer-than-fifteen-bytes"])  # short and long tables
def test_a_word_count_past_two_to_the_64_is_an_error_not_a_wrap(word: str) -> None:
    a = tokenmill.count_words({word: 2**63}, pattern="whitespace")
    both = a + a  # the count of the word cannot be held
    with pytest.raises(ConfigError, match="cannot be held"):
        tokenmill.train_bpe(both, num_merges=1)


def test_damaged_count_files_are_refused(tmp_path: Path, stdlib_text: str) -> None:
    path = tmp_path / "c.counts"
    tokenmill.count_words([stdlib_text[:20_000]]).save(path)
    good = path.read_bytes()
    rng = random.Random(7)
    for _ in range(300):
        data = bytearray(good)
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        with pytest.raises(FormatError):
            tokenmill.WordCounts.load(path)
    path.write_bytes(good[:-3])
    with pytest.raises(FormatError):
        tokenmill.WordCounts.load(path)


def test_version_1_count_files_still_load() -> None:
    # Written by the previous release (no checksum): still read, and what it holds is kept.
    fixture = Path(__file__).parent / "fixtures" / "counts_v1.counts"
    assert fixture.read_bytes()[4:8] == (1).to_bytes(4, "little")
    counts = tokenmill.WordCounts.load(fixture)
    assert (len(counts), counts.total, counts["the"], counts[" the"]) == (10, 11, 1, 2)
    assert counts.pattern == "cl100k"


def test_a_newer_count_file_is_refused_by_version(tmp_path: Path) -> None:
    data = bytearray((Path(__file__).parent / "fixtures" / "counts_v1.counts").read_bytes())
    data[4:8] = (99).to_bytes(4, "little")
    (tmp_path / "new.counts").write_bytes(bytes(data))
    with pytest.raises(FormatError, match="version 99"):
        tokenmill.WordCounts.load(tmp_path / "new.counts")
