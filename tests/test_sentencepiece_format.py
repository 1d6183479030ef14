"""SentencePiece `.model` files: the hand-written protobuf reader and writer, the precompiled
character map, and the reference normalizer, each checked against sentencepiece itself on models
trained here."""

from __future__ import annotations

import functools
import io
import json
import random
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

spm = pytest.importorskip("sentencepiece")

from conftest import MULTILINGUAL  # noqa: E402
from reference_sentencepiece import charsmap_rules, normalize_reference  # noqa: E402

from tokenmill import _core  # noqa: E402
from tokenmill.formats.sentencepiece import (  # noqa: E402
    ModelType,
    Piece,
    PieceType,
    SentencePieceModel,
    build_charsmap,
    model_bytes,
    read_model,
    write_model,
)

WORDS = (
    "the quick brown fox jumps over a lazy dog while tokenizers learn subword vocabularies "
    "Café naïve résumé façade Ångström Straße über Zürich São Paulo jalapeño coöperate "
    "東京 日本語 テキスト です 大きい ひらがな カタカナ 中文 文本 测试 北京 欢迎 你们 "
    "😀 🎉 👍🏽 ＡＢＣ ｆｕｌｌ ｗｉｄｔｈ ① ｶﾀｶﾅ 2024 3.14 1,000,000 ﬁne ﬂow e\u0301 A\u030a"
).split()


def corpus() -> list[str]:
    rng = random.Random(7)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(400)]
    return lines + MULTILINGUAL


@functools.cache
def trained(**options: Any) -> bytes:
    """The `.model` bytes of a model trained on `corpus()` with these options (lists as tuples)."""
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()),
        model_writer=writer,
        vocab_size=800,
        hard_vocab_limit=False,
        minloglevel=2,
        **{k: list(v) if isinstance(v, tuple) else v for k, v in options.items()},
    )
    return writer.getvalue()


CONFIGS: dict[str, dict[str, Any]] = {
    "unigram": {},
    "unigram-bytes-symbols": {
        "byte_fallback": True,
        "user_defined_symbols": ("<sep>", "ｍｅｔａ"),
        "control_symbols": ("<cls>", "<mask>"),
    },
    "bpe-nfkc_cf": {"model_type": "bpe", "normalization_rule_name": "nfkc_cf"},
    "bpe-bytes-identity": {
        "model_type": "bpe",
        "byte_fallback": True,
        "normalization_rule_name": "identity",
        "user_defined_symbols": ("<sep>",),
        "control_symbols": ("<cls>",),
    },
    "unigram-raw-spaces": {"add_dummy_prefix": False, "remove_extra_whitespaces": False, "pad_id": 3},
}


@functools.cache
def processor(data: bytes) -> Any:
    return spm.SentencePieceProcessor(model_proto=data)


@functools.cache
def model_of(data: bytes) -> SentencePieceModel:
    """`read_model(data)`, shared: not to be changed."""
    return read_model(data)


@functools.cache
def rules_of(blob: bytes) -> dict[str, str]:
    return charsmap_rules(blob)


def reference(text: str | bytes, model: SentencePieceModel, rules: dict[str, str] | None = None) -> str:
    spec = model.normalizer_spec
    return normalize_reference(
        text,
        rules_of(spec.precompiled_charsmap) if rules is None else rules,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        treat_whitespace_as_suffix=model.trainer_spec.treat_whitespace_as_suffix,
        user_defined_symbols=[p.piece for p in model.pieces if p.type == PieceType.USER_DEFINED],
    )


# Text that exercises the normalizer: whitespace runs and kinds, fullwidth and compatibility
# forms, combining marks, Hangul jamo (composed by nmt_nfkc's multi-character rules), a NUL,
# the ▁ sign itself, user-defined symbols, and any other character.
TRICKY = [" ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u200b", "\u2581", "\x00", "Ａ", "ｂ", "ｶ", "ﾞ"]
TRICKY += ["e\u0301", "\u0301", "ﬁ", "①", "㍿", "Ⅻ", "😀", "👍🏽", "東京", "ß", "İ", "Σ", "ᄀ", "ᅡ", "ᆨ", "\ufffd"]
TRICKY += ["<sep>", "ｍｅｔａ", "x", "7", "a"]
any_character = st.characters(exclude_categories=("Cs",))
texts = st.lists(st.one_of(st.sampled_from(TRICKY), any_character), max_size=16).map("".join)


