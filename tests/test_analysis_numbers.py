"""tokenmill.analysis.numbers: split shapes, tokens per number and place-value alignment."""

from __future__ import annotations

import pytest
from analysis_data import (
    tiktoken_cache,  # noqa: F401 - autouse fixture: encoding names load offline
    tiktoken_real,
)

import tokenmill
from tokenmill.analysis.numbers import is_aligned, number_splits, sample_numbers, split_shape


@pytest.mark.parametrize(
    ("pieces", "shape", "aligned"),
    [
        (["12345"], "ddddd", True),
        (["12", "345"], "dd|ddd", True),
        (["1", "234", "567"], "d|ddd|ddd", True),
        (["123", "45"], "ddd|dd", False),
        (["123", "4"], "ddd|d", False),
        (["1", "2", "3", "4"], "d|d|d|d", True),
        (["12", "34"], "dd|dd", True),
        (["1", "23", "4"], "d|dd|d", False),
        (["12", "3.", "45"], "dd|d.|dd", False),
        (["123", ".", "45"], "ddd|.|dd", True),
    ],
)
def test_shape_and_alignment_by_hand(pieces: list[str], shape: str, aligned: bool) -> None:
    assert split_shape(pieces) == shape
    assert is_aligned(pieces) is aligned


def test_samples_are_distinct_repeatable_and_of_the_length() -> None:
    numbers = sample_numbers(6, 50, seed=3)
    assert numbers == sample_numbers(6, 50, seed=3) and len(set(numbers)) == len(numbers) <= 50
    assert all(len(n) == 6 and n[0] != "0" for n in numbers)
    assert sample_numbers(2, 1000) == [str(i) for i in range(10, 100)]
    assert all(len(n.split(".")[1]) == 2 for n in sample_numbers(3, 10, decimals=2))


def test_presets_compared() -> None:
    report = number_splits([], patterns=["gpt2", "cl100k", "digits"], lengths=[1, 4, 7], samples=20)
    rows = {(r.tokenizer, r.length): r for r in report.rows}
    assert rows["pre:gpt2", 7].shapes == {"ddddddd": 20}
    assert rows["pre:cl100k", 4].shapes == {"ddd|d": 20} and rows["pre:cl100k", 4].aligned_share == 0
    assert rows["pre:cl100k", 7].tokens_per_number == 3
    assert rows["pre:digits", 7].shapes == {"d|d|d|d|d|d|d": 20} and rows["pre:digits", 7].aligned_share == 1
    assert "aligned %" in report.format() and report.to_dict()["rows"][0]["tokenizer"] == "pre:gpt2"


@pytest.mark.parametrize("name", ["cl100k_base", "r50k_base"])
def test_real_vocabularies_equal_tiktoken(name: str) -> None:
    import tiktoken

    enc = tiktoken.get_encoding(name) if name == "r50k_base" else tiktoken_real(name)
    report = number_splits(name, lengths=[3, 5, 8], samples=40, context="x = {};")
    for row in report.rows:
        for shape, example in row.examples.items():
            number = example.replace("|", "")
            tokens = [enc.decode([i]) for i in enc.encode_ordinary(f"x = {number};")]
            inner = [t.strip() for t in tokens if any(c.isdigit() for c in t)]
            assert "|".join(inner) == example, (name, shape)
    rows = {r.length: r for r in report.rows}
    if name == "cl100k_base":
        assert rows[5].shapes == {"ddd|dd": 40} and rows[8].tokens_per_number == 3
    else:
        # GPT-2's vocabulary learned whichever digit strings were frequent: shapes vary.
        assert len(rows[8].shapes) > 1


def test_decimals_and_arguments() -> None:
    report = number_splits("cl100k_base", lengths=[4], samples=10, decimals=2)
    row = report.rows[0]
    assert row.kind == "decimal" and all(shape.count(".") == 1 for shape in row.shapes)
    with pytest.raises(tokenmill.ConfigError, match="context"):
        number_splits("cl100k_base", context="no slot")
    with pytest.raises(tokenmill.ConfigError, match="at least one"):
        number_splits([])
    with pytest.raises(tokenmill.PatternError):
        number_splits([], patterns=["CL100K"])
