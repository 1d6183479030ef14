"""WordPiece (BERT) vocabularies: `vocab.txt` (one token per line; the line number is the id)
and WordPiece `tokenizer.json` files. Both become a tokenmill description (the JSON of a
tokenmill file), which the core turns into a tokenizer — the one way tokenizers are built."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tokenmill import _core, model_inputs
from tokenmill._files import write_atomically
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


def read_vocab_txt(path: str | os.PathLike[str]) -> list[str]:
    """The tokens of a `vocab.txt`, by id. Blank lines and repeated tokens are errors that
    name the line (a repeated token would make two ids for one spelling)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _core.CorpusError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise _core.CorpusError(f"{p}: is a directory, not a vocab.txt") from None
    except UnicodeDecodeError as e:
        raise _core.FormatError(f"{p}: not a valid vocab.txt: invalid UTF-8 at byte offset {e.start}") from None
    tokens: list[str] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        token = line.rstrip("\r")
        if not token:
            if lineno == len(text.split("\n")):  # the newline that ends the file
                continue
            raise _core.FormatError(f"{p}:{lineno}: not a valid vocab.txt: blank line")
        if token in seen:
            raise _core.FormatError(f"{p}:{lineno}: not a valid vocab.txt: {token!r} repeats line {seen[token]}")
        seen[token] = lineno
        tokens.append(token)
    if not tokens:
        raise _core.FormatError(f"{p}: not a valid vocab.txt: no tokens")
    return tokens


def description(
    vocab: Mapping[str, int],
    *,
    specials: Iterable[str],
    unk_token: str,
    prefix: str,
    max_input_chars_per_word: int,
    normalizer: str,
    cleanup: bool = True,
    settings: dict[str, Any] | None = None,
    where: str = "<vocab>",
) -> dict[str, Any]:
    """The tokenmill file description of a WordPiece tokenizer."""
    special_set = set(specials)
    if unk_token not in vocab:
        raise _core.ConfigError(f"{where}: the unknown token {unk_token!r} is not in the vocabulary")
    top = max(vocab.values())
    tokens: list[str | None] = [None] * (top + 1)
    for token, i in vocab.items():
        if token not in special_set:
            tokens[i] = base64.b64encode(token.encode("utf-8")).decode("ascii")
    return {
        "format": "tokenmill",
        "version": 2,
        "normalizer": normalizer,
        "pretokenizer": "bert",
        "special_tokens": sorted(((t, vocab[t]) for t in special_set if t in vocab), key=lambda kv: kv[1]),
        "model": {
            "type": "wordpiece",
            "tokens": tokens,
            "unk_token": unk_token,
            "continuing_subword_prefix": prefix,
            "max_input_chars_per_word": max_input_chars_per_word,
            "decoder_cleanup": cleanup,
        },
        "model_inputs": settings or {},
    }


def bert_template(vocab: Mapping[str, int]) -> dict[str, Any] | None:
    """BERT's `[CLS] $A [SEP]` / `[CLS] $A [SEP] $B:1 [SEP]:1`, when the vocabulary has both."""
    if "[CLS]" not in vocab or "[SEP]" not in vocab:
        return None
    cls, sep = {"type": "special", "name": "[CLS]", "type_id": 0}, {"type": "special", "name": "[SEP]", "type_id": 0}
    a = {"type": "sequence", "second": False, "type_id": 0}
    b = {"type": "sequence", "second": True, "type_id": 1}
    return {
        "type": "template",
        "single": [cls, a, sep],
        "pair": [cls, a, sep, b, {**sep, "type_id": 1}],
        "tokens": [{"name": "[CLS]", "ids": [vocab["[CLS]"]]}, {"name": "[SEP]", "ids": [vocab["[SEP]"]]}],
    }


def from_vocab_txt(path: str | os.PathLike[str], **options: Any) -> _core.CoreTokenizer:
    tokens = read_vocab_txt(path)
    vocab = {t: i for i, t in enumerate(tokens)}
    specials = [t for t in options.pop("special_tokens") if t in vocab]
    normalizer = bert_normalizer(
        clean_text=options.pop("clean_text"),
        handle_chinese_chars=options.pop("handle_chinese_chars"),
        strip_accents=options.pop("strip_accents"),
        lowercase=options.pop("lowercase"),
    )
    doc = description(
        vocab,
        specials=specials,
        normalizer=normalizer,
        settings={"post_processor": bert_template(vocab)},
        where=str(path),
        **options,
    )
    return _core.CoreTokenizer.from_json(json.dumps(doc))


def _bert_normalizer_from_hf(node: Any, where: str) -> str:
    if node is None:
        return "none"
    if node.get("type") != "BertNormalizer":
        raise _core.FormatError(f"{where}: normalizer {node.get('type')!r} with WordPiece is not supported")
    return bert_normalizer(
        clean_text=bool(node.get("clean_text", True)),
        handle_chinese_chars=bool(node.get("handle_chinese_chars", True)),
        strip_accents=node.get("strip_accents"),
        lowercase=bool(node.get("lowercase", True)),
    )


def read_tokenizer_json(data: dict[str, Any], where: str) -> _core.CoreTokenizer:
    """A WordPiece `tokenizer.json` (BERT normalizer and pre-tokenizer, added tokens, template,
    truncation and padding)."""
    model = data["model"]
    pre = data.get("pre_tokenizer")
    if pre is None or pre.get("type") != "BertPreTokenizer":
        kind = None if pre is None else pre.get("type")
        raise _core.FormatError(
            f"{where}: pre-tokenizer {kind!r} with WordPiece is not supported (BertPreTokenizer is)"
        )
    decoder = data.get("decoder") or {}
    vocab: dict[str, int] = {**model["vocab"]}
    added = data.get("added_tokens", [])
    for t in added:
        vocab.setdefault(t["content"], int(t["id"]))
    settings = {
        "post_processor": model_inputs.from_hf_post_processor(data.get("post_processor"), where),
        "truncation": model_inputs.from_hf_truncation(data.get("truncation")),
        "padding": model_inputs.from_hf_padding(data.get("padding")),
    }
    doc = description(
        vocab,
        specials=[t["content"] for t in added],
        unk_token=model.get("unk_token", "[UNK]"),
        prefix=model.get("continuing_subword_prefix", "##"),
        max_input_chars_per_word=int(model.get("max_input_chars_per_word", 100)),
        normalizer=_bert_normalizer_from_hf(data.get("normalizer"), where),
        cleanup=bool(decoder.get("cleanup", True)),
        settings=settings,
        where=where,
    )
    return _core.CoreTokenizer.from_json(json.dumps(doc))


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
    if core.pattern != "bert":
        raise _core.ConfigError("a WordPiece tokenizer.json needs the bert pre-tokenizer")
    specials = dict(core.special_tokens())
    vocab = {core.token_bytes(i).decode("utf-8"): i for i in core.ordinary_ids()}
    vocab.update(specials)
    settings = json.loads(core.model_inputs_json())

    def token_of(i: int) -> str:
        return core.token_bytes(i).decode("utf-8")

    data = {
        "version": "1.0",
        "truncation": model_inputs.to_hf_truncation(settings["truncation"]),
        "padding": model_inputs.to_hf_padding(settings["padding"]),
        "added_tokens": hf.added_tokens(specials),
        "normalizer": _hf_normalizer(core.normalizer),
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": model_inputs.to_hf_post_processor(settings["post_processor"], token_of),
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