# --- The protobuf reader and writer.


@pytest.mark.parametrize("name", CONFIGS)
def test_read_then_write_is_byte_identical(name: str, tmp_path: Path) -> None:
    data = trained(**CONFIGS[name])
    model = read_model(data)
    assert model_bytes(model) == data
    path = tmp_path / "spm.model"
    write_model(path, model)
    assert path.read_bytes() == data
    assert read_model(path) == model
    assert [p.name for p in tmp_path.iterdir()] == ["spm.model"]  # no temporary file left behind


@pytest.mark.parametrize("name", CONFIGS)
def test_pieces_are_what_sentencepiece_reports(name: str) -> None:
    data = trained(**CONFIGS[name])
    model, sp = read_model(data), processor(data)
    assert len(model.pieces) == sp.get_piece_size()
    for i, p in enumerate(model.pieces):
        assert p.piece == sp.id_to_piece(i)
        assert p.score == sp.get_score(i)
        assert (p.type == PieceType.CONTROL) == sp.is_control(i)
        assert (p.type == PieceType.UNKNOWN) == sp.is_unknown(i)
        assert (p.type == PieceType.BYTE) == sp.is_byte(i)
        assert (p.type == PieceType.UNUSED) == sp.is_unused(i)
    options = CONFIGS[name]
    user_defined = [p.piece for p in model.pieces if p.type == PieceType.USER_DEFINED]
    assert user_defined == list(options.get("user_defined_symbols", ()))
    controls = [p.piece for p in model.pieces if p.type == PieceType.CONTROL]
    pad = ["<pad>"] if "pad_id" in options else []
    assert sorted(controls) == sorted(["<s>", "</s>", *pad, *options.get("control_symbols", ())])
    assert sum(p.type == PieceType.BYTE for p in model.pieces) == (256 if options.get("byte_fallback") else 0)


@pytest.mark.parametrize("name", CONFIGS)
def test_specs_are_what_sentencepiece_uses(name: str) -> None:
    data, options = trained(**CONFIGS[name]), CONFIGS[name]
    model, sp = read_model(data), processor(data)
    trainer, normalizer = model.trainer_spec, model.normalizer_spec
    assert trainer.model_type == (ModelType.BPE if options.get("model_type") == "bpe" else ModelType.UNIGRAM)
    # The size asked for; unigram's trainer, not held to it (hard_vocab_limit=False), records the size reached.
    assert trainer.vocab_size == (800 if trainer.model_type == ModelType.BPE else len(model.pieces))
    assert trainer.byte_fallback == options.get("byte_fallback", False)
    assert trainer.user_defined_symbols == list(options.get("user_defined_symbols", ()))
    assert trainer.control_symbols == list(options.get("control_symbols", ()))
    assert (trainer.unk_id, trainer.bos_id, trainer.eos_id, trainer.pad_id) == (
        sp.unk_id(),
        sp.bos_id(),
        sp.eos_id(),
        sp.pad_id(),
    )
    assert trainer.unk_surface == " \u2047 "
    assert normalizer.name == options.get("normalization_rule_name", "nmt_nfkc")
    assert normalizer.add_dummy_prefix == options.get("add_dummy_prefix", True)
    assert normalizer.remove_extra_whitespaces == options.get("remove_extra_whitespaces", True)
    assert normalizer.escape_whitespaces


