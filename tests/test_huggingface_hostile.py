"""`tokenizer.json` files with any field of any component replaced by a value of another shape
(or removed): loading and using them gives a tokenmill error naming the file — never an
`AttributeError`, `TypeError`, `KeyError` or other bare exception from inside a reader. Files of
every family, built here with `tokenizers`. Each file is loaded in a child with memory and time
limits, so a crash or a hang fails the test instead of the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bounded import bounded, expect_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

import tokenmill


def _files() -> dict[str, dict[str, Any]]:
    wp = Tokenizer(models.WordPiece(vocab={"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "a": 3, "##b": 4}, unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer()
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    wp.decoder = decoders.WordPiece()
    bpe = Tokenizer(models.BPE(vocab={"a": 0, "b": 1, "ab": 2}, merges=[("a", "b")]))
    bpe.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    bpe.decoder = decoders.ByteLevel()
    char = Tokenizer(models.BPE(vocab={"<unk>": 0, "a": 1, "b": 2, "ab": 3}, merges=[("a", "b")], unk_token="<unk>"))
    char.pre_tokenizer = pre_tokenizers.Whitespace()
    char.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    uni = Tokenizer(models.Unigram([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("a", -2.5), ("▁", -3.0)], 0))
    uni.pre_tokenizer = pre_tokenizers.Metaspace()
    uni.decoder = decoders.Metaspace()
    return {
        name: json.loads(t.to_str()) for name, t in [("wordpiece", wp), ("bpe", bpe), ("char", char), ("unigram", uni)]
    }


FILES = _files()
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.sampled_from([[], {}, [1, 2], {"type": "Foo"}, {"type": 3}, [["a", "b"]], ["a b"], {"a": 1}, [None]]),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in `node` a value can be put, the vocabularies and merges left whole."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in ("vocab", "merges"):
                out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), name=st.sampled_from(sorted(FILES)), value=VALUES, remove=st.booleans())
def test_any_field_any_value_is_a_tokenmill_error_or_works(
    tmp_path: Path, data: st.DataObject, name: str, value: Any, remove: bool
) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(json.dumps(FILES[name]))
    path = data.draw(st.sampled_from(_paths(doc)))
    node = doc
    for key in path[:-1]:
        node = node[key]
    if remove and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(doc), "utf-8")
    expect_clean(bounded(_load_and_use, file), (tokenmill.TokenmillError,), (path, value, remove))


def _load_and_use(file: Path) -> None:
    """Run in a bounded child: a load error names the file; whatever loads can be used."""
    try:
        tok = tokenmill.Tokenizer.from_huggingface(file)
    except tokenmill.TokenmillError as e:
        assert str(file) in str(e)
        return
    try:
        tok.encode("a b ab [CLS] x", allowed_special="all")
        tok.decode(tok.encode("a b ab"))
        tok.encode_for_model("a b ab", "b a")
    except tokenmill.TokenmillError:
        pass


@pytest.mark.parametrize(
    ("section", "value", "message"),
    [
        ("normalizer", 5, "normalizer: expected an object or null, not 5"),
        ("pre_tokenizer", {"type": {"a": 1}}, r"pre_tokenizer.type: expected a string"),
        ("decoder", {"type": "Sequence", "decoders": "x"}, r"decoder.decoders: expected a list"),
    ],
)
def test_the_error_names_the_field(tmp_path: Path, section: str, value: Any, message: str) -> None:
    doc = json.loads(json.dumps(FILES["wordpiece"]))
    doc[section] = value
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(tokenmill.FormatError, match=message):
        tokenmill.Tokenizer.from_huggingface(file)


def test_a_model_option_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(FILES["wordpiece"]))
    doc["model"]["max_input_chars_per_word"] = -1
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(tokenmill.FormatError, match="model.max_input_chars_per_word: expected a non-negative integer"):
        tokenmill.Tokenizer.from_huggingface(file)


def test_components_nested_without_end_are_refused(tmp_path: Path) -> None:
    node: dict[str, Any] = {"type": "Lowercase"}
    for _ in range(300):
        node = {"type": "Sequence", "normalizers": [node]}
    doc = json.loads(json.dumps(FILES["bpe"]))
    doc["normalizer"] = node
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(tokenmill.FormatError, match=str(file)):
        tokenmill.Tokenizer.from_huggingface(file)
