"""Character-level BPE `tokenizer.json` files — SentencePiece BPE as transformers converts it
(Llama 2, Mistral) — load and run as `tokenizers` runs them: ids with and without the template
and with added tokens in the text, offsets, and decoding with the file's own decoder steps.

The files are made at test time: a SentencePiece BPE model trained here (byte fallback, split
digits), converted by transformers' `LlamaTokenizer` in its two modes (`Metaspace` with
`prepend_scheme` "always" and "first"), and rewritten in the older spelling real Llama 2 and
Mistral files have (`Prepend` + `Replace` normalizers, no pre-tokenizer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

import tokenmill

SHAPES = ["metaspace-always", "metaspace-first", "prepend-replace", "metaspace-split"]
ASSIGNED = st.characters(exclude_categories=("Cs", "Cn"))
TRICKY = st.one_of(
    st.text(ASSIGNED, max_size=12),
    st.sampled_from([" ", "  ", "\u2581", "<s>", "</s>", "<unk>", "\n", "12345", "😀", "e\u0301", "\t"]),
)


@pytest.fixture(scope="module")
def sp_model(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str, multilingual_text: str) -> Path:
    spm = pytest.importorskip("sentencepiece")
    # transformers reads a SentencePiece model from a directory, as `tokenizer.model`.
    path = tmp_path_factory.mktemp("spm") / "tokenizer.model"
    lines = (stdlib_text[:400_000] + "\n" + multilingual_text).splitlines()
    with open(path, "wb") as out:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=out,
            model_type="bpe",
            vocab_size=1500,
            byte_fallback=True,
            split_digits=True,
            character_coverage=0.9995,
            minloglevel=2,
        )
    return path


@pytest.fixture(scope="module", params=SHAPES)
def pair(request: pytest.FixtureRequest, sp_model: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from transformers import LlamaTokenizer

    converted = LlamaTokenizer.from_pretrained(str(sp_model.parent), legacy=request.param != "metaspace-first")
    doc = json.loads(converted.backend_tokenizer.to_str())
    if request.param == "prepend-replace":
        doc["normalizer"] = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": "\u2581"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
            ],
        }
        doc["pre_tokenizer"] = None
        doc["model"]["unk_token"] = "<unk>"
    elif request.param == "metaspace-split":
        doc["pre_tokenizer"]["split"] = True
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    return tokenmill.Tokenizer.from_huggingface(path), HFTokenizer.from_file(str(path))


def hf_ids(hf: HFTokenizer, text: str) -> list[int]:
    return hf.encode(text, add_special_tokens=False).ids


def test_real_text_ids_and_decoding(pair, stdlib_text: str, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    texts = [multilingual_text, stdlib_text[-30_000:], *multilingual_text.splitlines()[:40]]
    for text in texts:
        ids = tok.encode(text, allowed_special="all")
        assert ids == hf_ids(hf, text)
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


def test_model_inputs_and_added_tokens_in_text(pair) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    for text in ["Hello world", " leading space", "<s>Hello</s> world<unk>", "a <s> b", "", "\u2581x", "x  y"]:
        ours, theirs = tok.encode_for_model(text), hf.encode(text)
        assert ours.ids == theirs.ids, text
        assert ours.offsets == theirs.offsets, text
        ids = theirs.ids
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip), (text, skip)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(TRICKY, max_size=12).map("".join))
def test_generated_text(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    ids = tok.encode(text, allowed_special="all")
    assert ids == hf_ids(hf, text)
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.integers(0, 1499), max_size=20))
def test_any_ids_decode_as_tokenizers_decodes_them(pair, ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    for skip in (False, True):
        assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)


def test_saved_and_pickled_tokenizers_keep_the_decoder(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import pickle

    tok, hf = pair
    ids = hf_ids(hf, "The café costs 12 € 😀")
    tok.save(tmp_path / "t.json")
    for again in (tokenmill.Tokenizer.load(tmp_path / "t.json"), pickle.loads(pickle.dumps(tok))):
        assert again.decode(ids) == hf.decode(ids) and again.encode("x y", allowed_special="all") == hf_ids(hf, "x y")


def test_components_that_would_run_differently_are_refused(sp_model: Path, tmp_path: Path) -> None:
    from transformers import LlamaTokenizer

    doc = json.loads(LlamaTokenizer.from_pretrained(str(sp_model.parent), legacy=True).backend_tokenizer.to_str())
    cases = {
        "Nonesuch": lambda d: d.update(pre_tokenizer={"type": "Nonesuch"}),
        "Nonesuch normalizer": lambda d: d.update(normalizer={"type": "Nonesuch"}),
        "ByteFallback after Fuse": lambda d: d["decoder"]["decoders"].append({"type": "ByteFallback"}),
    }
    for name, change in cases.items():
        bad = json.loads(json.dumps(doc))
        change(bad)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad, ensure_ascii=False))
        # A component no reader runs is a FormatError; a normalizer the core does not run, a ConfigError.
        with pytest.raises((tokenmill.FormatError, tokenmill.ConfigError), match=name.split()[0]):
            tokenmill.Tokenizer.from_huggingface(path)


@pytest.mark.parametrize("where", ["before", "after", "alone"])
def test_other_normalizers_run_with_the_whitespace_steps(sp_model: Path, tmp_path: Path, where: str) -> None:
    from transformers import LlamaTokenizer

    doc = json.loads(LlamaTokenizer.from_pretrained(str(sp_model.parent), legacy=True).backend_tokenizer.to_str())
    steps = {"before": [{"type": "NFKC"}, {"type": "Lowercase"}], "after": [], "alone": []}[where]
    whitespace = [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    ]
    normalizers = {"before": steps + whitespace, "after": [*whitespace, {"type": "Lowercase"}], "alone": []}[where]
    doc["normalizer"] = {"type": "Sequence", "normalizers": normalizers or [{"type": "Lowercase"}]}
    doc["pre_tokenizer"] = None
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    ours, theirs = tokenmill.Tokenizer.from_huggingface(path), HFTokenizer.from_file(str(path))
    for text in ["Hello World", "  The CAFÉ costs 12 €  ", "ﬁne ＡＢＣ", ""]:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text


def test_token_strings_are_the_vocabularys(pair, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    text = multilingual_text[:3000] + " <s> 😀"
    assert tok.encode_for_model(text).tokens == hf.encode(text).tokens
    assert [tok.id_to_token(i) for i in range(hf.get_vocab_size())] == [
        hf.id_to_token(i) for i in range(hf.get_vocab_size())
    ]