def test_absent_fields_read_as_their_proto2_defaults() -> None:
    data = b"\x0a\x09\x0a\x05<unk>\x18\x02"  # one piece, "<unk>" of type UNKNOWN, and nothing else
    model = read_model(data)
    assert model.pieces == [Piece("<unk>", 0.0, PieceType.UNKNOWN)]
    trainer, normalizer = model.trainer_spec, model.normalizer_spec
    assert trainer.model_type == ModelType.UNIGRAM and trainer.vocab_size == 8000
    assert (trainer.unk_id, trainer.bos_id, trainer.eos_id, trainer.pad_id) == (0, 1, 2, -1)
    assert [trainer.unk_piece, trainer.bos_piece, trainer.eos_piece, trainer.pad_piece] == [
        "<unk>",
        "<s>",
        "</s>",
        "<pad>",
    ]
    assert trainer.unk_surface == " \u2047 " and trainer.character_coverage == 0.9995
    assert trainer.max_sentencepiece_length == 16 and trainer.split_by_whitespace and not trainer.split_digits
    assert not trainer.byte_fallback and not trainer.treat_whitespace_as_suffix
    assert normalizer.add_dummy_prefix and normalizer.remove_extra_whitespaces and normalizer.escape_whitespaces
    assert normalizer.precompiled_charsmap == b"" and normalizer.name == ""
    assert model_bytes(model) == data  # defaults that were absent stay absent


def test_a_model_built_here_loads_in_sentencepiece(tmp_path: Path) -> None:
    pieces = [Piece("<unk>", 0.0, PieceType.UNKNOWN), Piece("<s>", 0.0, PieceType.CONTROL)]
    scores = {"\u2581": -1, "a": -2, "b": -2, "c": -2, "ab": -1, "\u2581abc": -1}
    pieces += [Piece(p, score) for p, score in scores.items()]
    model = SentencePieceModel(pieces=pieces)
    model.trainer_spec.eos_id = -1
    model.normalizer_spec.precompiled_charsmap = build_charsmap({"Ａ": "a", "Ｂ": "b"})
    write_model(tmp_path / "small.model", model)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "small.model"))
    assert sp.encode("ＡＢc", out_type=str) == ["\u2581abc"]
    assert sp.encode("  ab   c", out_type=str) == ["\u2581", "ab", "\u2581", "c"]
    assert sp.bos_id() == 1 and sp.eos_id() == -1


def test_unknown_fields_are_kept_where_they_were() -> None:
    data = trained()
    extension = b"\xe0\x12\x05"  # field 300, varint 5: in ModelProto's extension range
    model = read_model(data + extension)
    assert model.unknown == [(300, extension)]
    assert model_bytes(model) == data + extension
    model.trainer_spec.unknown.append((250, b"\xd2\x0f\x02hi"))  # field 250, a string
    model.pieces[5].unknown.append((200, b"\xc0\x0c\x01"))
    again = read_model(model_bytes(model))
    assert again.trainer_spec.unknown == [(250, b"\xd2\x0f\x02hi")]
    assert again.pieces[5].unknown == [(200, b"\xc0\x0c\x01")]
    assert processor(model_bytes(again)).encode("the fox") == processor(data).encode("the fox")


def test_a_field_set_to_its_default_stays_explicit() -> None:
    model = read_model(trained(model_type="bpe"))
    assert "model_type" in model.trainer_spec.explicit
    model.trainer_spec.vocab_size = 8000  # the default, but it was in the file: still written
    assert read_model(model_bytes(model)).trainer_spec.explicit >= {"vocab_size", "model_type"}


# --- Damaged and foreign files.


