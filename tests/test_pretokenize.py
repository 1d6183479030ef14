"""The hand-written preset splitters equal the reference patterns run by Python's `regex`."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import _core
from tokenmill.pretokenize_patterns import PRESET_PATTERNS as PRESETS

COMPILED = {name: regex.compile(p) for name, p in PRESETS.items()}

# Characters that exercise every branch: whitespace kinds, CR/LF, apostrophes and contraction
# letters in both cases (and ſ, which case-folds to s), digits of several scripts, marks, CJK,
# titlecase and modifier letters, emoji with skin-tone modifiers and ZWJ, slashes.
TRICKY = " \t\n\r\x0b\x0c\x85\xa0\u2028\u3000'’sSdDmMtTlLvVeErRſaZé\u0301\u0308ǅʰ中の한1٣Ⅻ½!?./-_#()👍🏽\u200d🇯"

assigned = st.characters(exclude_categories=("Cs", "Cn"))


def check(name: str, text: str) -> None:
    assert tokenmill.split(name, text) == COMPILED[name].findall(text), (name, text)


def test_presets_on_real_source(stdlib_text: str) -> None:
    for name in PRESETS:
        check(name, stdlib_text)


def test_presets_on_multilingual_text(multilingual_text: str) -> None:
    for name in PRESETS:
        check(name, multilingual_text)
        for line in multilingual_text.splitlines():
            check(name, line)


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY), max_size=40))
def test_presets_on_tricky_strings(text: str) -> None:
    for name in PRESETS:
        check(name, text)


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=assigned, max_size=60))
def test_presets_on_arbitrary_unicode(text: str) -> None:
    for name in PRESETS:
        check(name, text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([" ", "  ", "\n", "\r\n", "\t", "x", "X", "1234", "'s", "'LL", "!!", "中"]), max_size=30)
)
def test_presets_on_runs(parts: list[str]) -> None:
    text = "".join(parts)
    for name in PRESETS:
        check(name, text)


def test_whitespace_and_user_regex() -> None:
    assert tokenmill.split("whitespace", " low\tlower\n\n newest ") == ["low", "lower", "newest"]
    assert tokenmill.split(r"\d+|[a-z]+", "abc123 def") == ["abc", "123", "def"]
    assert tokenmill.split("none", "a b") == ["a b"]


def test_long_runs_split_quickly() -> None:
    # Linear-time splitting: these would be slow with quadratic rescans.
    for name in PRESETS:
        assert "".join(tokenmill.split(name, " " * 1_000_000 + "x")) == " " * 1_000_000 + "x"
        assert len(tokenmill.split(name, "a" * 1_000_000)) == 1
        assert len(tokenmill.split(name, "A" * 500_000 + "\u0301")) >= 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=assigned, max_size=40), max_size=6))
def test_count_pieces_counts_what_split_gives(texts: list[str]) -> None:
    for pattern in ["cl100k", r"\p{L}+|\s+(?!\S)", r"[a-z]*"]:
        expected = sum(1 for t in texts for piece in tokenmill.split(pattern, t) if piece)
        assert _core.count_pieces(pattern, texts) == expected, pattern
