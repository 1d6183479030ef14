"""Unigram `tokenizer.json` files as transformers' converters write them for T5 and XLM-R
(`Precompiled` normalizer, `WhitespaceSplit` + `Metaspace` pre-tokenizers, `Metaspace` decoder,
their templates) load and run as `tokenizers` runs them. The files are made at test time from
a SentencePiece Unigram model trained here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

import tokenmill

# transformers' class for each model family, and the file name it reads the model from.
CONVERTERS = {
    "t5": ("T5Tokenizer", "spiece.model"),
    "xlm-roberta": ("XLMRobertaTokenizer", "sentencepiece.bpe.model"),
    # T5's file with the steps ALBERT's converter puts before the map with keep_accents (its
    # tokenizer class wants ALBERT's own special pieces): quotes, Lowercase.
    "albert": ("T5Tokenizer", "spiece.model"),
    # The shape transformers 4's converters wrote (most files on the Hub): the map and a Replace
    # of runs of spaces, then one Metaspace that prepends ▁ to every stretch and splits before
    # each ▁ — run exactly as `tokenizers` runs it, whatever the text.
    "metaspace": ("T5Tokenizer", "spiece.model"),
    # The same with ALBERT's steps before the map, NFKD and StripAccents included.
    "metaspace-albert": ("T5Tokenizer", "spiece.model"),
}
METASPACE_NORMALIZERS = [{"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
METASPACE = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
ALBERT_STEPS = [
    {"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
    {"type": "Replace", "pattern": {"String": "''"}, "content": '"'},
    {"type": "Lowercase"},
]
ALBERT_DECOMPOSING = [*ALBERT_STEPS, {"type": "NFKD"}, {"type": "StripAccents"}]
# Control characters (other than tab and line breaks) and the line and paragraph separators are
# left out: what transformers 5's WhitespaceSplit makes of them after the character map differs
# from SentencePiece's rules, which tokenmill follows (formats/huggingface_sentencepiece.py).
ASSIGNED = st.characters(exclude_categories=("Cs", "Cn", "Cc", "Zl", "Zp"))
TRICKY = st.one_of(
    st.text(ASSIGNED, max_size=12),
    st.sampled_from([" ", "  ", "\u2581", "\t", "\u3000", "\u00a0", "\n", "</s>", "<unk>", "é", "ﬁ", "１２"]),
)


@pytest.fixture(scope="module")
def sp_model(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str, multilingual_text: str) -> Path:
    spm = pytest.importorskip("sentencepiece")
    path = tmp_path_factory.mktemp("spm") / "unigram.model"
    lines = (stdlib_text[:300_000] + "\n" + multilingual_text).splitlines()
    with open(path, "wb") as out:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=out,
            model_type="unigram",
            vocab_size=2000,
            minloglevel=2,
            # T5's layout, which its converter assumes.
            pad_id=0,
            eos_id=1,
            unk_id=2,
            bos_id=-1,
        )
    return path


@pytest.fixture(scope="module", params=sorted(CONVERTERS))
def pair(request: pytest.FixtureRequest, sp_model: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import transformers

    cls, name = CONVERTERS[request.param]
    directory = tmp_path_factory.mktemp(request.param)
    shutil.copy(sp_model, directory / name)
    converted = getattr(transformers, cls).from_pretrained(str(directory))
    path = directory / "tokenizer.json"
    path.write_text(converted.backend_tokenizer.to_str())
    doc = json.loads(path.read_text())
    steps = doc["normalizer"].get("normalizers", [doc["normalizer"]])
    if request.param == "albert":
        doc["normalizer"] = {"type": "Sequence", "normalizers": ALBERT_STEPS + steps}
    if request.param.startswith("metaspace"):
        maps = [s for s in steps if s["type"] == "Precompiled"]
        before = ALBERT_DECOMPOSING if request.param == "metaspace-albert" else []
        doc["normalizer"] = {"type": "Sequence", "normalizers": before + maps + METASPACE_NORMALIZERS}
        doc["pre_tokenizer"] = METASPACE
    path.write_text(json.dumps(doc))
    assert doc["model"]["type"] == "Unigram" and any(s["type"] == "Precompiled" for s in steps)
    return tokenmill.Tokenizer.from_huggingface(path), HFTokenizer.from_file(str(path))


def test_real_text(pair, stdlib_text: str, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    for text in [multilingual_text, stdlib_text[-20_000:], *multilingual_text.splitlines()[:40]]:
        ids = tok.encode(text, allowed_special="all")
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


def test_model_inputs_token_strings_and_decoding(pair) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    for text in ["Hello world", "  two  spaces ", "Ünïcödé ﬁne １２ 東京", "x </s> y", ""]:
        ours, theirs = tok.encode_for_model(text), hf.encode(text)
        assert ours.ids == theirs.ids, text
        # An unknown token shows the text it stands for, as in Hugging Face.
        assert ours.tokens == theirs.tokens, text
        for skip in (False, True):
            assert tok.decode(theirs.ids, skip_special_tokens=skip) == hf.decode(theirs.ids, skip_special_tokens=skip)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(TRICKY, max_size=12).map("".join))
def test_generated_text(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


# Any text at all for the files run exactly: control characters, separators, lone marks.
ANY = st.one_of(st.text(max_size=12), TRICKY, st.sampled_from(["e\u0301", "\u0133\ua827", "\r\n", "\x14", "0" * 27]))


@settings(max_examples=500, deadline=None)
@given(text=st.lists(ANY, max_size=12).map("".join))
def test_files_run_exactly_give_the_same_ids_offsets_and_tokens(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    theirs = hf.encode(text, add_special_tokens=False)
    assert tok.encode(text, allowed_special="all") == theirs.ids
    ours = tok.encode_for_model(text, add_special_tokens=False)
    assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets)
    assert ours.tokens == theirs.tokens
    assert tok.decode(theirs.ids) == hf.decode(theirs.ids, skip_special_tokens=False)


def test_decomposition_before_the_map_runs_as_hugging_face_runs_it(sp_model: Path, tmp_path: Path) -> None:
    """ALBERT's converter without keep_accents puts NFKD and StripAccents before the map; Hugging
    Face's Precompiled then leaves decomposed Hangul decomposed (clusters of 6 bytes or more go
    character by character), where SentencePiece's map would recompose it: tokenmill gives
    Hugging Face's ids."""
    import transformers

    shutil.copy(sp_model, tmp_path / "spiece.model")
    doc = json.loads(transformers.T5Tokenizer.from_pretrained(str(tmp_path)).backend_tokenizer.to_str())
    steps = doc["normalizer"].get("normalizers", [doc["normalizer"]])
    doc["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"}, *steps]}
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc))
    tok = tokenmill.Tokenizer.from_huggingface(tmp_path / "tokenizer.json")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["한국어 텍스트", "Crème brûlée à la carte", "ｶﾞｷﾞ ①②③ ﬁ", "naïve café"]:
        theirs = hf.encode(text, add_special_tokens=False)
        ours = tok.encode_for_model(text, add_special_tokens=False)
        assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets), text


