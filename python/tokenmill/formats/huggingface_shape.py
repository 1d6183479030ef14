"""The shape of a `tokenizer.json`'s components, checked before any reader looks inside: each
component an object with a string `type`, its sequences lists of components, and each field
`tokenizers` gives a type of that type — so that a hand-edited or damaged file is a
`FormatError` naming the file and the field (`pre_tokenizer.pretokenizers[1].add_prefix_space:
expected true or false, not 3`), never an `AttributeError` or a `TypeError` from deep inside a
reader.

>>> check_components({"normalizer": {"type": "Lowercase"}, "model": {"type": "BPE"}}, "t.json")
>>> check_components({"decoder": 5, "model": {}}, "t.json")
Traceback (most recent call last):
...
tokenmill.FormatError: t.json: decoder: expected an object or null, not 5
"""

from __future__ import annotations

from typing import Any

from tokenmill import _core

# The components' lists of components, by the field that holds them.
SEQUENCES = ("normalizers", "pretokenizers", "processors", "decoders")
BOOLS = {
    "add_prefix_space", "trim_offsets", "use_regex", "lowercase", "clean_text", "handle_chinese_chars", "split",
    "invert", "left", "right", "cleanup", "fuse_unk", "byte_fallback", "ignore_merges", "individual_digits",
}  # fmt: skip
OPTIONAL_BOOLS = {"strip_accents"}
STRINGS = {
    "type", "content", "prepend_scheme", "behavior", "delimiter", "pad_token", "word_delimiter_token", "prefix",
    "suffix", "precompiled_charsmap",
}  # fmt: skip
OPTIONAL_STRINGS = {"unk_token", "continuing_subword_prefix", "end_of_word_suffix"}
COUNTS = {"max_input_chars_per_word", "start", "stop", "length"}
OPTIONAL_COUNTS = {"unk_id"}
# Nesting deeper than this is no tokenizer's (and would exhaust Python's recursion).
DEEPEST = 32


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(name: str, value: Any, where: str) -> None:
    def bad(expected: str) -> _core.FormatError:
        return _core.FormatError(f"{where}: expected {expected}, not {_describe(value)}")

    if name in BOOLS and not isinstance(value, bool):
        raise bad("true or false")
    if name in OPTIONAL_BOOLS and value is not None and not isinstance(value, bool):
        raise bad("true, false or null")
    if name in STRINGS and not isinstance(value, str):
        raise bad("a string")
    if name in OPTIONAL_STRINGS and value is not None and not isinstance(value, str):
        raise bad("a string or null")
    is_count = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
    if name in COUNTS and not is_count:
        raise bad("a non-negative integer")
    if name in OPTIONAL_COUNTS and value is not None and not is_count:
        raise bad("a non-negative integer or null")


def _component(node: Any, where: str, depth: int = 0) -> None:
    if node is None:
        return
    if depth > DEEPEST:
        raise _core.FormatError(f"{where}: components nested more than {DEEPEST} deep")
    if not isinstance(node, dict):
        raise _core.FormatError(f"{where}: expected an object or null, not {_describe(node)}")
    for name, value in node.items():
        if name in SEQUENCES:
            if not isinstance(value, list):
                raise _core.FormatError(f"{where}.{name}: expected a list, not {_describe(value)}")
            for i, step in enumerate(value):
                if step is None:
                    raise _core.FormatError(f"{where}.{name}[{i}]: expected an object, not null")
                _component(step, f"{where}.{name}[{i}]", depth + 1)
        else:
            _field(name, value, f"{where}.{name}")


def check_components(sections: dict[str, Any], path: str) -> None:
    """A `FormatError` naming `path` and the field where a component or the model's options
    are not shaped as `tokenizers` writes them (the vocabulary, merges and added tokens are
    checked where they are read, in Rust)."""
    for name in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        _component(sections.get(name), f"{path}: {name}")
    model = sections.get("model")
    if not isinstance(model, dict):
        raise _core.FormatError(f"{path}: model: expected an object, not {_describe(model)}")
    for name, value in model.items():
        if name not in ("vocab", "merges"):
            _field(name, value, f"{path}: model.{name}")
