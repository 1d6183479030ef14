"""Unigram `tokenizer.json` files behind Hugging Face's splitting pre-tokenizers — a `ByteLevel`
one (tokenizers' tutorial: NFKC, ByteLevel, a byte-level vocabulary), `Whitespace`, `Digits`
before `ByteLevel` — load and run as `tokenizers` runs them: ids, tokens, offsets and decoding.
The files are trained here by tokenizers itself."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

import tokenmill
from tokenmill import tokenizers as tt

SHAPES = {
    "nfkc-byte-level": (normalizers.NFKC(), pre_tokenizers.ByteLevel(), decoders.ByteLevel()),
    "byte-level-no-prefix": (None, pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()),
    "digits-byte-level": (
        normalizers.Lowercase(),
        pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
        ),
        decoders.ByteLevel(),
    ),
    "whitespace": (normalizers.NFKC(), pre_tokenizers.Whitespace(), None),
}
# Characters Unicode had in version 3.2: Hugging Face's normalization tables are older than
# ours, so NFKC maps some newer characters that tokenizers keeps (U+10781 → U+02D0).
TEXT = st.text(
    st.characters(exclude_categories=("Cs",)).filter(lambda c: unicodedata.ucd_3_2_0.category(c) != "Cn"),
    max_size=30,
)


@pytest.fixture(scope="module", params=sorted(SHAPES))
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, stdlib_text: str) -> Path:
    normalizer, pre_tokenizer, decoder = SHAPES[request.param]
    tok = HFTokenizer(models.Unigram())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    if decoder is not None:
        tok.decoder = decoder
    byte_level = "byte-level" in request.param
    trainer = trainers.UnigramTrainer(
        vocab_size=1500,
        show_progress=False,
        special_tokens=["<pad>", "<unk>"],
        unk_token=None if byte_level else "<unk>",
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() if byte_level else [],
    )
    tok.train_from_iterator(stdlib_text[:200_000].splitlines(), trainer=trainer)
    path = tmp_path_factory.mktemp("unigram") / "tokenizer.json"
    tok.save(str(path))
    return path


def _check(hf: HFTokenizer, ours: tt.Tokenizer, text: str) -> None:
    expected, got = hf.encode(text), ours.encode(text)
    assert got.ids == expected.ids, text
    assert got.tokens == expected.tokens, text
    assert got.offsets == expected.offsets, text
    assert ours.decode(got.ids) == hf.decode(expected.ids), text


def test_real_text_runs_as_tokenizers_runs_it(trained: Path, stdlib_text: str, multilingual_text: str) -> None:
    hf, ours = HFTokenizer.from_file(str(trained)), tt.Tokenizer.from_file(trained)
    lines = stdlib_text[-100_000:].splitlines()[:1500] + multilingual_text.splitlines()[:500]
    for line in lines:
        _check(hf, ours, line)
    assert [e.ids for e in ours.encode_batch(lines)] == [e.ids for e in hf.encode_batch(lines)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_any_text_runs_as_tokenizers_runs_it(trained: Path, text: str) -> None:
    _check(HFTokenizer.from_file(str(trained)), tt.Tokenizer.from_file(trained), text)


def test_the_tokenmill_tokenizer_reads_it_and_keeps_it(trained: Path, tmp_path: Path, stdlib_text: str) -> None:
    hf = HFTokenizer.from_file(str(trained))
    tok = tokenmill.Tokenizer.from_huggingface(trained)
    tok.save(tmp_path / "own.json")
    again = tokenmill.Tokenizer.load(tmp_path / "own.json")
    for line in stdlib_text.splitlines()[:300]:
        expected = hf.encode(line, add_special_tokens=False).ids
        assert tok.encode(line) == expected
        assert again.encode(line) == expected


def test_a_step_after_byte_level_is_refused(trained: Path, tmp_path: Path) -> None:
    import json

    doc = json.loads(trained.read_text())
    doc["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [{"type": "ByteLevel", "add_prefix_space": False}, {"type": "Digits"}],
    }
    path = tmp_path / "after.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(tokenmill.FormatError, match="after ByteLevel"):
        tt.Tokenizer.from_file(path)