def test_a_missing_file_is_a_corpus_error(tmp_path: Path) -> None:
    with pytest.raises(_core.CorpusError, match="no such file"):
        read_model(tmp_path / "nope.model")
    with pytest.raises(_core.CorpusError, match="directory"):
        read_model(tmp_path)


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"", "no pieces"),
        (b"\x12\x02\x20\x05", "no pieces"),  # a trainer_spec only
        (b"\x0a\xff", "truncated varint at byte offset 1"),
        (b"\x0a\x05\x0a\x01a", "length 5 runs past the end at byte offset 0"),
        (b"\x0d\x00\x00\x00\x00", "ModelProto.pieces has wire type 5"),
        (b"\x0a\x04\x0a\x02\xff\xfe", "ModelProto.pieces\\[0\\].piece is not UTF-8 at byte offset 4"),
        (b"\x0a\x05\x0a\x01a\x18\x09", "pieces\\[0\\].type has the unknown value 9"),
        (b"\x0a\x02\x18\x01", "piece 0 is empty"),
        (b"\x0a\x03\x0a\x01a\x1b", "wire type 3"),
        (b"\x08" + b"\xff" * 11, "varint longer than 10 bytes"),
        (b"\x00\x01", "field number 0"),
    ],
)
def test_malformed_bytes_are_format_errors(data: bytes, what: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.model"
    path.write_bytes(data)
    with pytest.raises(_core.FormatError, match=f"^{re.escape(str(path))}: not a SentencePiece model: .*{what}"):
        read_model(path)


def test_foreign_and_damaged_files_are_format_errors(tmp_path: Path) -> None:
    data = trained()
    json_file = tmp_path / "tokenizer.json"
    json_file.write_text(json.dumps({"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}))
    with pytest.raises(_core.FormatError, match=f"^{re.escape(str(json_file))}: not a SentencePiece model"):
        read_model(json_file)
    rng = random.Random(1)
    for _ in range(20):
        with pytest.raises(_core.FormatError):
            read_model(bytes(rng.randrange(256) for _ in range(500)))
    for cut in (1, 3, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(_core.FormatError, match="past the end|truncated"):
            read_model(data[:cut])


# --- The precompiled character map.


def test_nmt_nfkc_rules() -> None:
    rules = rules_of(read_model(trained()).normalizer_spec.precompiled_charsmap)
    assert 1_000 < len(rules) < 1_000_000
    assert rules["Ａ"] == "A" and rules["ﬁ"] == "fi" and rules["①"] == "1" and rules["\u3000"] == " "
    assert "a" not in rules  # characters that normalize to themselves need no rule
    folded = rules_of(read_model(trained(**CONFIGS["bpe-nfkc_cf"])).normalizer_spec.precompiled_charsmap)
    assert folded["A"] == "a" and folded["Ａ"] == "a"
    assert read_model(trained(**CONFIGS["bpe-bytes-identity"])).normalizer_spec.precompiled_charsmap == b""
    assert charsmap_rules(b"") == {} and build_charsmap({}) == b""


def with_charsmap(data: bytes, blob: bytes, **flags: bool) -> bytes:
    model = read_model(data)
    model.normalizer_spec.precompiled_charsmap = blob
    for name, value in flags.items():
        if name == "treat_whitespace_as_suffix":
            model.trainer_spec.treat_whitespace_as_suffix = value
        else:
            setattr(model.normalizer_spec, name, value)
    return model_bytes(model)


@functools.cache
def rebuilt_nmt_nfkc() -> tuple[Any, Any]:
    """sentencepiece's own nmt_nfkc model, and the same model with the map rebuilt here."""
    data = trained()
    rules = rules_of(read_model(data).normalizer_spec.precompiled_charsmap)
    return processor(data), processor(with_charsmap(data, build_charsmap(rules)))


def test_a_rebuilt_nmt_nfkc_map_normalizes_the_same() -> None:
    original, rebuilt = rebuilt_nmt_nfkc()
    for line in corpus():
        assert rebuilt.normalize(line) == original.normalize(line)


@settings(max_examples=100, deadline=None)
@given(texts)
def test_a_rebuilt_nmt_nfkc_map_normalizes_the_same_on_any_text(text: str) -> None:
    original, rebuilt = rebuilt_nmt_nfkc()
    assert rebuilt.normalize(text) == original.normalize(text)


CUSTOM_RULES = {
    "a": "b",
    "ab": "X",
    "abc": "",
    "Ａ": "  A  ",
    "x": " ",
    "é": "e\u0301",
    "東京": "Tokyo",
    "\t": "<tab>",
    "𝔸": "A",
    "y": " y",
}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([*CUSTOM_RULES, " ", "  ", "b", "c", "東", "\u2581", "é"]), max_size=14).map("".join),
    st.booleans(),
    st.booleans(),
)
def test_custom_rules_load_in_sentencepiece(text: str, dummy_prefix: bool, extra_whitespace: bool) -> None:
    data = custom_model(dummy_prefix, extra_whitespace)
    assert rules_of(model_of(data).normalizer_spec.precompiled_charsmap) == CUSTOM_RULES
    assert processor(data).normalize(text) == reference(text, model_of(data), CUSTOM_RULES)


@functools.cache
def custom_model(dummy_prefix: bool, extra_whitespace: bool) -> bytes:
    flags = {"add_dummy_prefix": dummy_prefix, "remove_extra_whitespaces": extra_whitespace}
    return with_charsmap(trained(), build_charsmap(CUSTOM_RULES), **flags)


def test_bad_maps_and_rules_are_refused() -> None:
    for blob in (b"\x00", b"\x04\x00\x00\x00", b"\x08\x00\x00\x00\x00\x00\x00\x00", b"\x03\x00\x00\x00abcd"):
        with pytest.raises(_core.FormatError, match="precompiled_charsmap"):
            charsmap_rules(blob)
    bad_string = build_charsmap({"a": "b"})[:-1] + b"!"  # the last string loses its NUL
    with pytest.raises(_core.FormatError, match="NUL-terminated"):
        charsmap_rules(bad_string)
    # The root's base is 0x60; byte "a" leads to unit 1, whose base is 0x60 again.
    loop = struct.pack("<4I", 12, 0x60 << 10, 0x61 << 10 | 0x61, 0) + b"x\0"
    with pytest.raises(_core.FormatError, match="loops"):
        charsmap_rules(loop)
    for rules in ({"": "x"}, {"a\0": "x"}, {"a": "x\0"}, {"a" * n: "x" for n in range(1, 40)}):
        with pytest.raises(_core.ConfigError):
            build_charsmap(rules)


# --- The reference normalizer against sentencepiece's.


NORMALIZERS = [
    (rule, dummy, extra)
    for rule in ("nmt_nfkc", "nfkc_cf", "identity")
    for dummy in (True, False)
    for extra in (True, False)
]


@pytest.mark.parametrize(("rule", "dummy_prefix", "extra_whitespace"), NORMALIZERS)
@settings(max_examples=30, deadline=None)
@given(text=texts)
def test_reference_normalizer_matches_sentencepiece(
    rule: str, dummy_prefix: bool, extra_whitespace: bool, text: str
) -> None:
    data = trained(
        normalization_rule_name=rule, add_dummy_prefix=dummy_prefix, remove_extra_whitespaces=extra_whitespace
    )
    assert reference(text, model_of(data)) == processor(data).normalize(text)


@pytest.mark.parametrize("name", CONFIGS)
def test_reference_normalizer_matches_sentencepiece_on_the_corpus(name: str) -> None:
    data = trained(**CONFIGS[name])
    model, sp = read_model(data), processor(data)
    for line in [*corpus()[:50], *MULTILINGUAL, " ", "\u2581", "a \u2581", "<sep> ｍｅｔａ x", ""]:
        assert reference(line, model) == sp.normalize(line)


@functools.cache
def with_flag(flag: tuple[str, bool]) -> bytes:
    """The nmt_nfkc model with one flag changed (these flags are not trainer options)."""
    data = trained()
    return with_charsmap(data, model_of(data).normalizer_spec.precompiled_charsmap, **dict([flag]))


@pytest.mark.parametrize("flags", [{"escape_whitespaces": False}, {"treat_whitespace_as_suffix": True}])
@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_reference_normalizer_with_raw_spaces_or_suffix_spaces(flags: dict[str, bool], text: str) -> None:
    changed = with_flag(*flags.items())
    assert reference(text, model_of(changed)) == processor(changed).normalize(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=4), st.sampled_from([t.encode() for t in TRICKY])), max_size=10))
def test_reference_normalizer_on_invalid_utf8(chunks: list[bytes]) -> None:
    data = b"".join(chunks)
    assert reference(data, model_of(trained())).encode() == processor(trained()).normalize(data)
