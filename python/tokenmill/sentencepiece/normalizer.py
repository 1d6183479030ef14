"""`SentencePieceNormalizer`: a model's normalizer on its own, by default without the
whitespace handling (no `▁`, no dummy prefix), as sentencepiece's class gives it.

>>> SentencePieceNormalizer(rule_name="identity").normalize("ＡＢＣ")
'ＡＢＣ'
"""

from __future__ import annotations

import os
from typing import Any

from tokenmill.formats import sentencepiece as spm_format
from tokenmill.sentencepiece.processor import SentencePieceProcessor

_RULE_NAMES = ("identity", "nfkc", "nmt_nfkc", "nfkc_cf", "nmt_nfkc_cf")


class SentencePieceNormalizer:
    """Normalizes text with a model's rules (`model_file`, `model_proto`) or named rules
    (`rule_name`); `add_dummy_prefix`, `escape_whitespaces` and `remove_extra_whitespaces` turn
    on sentencepiece's whitespace handling."""

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        model_proto: bytes | None = None,
        rule_tsv: str | None = None,
        rule_name: str | None = None,
        add_dummy_prefix: bool = False,
        escape_whitespaces: bool = False,
        remove_extra_whitespaces: bool = False,
    ) -> None:
        flags = {
            "add_dummy_prefix": add_dummy_prefix,
            "escape_whitespaces": escape_whitespaces,
            "remove_extra_whitespaces": remove_extra_whitespaces,
        }
        if model_file or model_proto:
            if model_proto is None:
                with open(os.fspath(model_file), "rb") as f:  # type: ignore[arg-type]
                    model_proto = f.read()
            model = spm_format.read_model(bytes(model_proto))
        elif rule_name is not None:
            model = _named_rules(rule_name)
        elif rule_tsv is not None:
            model = _tsv_rules(rule_tsv)
        else:
            raise RuntimeError("model_file, model_proto, rule_tsv or rule_name must be given")
        for name, value in flags.items():
            setattr(model.normalizer_spec, name, bool(value))
            model.normalizer_spec.explicit.add(name)
        self._processor = SentencePieceProcessor(model_proto=spm_format.model_bytes(model))

    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """As `SentencePieceProcessor.normalize`, with this normalizer's options."""
        return self._processor.Normalize(input, with_offsets)

    normalize = Normalize


def _tiny_model(charsmap: bytes, name: str) -> spm_format.SentencePieceModel:
    pieces = [spm_format.Piece("<unk>", 0.0, spm_format.PieceType.UNKNOWN), spm_format.Piece("\u2581", -1.0)]
    model = spm_format.SentencePieceModel(pieces=pieces)
    model.normalizer_spec.name = name
    model.normalizer_spec.precompiled_charsmap = charsmap
    model.normalizer_spec.explicit |= {"name", "precompiled_charsmap"}
    return model


def _named_rules(name: str) -> spm_format.SentencePieceModel:
    """The rules a name stands for, from Python's Unicode tables, one code point at a time:
    NFKC (with `_cf`, then case folding); the `nmt_` rules also turn other spaces into a space
    and drop control characters. sentencepiece's own maps also hold rules for sequences of code
    points; a model's map is used as it is, so only rules given by name differ."""
    if name not in _RULE_NAMES:
        raise RuntimeError(f"No precompiled charsmap is found: {name}")
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
    return _tiny_model(spm_format.build_charsmap(rules) if rules else b"", name)


def _tsv_rules(tsv: str) -> spm_format.SentencePieceModel:
    """Rules from a TSV file of `source<TAB>target` lines, code points in hex separated by spaces."""
    rules = {}
    with open(tsv, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            source, target = line.split("\t")[:2]
            rules["".join(chr(int(c, 16)) for c in source.split())] = "".join(chr(int(c, 16)) for c in target.split())
    return _tiny_model(spm_format.build_charsmap(rules), "user_defined")
