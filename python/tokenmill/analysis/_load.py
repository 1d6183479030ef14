"""Any tokenizer tokenmill can load, from one argument: what every analysis accepts.

>>> load_tokenizer("cl100k_base")   # an OpenAI encoding name
('cl100k_base', <tokenmill.Tokenizer byte-level BPE, 100261 tokens, pattern='cl100k'>)
>>> load_tokenizer("unigram=spm.model")   # a file, with a label
('unigram', <tokenmill.Tokenizer Unigram, 120 tokens, pattern='metaspace'>)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Union

from tokenmill import _core
from tokenmill.formats.files import open_any
from tokenmill.tokenizer import Tokenizer

TokenizerArg = Union[Tokenizer, str, "os.PathLike[str]"]


def load_tokenizer(spec: TokenizerArg) -> tuple[str, Tokenizer]:
    """A (label, Tokenizer) pair from a `Tokenizer`, an OpenAI encoding name (``"cl100k_base"``,
    read through `tokenmill.tiktoken`, so from tiktoken's cache or its download address), or a
    path to any file or model directory `tokenmill.load` reads.
    A string ``label=spec`` names the tokenizer in tables and plots."""
    if isinstance(spec, Tokenizer):
        return _label_of(spec), spec
    if not isinstance(spec, (str, os.PathLike)):
        raise _core.ConfigError(f"a tokenizer must be a Tokenizer, an encoding name or a file path, got {spec!r}")
    text = os.fspath(spec)
    label = None
    if isinstance(spec, str) and "=" in text and not Path(text).exists():
        label, text = text.split("=", 1)
    if not text:
        raise _core.ConfigError("the tokenizer name is empty")
    path = Path(text)
    if not path.exists():
        from tokenmill.tiktoken import list_encoding_names

        names = list_encoding_names()
        if text not in names:
            raise _core.ConfigError(
                f"{text}: no such file, and not an encoding name ({', '.join(names)}); "
                "give a tokenizer.json, a .model, a .tiktoken or a tokenmill file"
            )
        from tokenmill.tiktoken import get_encoding

        return label or text, get_encoding(text)._tokenizer
    return label or path.name, open_any(path)


def _label_of(tok: Tokenizer) -> str:
    return f"{tok.model_type}-{tok.vocab_size}"


TokenizersArg = TokenizerArg | Sequence[TokenizerArg] | Mapping[str, TokenizerArg]


def load_tokenizers(specs: TokenizersArg) -> dict[str, Tokenizer]:
    """`load_tokenizer` for each (a mapping gives the labels); labels made unique
    (``tok.json``, ``tok.json#2``)."""
    if isinstance(specs, Mapping):
        return {str(label): load_tokenizer(spec)[1] for label, spec in specs.items()} or load_tokenizers([])
    if isinstance(specs, (Tokenizer, str, os.PathLike)):
        specs = [specs]
    out: dict[str, Tokenizer] = {}
    for spec in specs:
        label, tok = load_tokenizer(spec)
        unique, n = label, 2
        while unique in out:
            unique, n = f"{label}#{n}", n + 1
        out[unique] = tok
    if not out:
        raise _core.ConfigError("give at least one tokenizer")
    return out


def load_one(spec: TokenizerArg | Mapping[str, TokenizerArg]) -> tuple[str, Tokenizer]:
    """One tokenizer, for the analyses of a single vocabulary; ``{"label": spec}`` names it."""
    if isinstance(spec, Mapping):
        if len(spec) != 1:
            raise _core.ConfigError(f"give one tokenizer here, got {len(spec)}")
        ((label, one),) = spec.items()
        return str(label), load_tokenizer(one)[1]
    return load_tokenizer(spec)