def test_written_back_files_give_the_same_ids(pair, multilingual_text: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    tok.to_huggingface(tmp_path / "tokenizer.json")
    again = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in multilingual_text.splitlines()[:40]:
        assert again.encode(text, add_special_tokens=False).ids == hf.encode(text, add_special_tokens=False).ids


def _without_unknown_piece(tmp_path: Path) -> tuple[tokenmill.Tokenizer, Any]:
    """A Unigram `tokenizer.json` with `unk_id: null`; "ab" is a piece but "b" alone is not."""
    from tokenizers import Tokenizer as HF
    from tokenizers import models, pre_tokenizers

    pieces = [("▁", -1.0), ("a", -2.0), ("ab", -1.5), ("c", -2.5), ("▁a", -1.2), ("ca", -3.0)]
    hf = HF(models.Unigram(pieces, None))
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    path = tmp_path / "no-unk.json"
    hf.save(str(path))
    assert json.loads(path.read_text())["model"]["unk_id"] is None
    return tokenmill.Tokenizer.from_huggingface(path), hf


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="abc x", max_size=12))
def test_a_model_without_an_unknown_piece_refuses_what_tokenizers_refuses(tmp_path: Path, text: str) -> None:
    """tokenizers gives up as soon as an unknown character would be the best way into a
    position, even where a longer piece covers it in the end ("ab" with no "b"): tokenmill
    refuses exactly the same texts, with tokenizers' message, and gives its ids otherwise."""
    ours, theirs = _without_unknown_piece(tmp_path)
    try:
        expected = theirs.encode(text).ids
    except Exception as e:  # tokenizers raises a plain Exception
        with pytest.raises(tokenmill.OutOfVocabularyError, match="unknown token but `unk_id` is missing"):
            ours.encode(text)
        assert "unk_id" in str(e)
    else:
        assert ours.encode(text) == expected
