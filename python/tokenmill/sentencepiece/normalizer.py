"""`SentencePieceNormalizer`: a normalizer on its own, from a model (`model_file`,
`model_proto`), a `NormalizerSpec` (`normalizer_spec`), named rules (`rule_name`), a rule file
(`rule_tsv`) or a list of rules (`norm_map`). Its whitespace flags are its spec's unless given;
a spec built here (rules by name, file or list) has protobuf's defaults, all on.

>>> SentencePieceNormalizer(norm_map=[("foo", "bar")]).normalize("  foo  baz ")
'▁bar▁baz'
>>> SentencePieceNormalizer(rule_name="identity", add_dummy_prefix=False).normalize("ＡＢＣ")
'ＡＢＣ'
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from tokenmill.formats import sentencepiece as spm_format
from tokenmill.sentencepiece import settings
from tokenmill.sentencepiece.arguments import RefusedError
from tokenmill.sentencepiece.processor import SentencePieceProcessor

_RULE_NAMES = ("identity", "nfkc", "nmt_nfkc", "nfkc_cf", "nmt_nfkc_cf")
_FLAGS = ("add_dummy_prefix", "escape_whitespaces", "remove_extra_whitespaces")


class SentencePieceNormalizer:
    """Normalizes text with one source of rules; `add_dummy_prefix`, `escape_whitespaces` and
    `remove_extra_whitespaces`, when given, replace the spec's flags (and are written into
    `serialized_normalizer_spec`)."""

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        model_proto: bytes | None = None,
        normalizer_spec: bytes | None = None,
        rule_tsv: str | os.PathLike[str] | None = None,
        rule_name: str | None = None,
        norm_map: Iterable[tuple[str | bytes, str | bytes]] | None = None,
        add_dummy_prefix: bool | None = None,
        escape_whitespaces: bool | None = None,
        remove_extra_whitespaces: bool | None = None,
    ) -> None:
        if model_file:
            spec = spm_format.read_specs(_read(model_file), os.fspath(model_file)).normalizer_spec
        elif model_proto:
            spec = spm_format.read_specs(_serialized(model_proto), "<model proto>").normalizer_spec
        elif normalizer_spec:
            spec = _parsed_spec(_serialized(normalizer_spec))
        elif rule_tsv:
            spec = _spec(_tsv_rules(_read(rule_tsv).decode("utf-8")), "user_defined")
            spec.normalization_rule_tsv = os.fspath(rule_tsv)
            spec.explicit.add("normalization_rule_tsv")
        elif rule_name:
            spec = _spec(_named_rules(rule_name), rule_name)
        elif norm_map:
            spec = _spec(_map_rules(norm_map), None)
        else:
            raise RefusedError("no model is specified")
        given = dict(zip(_FLAGS, (add_dummy_prefix, escape_whitespaces, remove_extra_whitespaces), strict=True))
        if settings.release() == "0.2.1":
            # sentencepiece 0.2.1 turned every flag not given off.
            given = {name: bool(value) for name, value in given.items()}
        for name, value in given.items():
            if value is not None:
                setattr(spec, name, bool(value))
                spec.explicit.add(name)
        self._set(spec)

    def _set(self, spec: spm_format.NormalizerSpec) -> None:
        self._spec = spec
        # A one-piece model with this spec runs it through tokenmill's normalizer.
        model = spm_format.SentencePieceModel(pieces=[spm_format.Piece("<unk>", 0.0, spm_format.PieceType.UNKNOWN)])
        model.normalizer_spec = spec
        self._runner = SentencePieceProcessor(model_proto=spm_format.model_bytes(model))

    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """`input` (a text, bytes, or a list of them) normalized; `with_offsets` adds, for each
        normalized character (byte, for bytes), where it came from, and the length."""
        return self._runner.Normalize(input, with_offsets)

    def serialized_normalizer_spec(self) -> bytes:
        """This normalizer's `NormalizerSpec`, serialized (`normalizer_spec=` takes it back)."""
        return spm_format.normalizer_spec_bytes(self._spec)

    def serialized_model_proto(self) -> bytes:
        """A `ModelProto` holding only this normalizer's spec."""
        spec = self.serialized_normalizer_spec()
        size, length = len(spec), bytearray()
        while size >= 0x80:
            length.append(size & 0x7F | 0x80)
            size >>= 7
        return b"\x1a" + bytes(length) + bytes([size]) + spec  # field 3, length-delimited

    def Decompile(self) -> list[tuple[str, str]]:
        """The rules of the spec's character map, (source, normalized), by the source's bytes."""
        if not self._spec.precompiled_charsmap:
            raise RuntimeError("No precompiled charsmap found in model.")
        return spm_format.read_charsmap(self._spec.precompiled_charsmap)

    def __getstate__(self) -> bytes:
        return self.serialized_model_proto()

    def __setstate__(self, state: bytes) -> None:
        self._set(spm_format.read_specs(state, "<pickled normalizer>").normalizer_spec)

    normalize = Normalize
    decompile = Decompile


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        with open(os.fspath(path), "rb") as f:
            return f.read()
    except OSError as e:
        raise RuntimeError(f'NOT_FOUND: "{os.fspath(path)}": {e.strerror}') from None


