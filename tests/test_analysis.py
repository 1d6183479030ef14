"""tokenmill.analysis: loading, word segmentation, fertility, parallel premium, token counts and cost."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import sentencepiece as spm
from analysis_data import (
    AB,
    PARALLEL,
    SPACE_AB,
    SPACE_C3,
    hand_tokenizer,
    real,
    tiktoken_cache,  # noqa: F401 - autouse fixture: encoding names load offline
    tiktoken_real,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import _core, analysis
from tokenmill.analysis._counting import count_ids
from tokenmill.analysis._words import WORD_PATTERN


# -- words ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hello, world!", ["Hello", "world"]),
        ("don't l'homme e.g. 1,000.50 a,b", ["don't", "l'homme", "e.g", "1,000.50", "a", "b"]),
        ("東京は日本", ["東", "京", "は", "日", "本"]),
        ("テキストです", ["テキスト", "で", "す"]),
        ("नई दिल्ली", ["नई", "दिल्ली"]),
        ("กรุงเทพ มหานคร", ["กรุงเทพ", "มหานคร"]),
        ("snake_case x2 👍🏽 — ", ["snake_case", "x2"]),
    ],
)
def test_words_follow_unicode_word_segmentation(text: str, words: list[str]) -> None:
    assert analysis.split_words(text) == words
    assert analysis.count_words_in([text, text]) == 2 * len(words)


# The counter is a scanner written for WORD_PATTERN; the regex is its specification.
WORDISH = st.lists(
    st.one_of(
        st.sampled_from(["'", "’", ".", "·", ",", " ", "1", "a", "ー", "テ", "日", "の", "ก", "\u0301", "_", "٣"]),
        st.text(max_size=6),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(WORDISH, max_size=4))
def test_word_counter_equals_the_word_pattern(texts: list[str]) -> None:
    assert _core.count_words(texts) == _core.count_pieces(WORD_PATTERN, texts)


def test_word_counter_equals_the_word_pattern_on_real_text(multilingual_text: str, stdlib_text: str) -> None:
    for text in (multilingual_text, stdlib_text[:300_000]):
        docs = [text[i : i + 2000] for i in range(0, len(text), 2000)]
        assert _core.count_words(docs) == _core.count_pieces(WORD_PATTERN, docs) > 0


# -- loading -------------------------------------------------------------------------------------
def test_every_kind_of_tokenizer_loads(tmp_path: Path, stdlib_text: str) -> None:
    trained = tokenmill.train_bpe([stdlib_text[:50_000]], vocab_size=300, show_progress=False)
    trained.save(tmp_path / "own.json")
    trained.to_huggingface(tmp_path / "tokenizer.json")
    real("cl100k_base").save_tiktoken(tmp_path / "cl100k_base.tiktoken")
    model = tmp_path / "sp.model"
    model.write_bytes(_spm_model([s for s in stdlib_text[:100_000].splitlines() if s.strip()], vocab_size=300))
    loaded = analysis.load_tokenizers(
        [trained, "cl100k_base", tmp_path / "own.json", str(tmp_path / "tokenizer.json"), model]
        + [tmp_path / "cl100k_base.tiktoken", f"mine={tmp_path / 'own.json'}"]
    )
    assert list(loaded) == ["bpe-300", "cl100k_base", "own.json", "tokenizer.json", "sp.model"] + [
        "cl100k_base.tiktoken",
        "mine",
    ]
    text = "def f(x): return x + 1"
    assert loaded["cl100k_base"].encode(text) == tiktoken_real("cl100k_base").encode(text)
    assert loaded["own.json"].encode(text) == loaded["tokenizer.json"].encode(text) == trained.encode(text)
    assert loaded["cl100k_base.tiktoken"].encode(text) == loaded["cl100k_base"].encode(text)


def test_bad_tokenizer_arguments(tmp_path: Path) -> None:
    with pytest.raises(tokenmill.ConfigError, match="not an encoding name"):
        analysis.load_tokenizer("nonesuch")
    (tmp_path / "x.tiktoken").write_text("")
    with pytest.raises(tokenmill.ConfigError, match="does not say its pattern"):
        analysis.load_tokenizer(tmp_path / "x.tiktoken")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(tokenmill.FormatError):
        analysis.load_tokenizer(tmp_path / "x.json")
    with pytest.raises(tokenmill.ConfigError, match="a tokenizer must be"):
        analysis.load_tokenizer(3)  # type: ignore[arg-type]
    with pytest.raises(tokenmill.ConfigError, match="at least one"):
        analysis.load_tokenizers([])


# -- fertility -----------------------------------------------------------------------------------
def test_fertility_by_hand() -> None:
    tok = hand_tokenizer()
    # "ab ab a": ab | " ab" | " " | a → 4 tokens, 7 bytes, 3 words.
    # "ab é":    ab | " C3" | A9 → 3 tokens, 5 bytes, 2 words; " C3" and A9 are not whole
    #            characters, so 3 bytes fall to byte tokens.
    table = analysis.fertility({"hand": tok}, {"one": ["ab ab a"], "two": ["ab é"]})
    one, two, both = table.rows
    assert (one.tokens, one.bytes, one.chars, one.words) == (4, 7, 7, 3)
    assert (one.bytes_per_token, one.tokens_per_word, one.byte_token_share) == (1.75, 4 / 3, 0.0)
    assert (two.tokens, two.bytes, two.chars, two.words, two.byte_token_bytes) == (3, 5, 4, 2, 3)
    assert two.byte_token_share == 0.6 and two.chars_per_token == 4 / 3
    assert both.group == "(all)" and (both.tokens, both.bytes, both.words) == (7, 12, 5)
    counts = table.token_counts["hand"]
    assert {i: c for i, c in enumerate(counts) if c} == {
        ord("a"): 1,
        ord(" "): 1,
        0xA9: 1,
        AB: 2,
        SPACE_AB: 1,
        SPACE_C3: 1,
    }
    assert table.pivot("tokens")["two"] == {"hand": 3}
    assert "bytes/token" in table.format() and table.to_dict()["rows"][0]["tokens"] == 4


def test_unknown_share_by_hand(tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text("[UNK]\nhello\nworld\n##s\n")
    tok = tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "vocab.txt")
    row = analysis.fertility(tok, {"t": ["hello worlds xyz"]}).rows[0]
    assert (row.tokens, row.unknown_tokens, row.words) == (4, 1, 3)
    assert row.unknown_share == 0.25


def test_fertility_equals_tiktoken_on_real_files(tmp_path: Path, stdlib_text: str, multilingual_text: str) -> None:
    files = {"code": tmp_path / "code.txt", "multi": tmp_path / "multi.txt"}
    files["code"].write_text(stdlib_text, encoding="utf-8")
    files["multi"].write_text(multilingual_text * 50, encoding="utf-8")
    # The file is read in documents of about 64 KB; encoding them equals encoding the whole.
    assert files["code"].stat().st_size > 5 << 16
    table = analysis.fertility(["cl100k_base", "o200k_base"], {k: str(v) for k, v in files.items()})
    for row in table.rows:
        if row.group == "(all)":
            continue
        text = files[row.group].read_bytes().decode()
        assert row.tokens == len(tiktoken_real(row.tokenizer).encode_ordinary(text))
        assert row.bytes == len(text.encode()) and row.chars == len(text)
        assert row.words == analysis.count_words_in([text])
    # o200k's larger vocabulary covers more of the multilingual text in fewer tokens.
    pivot = table.pivot("bytes_per_token")["multi"]
    assert pivot["o200k_base"] > pivot["cl100k_base"]


def test_fertility_equals_hugging_face(tmp_path: Path, stdlib_text: str, multilingual_text: str) -> None:
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    hf.train_from_iterator([stdlib_text[:200_000]], trainer)
    hf.save(str(tmp_path / "tokenizer.json"))
    texts = [stdlib_text[200_000:260_000], multilingual_text]
    row = analysis.fertility(str(tmp_path / "tokenizer.json"), {"t": texts}).rows[0]
    assert row.tokens == sum(len(hf.encode(t, add_special_tokens=False).ids) for t in texts)
    # Byte-level BPE trained on code spells most non-Latin characters byte by byte.
    assert 0 < row.byte_token_share < 1


def _spm_model(lines: list[str], **options: object) -> bytes:
    import io

    out = io.BytesIO()
    options = {"vocab_size": 400, "model_type": "unigram", "minloglevel": 2, **options}
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, **options)
    return out.getvalue()


@pytest.mark.parametrize("byte_fallback", [True, False])
def test_sentencepiece_byte_and_unknown_shares(stdlib_text: str, byte_fallback: bool) -> None:
    lines = [line for line in stdlib_text[:200_000].splitlines() if line.strip()]
    model = _spm_model(lines, byte_fallback=byte_fallback, character_coverage=1.0)
    sp = spm.SentencePieceProcessor(model_proto=model)
    tok = tokenmill.Tokenizer.from_sentencepiece(model)
    text = "Plain words 東京 and more ж"  # characters the model never saw
    row = analysis.fertility(tok, {"t": [text]}).rows[0]
    ids = sp.encode(text)
    assert row.tokens == len(ids)
    if byte_fallback:
        assert row.byte_token_bytes == sum(1 for i in ids if sp.is_byte(i)) == len("東京ж".encode())
        assert row.unknown_tokens == 0
    else:
        assert row.unknown_tokens == sum(1 for i in ids if sp.is_unknown(i)) > 0
        assert row.byte_token_bytes == 0


def test_corpus_arguments(tmp_path: Path) -> None:
    with pytest.raises(tokenmill.CorpusError):
        analysis.fertility(hand_tokenizer(), str(tmp_path / "missing.txt"))
    with pytest.raises(tokenmill.ConfigError, match="no groups"):
        analysis.fertility(hand_tokenizer(), {})
    with pytest.raises(tokenmill.ConfigError, match="texts must be str"):
        analysis.fertility(hand_tokenizer(), {"x": [b"ab"]})  # type: ignore[list-item]


# -- parallel premium ----------------------------------------------------------------------------
def test_premium_by_hand() -> None:
    result = analysis.parallel_premium({"hand": hand_tokenizer()}, {"en": ["ab"], "xx": ["ab ab"], "yy": ["ab"]})
    assert result.tokens["hand"] == {"en": 1, "xx": 2, "yy": 1}
    assert result.premium["hand"] == {"en": 1.0, "xx": 2.0, "yy": 1.0}
    summary = result.summary["hand"]
    assert (summary["mean"], summary["max"], summary["max_language"], summary["spread"]) == (1.5, 2.0, "xx", 2.0)
    assert summary["at_parity"] == ["yy"]
    with pytest.raises(tokenmill.ConfigError, match="same number"):
        analysis.parallel_premium(hand_tokenizer(), {"en": ["ab"], "xx": []})
    with pytest.raises(tokenmill.ConfigError, match="includes 'en'"):
        analysis.parallel_premium(hand_tokenizer(), {"xx": ["ab"]})


def test_premium_on_parallel_sentences_equals_tiktoken() -> None:
    result = analysis.parallel_premium(["cl100k_base", "o200k_base"], PARALLEL)
    for name in ("cl100k_base", "o200k_base"):
        enc = tiktoken_real(name)
        tokens = {lang: sum(len(enc.encode_ordinary(s)) for s in items) for lang, items in PARALLEL.items()}
        assert result.tokens[name] == tokens
        assert math.isclose(result.premium[name]["hi"], tokens["hi"] / tokens["en"])
    # Hindi costs cl100k several times English; o200k narrows the gap.
    assert result.premium["cl100k_base"]["hi"] > 3
    assert result.premium["o200k_base"]["hi"] < result.premium["cl100k_base"]["hi"]
    assert "premium vs en" in result.format()


# -- counting and cost ---------------------------------------------------------------------------
def test_count_tokens_and_cost(tmp_path: Path, stdlib_text: str) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(stdlib_text[:100_000], encoding="utf-8")
    b.write_text("ab ab a", encoding="utf-8")
    report = analysis.count_tokens("cl100k_base", [str(a), str(b)], price_per_million=2.5)
    enc = tiktoken_real("cl100k_base")
    expected = [len(enc.encode_ordinary(p.read_text(encoding="utf-8"))) for p in (a, b)]
    assert [r.tokens for r in report.rows] == expected
    assert report.total_tokens == sum(expected)
    assert report.total_cost == pytest.approx(sum(expected) * 2.5 / 1e6)
    assert "total" in report.format()
    hand = analysis.count_tokens({"hand": hand_tokenizer()}, {"x": ["ab ab a", "ab"]})
    assert hand.total_tokens == 5 and hand.total_cost is None
    with pytest.raises(tokenmill.ConfigError, match="price_per_million"):
        analysis.count_tokens("cl100k_base", [str(b)], price_per_million=-1)


def test_count_ids_equals_tiktoken(multilingual_text: str) -> None:
    texts = multilingual_text.splitlines()
    counts, per_text = count_ids(real("cl100k_base"), texts, num_threads=2)
    enc = tiktoken_real("cl100k_base")
    ids = [enc.encode_ordinary(t) for t in texts]
    assert per_text == [len(x) for x in ids]
    for i in {i for x in ids for i in x}:
        assert counts[i] == sum(x.count(i) for x in ids)
    assert sum(counts) == sum(per_text)


def test_counting_without_numpy_gives_the_same(monkeypatch, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    import sys

    from tokenmill.analysis._counting import token_lengths

    texts = multilingual_text.splitlines()
    tok = real("cl100k_base")
    with_numpy = count_ids(tok, texts), token_lengths(tok, texts)
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now raises ImportError
    assert (count_ids(tok, texts), token_lengths(tok, texts)) == with_numpy


def test_count_reports_a_files_own_bytes_and_how_many_are_not_utf8(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import random

    from tokenmill.analysis import count_tokens

    rng = random.Random(3)
    data = bytes(rng.choice([0x61, 0x20, 0xFF, 0xC3, 0xA9, 0xE2, 0x82]) for _ in range(20_000))
    path = tmp_path / "mixed.txt"
    path.write_bytes(data)
    text = data.decode("utf-8", "replace")
    valid = len(text.encode("utf-8")) - 3 * text.count("\ufffd")
    tok = tokenmill.train_bpe(iter(["a é a"]), vocab_size=260)
    report = count_tokens(tok, [path])
    (row,) = report.rows
    assert row.bytes == len(data) and row.invalid_bytes == len(data) - valid > 0
    assert row.tokens == len(tok.encode_ordinary(text))
    assert f"mixed.txt: {len(data) - valid} of its bytes are not UTF-8" in report.format()
