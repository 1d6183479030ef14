"""WordPiece (BERT) vocabularies: `vocab.txt` (one token per line; the line number is the id)
and WordPiece `tokenizer.json` files, read by Rust (`src/io/wordpiece.rs`, which builds every
WordPiece tokenizer, trained ones included); here, what the files' components mean."""

from __future__ import annotations

import json
import os
from typing import Any

from tokenmill import _core
from tokenmill._files import input_file, write_atomically
from tokenmill.formats import huggingface as hf

BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def bert_normalizer(
    *, clean_text: bool = True, handle_chinese_chars: bool = True, strip_accents: bool | None = None, lowercase: bool
) -> str:
    """The normalizer spec of BERT's normalizer with these options (accents are stripped when
    lowercasing unless `strip_accents` says otherwise, as in BERT)."""
    steps = []
    if clean_text:
        steps.append("clean_text")
    if handle_chinese_chars:
        steps.append("cjk_spaces")
    if lowercase if strip_accents is None else strip_accents:
        steps.append("strip_marks")
    if lowercase:
        steps.append("lowercase_chars")
    return "+".join(steps) or "none"


def from_vocab_txt(path: str | os.PathLike[str], **options: Any) -> _core.CoreTokenizer:
    """A WordPiece tokenizer from BERT's `vocab.txt`, read by Rust (a blank or repeated line is a
    `FormatError` naming the line)."""
    p = input_file(path, "a vocab.txt")
    normalizer = bert_normalizer(
        clean_text=options.pop("clean_text"),
        handle_chinese_chars=options.pop("handle_chinese_chars"),
        strip_accents=options.pop("strip_accents"),
        lowercase=options.pop("lowercase"),
    )
    return _core.wordpiece_from_vocab_txt(
        p,
        special_tokens=list(options.pop("special_tokens")),
        unk_token=options.pop("unk_token"),
        prefix=options.pop("prefix"),
        max_input_chars_per_word=options.pop("max_input_chars_per_word"),
        normalizer=normalizer,
    )


def _bert_normalizer_from_hf(node: Any, where: str) -> str:
    """The normalizer spec of a WordPiece file: BERT's normalizer, or any other tokenmill runs
    (a pipeline built from components)."""
    if node is None:
        return "none"
    return "+".join(hf._normalizer_spec(node, where)) or "none"


def read_tokenizer_json(document: _core.TokenizerJson, data: dict[str, Any], where: str) -> _core.CoreTokenizer:
    """A WordPiece `tokenizer.json` (BERT normalizer and pre-tokenizer, added tokens, template,
    truncation and padding): its components read here, its vocabulary in Rust."""
    model = data["model"]
    pre = data.get("pre_tokenizer")
    if pre is None:
        pattern = "none"
    elif pre.get("type") == "BertPreTokenizer":
        pattern = "bert"
    else:
        pattern = hf.hf_splits(pre["pretokenizers"] if pre.get("type") == "Sequence" else [pre], where)
    decoder = data.get("decoder") or {}
    return document.wordpiece(
        unk_token=model.get("unk_token", "[UNK]"),
        prefix=model.get("continuing_subword_prefix", "##"),
        max_input_chars_per_word=int(model.get("max_input_chars_per_word", 100)),
        cleanup=bool(decoder.get("cleanup", True)),
        normalizer=_bert_normalizer_from_hf(data.get("normalizer"), where),
        pretokenizer=pattern,
    )


def _hf_normalizer(spec: str) -> dict[str, Any] | None:
    steps = [] if spec == "none" else spec.split("+")
    if not steps:
        return None
    known = {"clean_text", "cjk_spaces", "strip_marks", "lowercase_chars"}
    if not set(steps) <= known or steps != sorted(
        steps, key=["clean_text", "cjk_spaces", "strip_marks", "lowercase_chars"].index
    ):
        raise _core.ConfigError(f"normalizer {spec!r} has no Hugging Face WordPiece equivalent")
    return {
        "type": "BertNormalizer",
        "clean_text": "clean_text" in steps,
        "handle_chinese_chars": "cjk_spaces" in steps,
        "strip_accents": "strip_marks" in steps,
        "lowercase": "lowercase_chars" in steps,
    }


def write_tokenizer_json(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    config = json.loads(core.model_config_json())
    pre = hf.hf_pre_tokenizer(core.pattern)
    specials = dict(core.special_tokens())
    vocab = {core.token_bytes(i).decode("utf-8"): i for i in core.ordinary_ids()}
    vocab.update(specials)

    def token_of(i: int) -> str:
        return core.token_bytes(i).decode("utf-8")

    inputs = json.loads(core.hf_model_inputs_json(token_of))
    data = {
        "version": "1.0",
        "truncation": inputs["truncation"],
        "padding": inputs["padding"],
        "added_tokens": hf.added_tokens(specials, core),
        "normalizer": _hf_normalizer(core.normalizer),
        "pre_tokenizer": pre,
        "post_processor": inputs["post_processor"],
        "decoder": {
            "type": "WordPiece",
            "prefix": config["continuing_subword_prefix"],
            "cleanup": config["decoder_cleanup"],
        },
        "model": {
            "type": "WordPiece",
            "unk_token": config["unk_token"],
            "continuing_subword_prefix": config["continuing_subword_prefix"],
            "max_input_chars_per_word": config["max_input_chars_per_word"],
            "vocab": vocab,
        },
    }
    write_atomically(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def write_vocab_txt(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    """One token per line, line number = id; ids must be contiguous from 0."""
    ids = sorted([*core.ordinary_ids(), *{i for _, i in core.special_tokens()}])
    if ids != list(range(len(ids))):
        raise _core.ConfigError("vocab.txt needs ids 0, 1, 2, ... with no gaps")
    lines = [core.token_bytes(i).decode("utf-8") for i in ids]
    write_atomically(path, ("\n".join(lines) + "\n").encode("utf-8"))