def _serialized(value: Any) -> bytes:
    """Bytes, or a protobuf message's serialization."""
    if hasattr(value, "SerializeToString"):
        return bytes(value.SerializeToString())
    return bytes(value)


def _parsed_spec(data: bytes) -> spm_format.NormalizerSpec:
    try:
        return spm_format.read_normalizer_spec(data)
    except ValueError as e:
        raise RuntimeError(f"INTERNAL: the normalizer spec does not parse: {e}") from None


def _spec(rules: dict[str, str], name: str | None) -> spm_format.NormalizerSpec:
    """A new spec of `rules` under `name` (none for a list of rules, as sentencepiece)."""
    spec = spm_format.NormalizerSpec(precompiled_charsmap=spm_format.build_charsmap(rules) if rules else b"")
    spec.explicit.add("precompiled_charsmap")
    if name is not None:
        spec.name = name
        spec.explicit.add("name")
    return spec


def _named_rules(name: str) -> dict[str, str]:
    """The rules a name stands for, from Python's Unicode tables, one code point at a time:
    NFKC (with `_cf`, then case folding); the `nmt_` rules also turn other spaces into a space
    and drop control characters. sentencepiece's own maps also hold rules for sequences of code
    points; a model's map is used as it is, so only rules given by name differ."""
    if name not in _RULE_NAMES:
        raise RuntimeError(f"NOT_FOUND: No precompiled charsmap is found: {name}")
    import unicodedata

    rules: dict[str, str] = {}
    if name != "identity":
        for cp in range(0x110000):
            if 0xD800 <= cp < 0xE000:
                continue
            c = chr(cp)
            target = unicodedata.normalize("NFKC", c)
            if name.endswith("_cf"):
                target = unicodedata.normalize("NFKC", target.casefold())
            if name.startswith("nmt_"):
                if unicodedata.category(c) == "Zs" or c in "\t\n\r":
                    target = " "
                elif unicodedata.category(c) == "Cc" and c != "\0":
                    target = ""
            if target != c:
                rules[c] = target
    return rules


def named_rules_spec(name: str) -> spm_format.NormalizerSpec:
    """The spec `rule_name=name` gives (what the trainer writes for `normalization_rule_name`)."""
    return _spec(_named_rules(name), name)


def _tsv_rules(tsv: str) -> dict[str, str]:
    """Rules from a TSV file of `source<TAB>target` lines, code points in hex separated by spaces."""
    rules = {}
    for line in tsv.splitlines():
        if not line or line.startswith("#"):
            continue
        source, target = line.split("\t")[:2]
        rules["".join(chr(int(c, 16)) for c in source.split())] = "".join(chr(int(c, 16)) for c in target.split())
    return rules


def _map_rules(pairs: Iterable[tuple[str | bytes, str | bytes]]) -> dict[str, str]:
    """Rules from (source, normalized) pairs of `str` or UTF-8 `bytes`: sources non-empty,
    each once, each changed by its rule."""
    rules: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError("norm_map: each rule is a (source, normalized) pair")
        source, target = (_rule_text(x) for x in pair)
        if not source:
            raise ValueError("norm_map: a source is empty")
        if source == target:
            raise ValueError(f"norm_map: {source!r} maps to itself")
        if source in rules:
            raise ValueError(f"norm_map: {source!r} is given twice")
        rules[source] = target
    return rules


def _rule_text(value: object) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"norm_map: {value!r} is not UTF-8") from None
    if not isinstance(value, str):
        raise TypeError(f"norm_map: rules are str or bytes, not {type(value).__name__}")
    return value
