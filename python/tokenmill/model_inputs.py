"""Settings for the stage after the model (templates, truncation, padding) and the
`tokenizer(...)` call that turns texts into model inputs, with Hugging Face's names.

The settings travel to Rust as JSON in tokenmill's own shape; this module also converts
Hugging Face `tokenizer.json` `post_processor`, `truncation` and `padding` entries to that shape
and back, so a loaded file keeps feeding a model what it fed before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tokenmill import _core

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

Settings = dict[str, Any]
SpecialTokensArg = Sequence[tuple[str, int] | str] | Mapping[str, int | Sequence[int]] | None


# -- templates ---------------------------------------------------------------------------------
def _piece(text: str) -> dict[str, Any]:
    """`$A`, `$B`, `$` or `$N` (A with type id N), or a special token; `:N` sets the type id.

    >>> _piece("$B:1")
    {'type': 'sequence', 'second': True, 'type_id': 1}
    >>> _piece("[SEP]")
    {'type': 'special', 'name': '[SEP]', 'type_id': 0}
    """
    name, type_id = text, 0
    if ":" in text:
        name, _, tail = text.rpartition(":")
        if not tail.isdigit():
            raise _core.ConfigError(f"template piece {text!r}: the part after ':' must be a type id")
        type_id = int(tail)
    if name.startswith("$"):
        rest = name[1:]
        if rest in ("", "A", "a", "B", "b"):
            return {"type": "sequence", "second": rest in ("B", "b"), "type_id": type_id}
        if rest.isdigit() and ":" not in text:
            return {"type": "sequence", "second": False, "type_id": int(rest)}
        raise _core.ConfigError(f"template piece {text!r}: use $A, $B, $ or $N")
    return {"type": "special", "name": name, "type_id": type_id}


def _pieces(template: str | Sequence[str]) -> list[dict[str, Any]]:
    parts = template.split() if isinstance(template, str) else list(template)
    return [_piece(p) for p in parts]


def template(
    tok: Tokenizer, single: str | Sequence[str], pair: str | Sequence[str] | None, special_tokens: SpecialTokensArg
) -> Settings:
    """A template post-processor. Special tokens the templates name are looked up in the
    vocabulary unless `special_tokens` gives their ids (`[("[CLS]", 101)]` or
    `{"[CLS]": 101}`; several ids for one name as a list)."""
    single_pieces = _pieces(single)
    pair_pieces = _pieces(pair) if pair is not None else None
    given: dict[str, list[int]] = {}
    if isinstance(special_tokens, Mapping):
        items = list(special_tokens.items())
    else:
        items = [(t, None) if isinstance(t, str) else tuple(t) for t in (special_tokens or [])]  # type: ignore[misc]
    for name, ids in items:
        if ids is None:
            continue
        given[name] = [ids] if isinstance(ids, int) else list(ids)
    tokens = []
    for piece in single_pieces + (pair_pieces or []):
        name = piece.get("name")
        if name is None or any(t["name"] == name for t in tokens):
            continue
        ids = given.get(name)
        if ids is None:
            found = tok.token_to_id(name)
            if found is None:
                raise _core.ConfigError(f"the template names {name!r}, which is not in the vocabulary")
            ids = [found]
        tokens.append({"name": name, "ids": ids})
    if pair_pieces is None:
        # No pair form given: a pair is the single form for A followed by B (as Hugging Face
        # fills it in), which is an error to use when the template has no $A at all.
        pair_pieces = single_pieces + [{"type": "sequence", "second": True, "type_id": 1}]
    return {"type": "template", "single": single_pieces, "pair": pair_pieces, "tokens": tokens}


# -- Hugging Face tokenizer.json entries ---------------------------------------------------------
def from_hf_post_processor(entry: Mapping[str, Any] | None, where: str) -> Settings | None:
    """A `tokenizer.json` `post_processor` in tokenmill's shape (None for none)."""
    if entry is None:
        return None
    kind = entry.get("type")
    if kind == "TemplateProcessing":

        def pieces(items: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
            out = []
            for item in items:
                if "Sequence" in item:
                    s = item["Sequence"]
                    out.append({"type": "sequence", "second": s["id"] == "B", "type_id": int(s["type_id"])})
                else:
                    s = item["SpecialToken"]
                    out.append({"type": "special", "name": s["id"], "type_id": int(s["type_id"])})
            return out

        specials = entry.get("special_tokens", {})
        tokens = [{"name": name, "ids": [int(i) for i in t["ids"]]} for name, t in specials.items()]
        return {
            "type": "template",
            "single": pieces(entry["single"]),
            "pair": pieces(entry["pair"]),
            "tokens": tokens,
        }
    if kind == "BertProcessing":
        return {"type": "bert", "cls": int(entry["cls"][1]), "sep": int(entry["sep"][1])}
    if kind == "RobertaProcessing":
        return {
            "type": "roberta",
            "cls": int(entry["cls"][1]),
            "sep": int(entry["sep"][1]),
            "trim_offsets": bool(entry.get("trim_offsets", True)),
            "add_prefix_space": bool(entry.get("add_prefix_space", True)),
        }
    if kind == "ByteLevel":
        return {
            "type": "byte_level",
            "trim_offsets": bool(entry.get("trim_offsets", True)),
            "add_prefix_space": bool(entry.get("add_prefix_space", True)),
        }
    if kind == "Sequence":
        steps = [from_hf_post_processor(p, where) for p in entry.get("processors", [])]
        return {"type": "sequence", "processors": [s for s in steps if s is not None]}
    raise _core.FormatError(f"{where}: post_processor type {kind!r} is not supported")


def to_hf_post_processor(settings: Settings | None, token_of: Callable[[int], str]) -> dict[str, Any] | None:
    """tokenmill's shape back to a `tokenizer.json` `post_processor`."""
    if settings is None:
        return None
    kind = settings["type"]
    if kind == "template":

        def pieces(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            for p in items:
                if p["type"] == "sequence":
                    out.append({"Sequence": {"id": "B" if p["second"] else "A", "type_id": p["type_id"]}})
                else:
                    out.append({"SpecialToken": {"id": p["name"], "type_id": p["type_id"]}})
            return out

        return {
            "type": "TemplateProcessing",
            "single": pieces(settings["single"]),
            "pair": pieces(settings["pair"]),
            "special_tokens": {
                t["name"]: {"id": t["name"], "ids": t["ids"], "tokens": [token_of(i) for i in t["ids"]]}
                for t in settings["tokens"]
            },
        }
    if kind == "bert":
        return {
            "type": "BertProcessing",
            "sep": [token_of(settings["sep"]), settings["sep"]],
            "cls": [token_of(settings["cls"]), settings["cls"]],
        }
    if kind == "roberta":
        return {
            "type": "RobertaProcessing",
            "sep": [token_of(settings["sep"]), settings["sep"]],
            "cls": [token_of(settings["cls"]), settings["cls"]],
            "trim_offsets": settings["trim_offsets"],
            "add_prefix_space": settings["add_prefix_space"],
        }
    if kind == "byte_level":
        return {
            "type": "ByteLevel",
            "add_prefix_space": settings["add_prefix_space"],
            "trim_offsets": settings["trim_offsets"],
            "use_regex": True,
        }
    return {"type": "Sequence", "processors": [to_hf_post_processor(p, token_of) for p in settings["processors"]]}


def from_hf_truncation(entry: Mapping[str, Any] | None) -> Settings | None:
    if entry is None:
        return None
    strategy = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}
    return {
        "max_length": int(entry["max_length"]),
        "stride": int(entry.get("stride", 0)),
        "strategy": strategy[entry.get("strategy", "LongestFirst")],
        "side": str(entry.get("direction", "Right")).lower(),
    }


def to_hf_truncation(settings: Settings | None) -> dict[str, Any] | None:
    if settings is None:
        return None
    strategy = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
    return {
        "direction": settings["side"].capitalize(),
        "max_length": settings["max_length"],
        "strategy": strategy[settings["strategy"]],
        "stride": settings["stride"],
    }


def from_hf_padding(entry: Mapping[str, Any] | None) -> Settings | None:
    if entry is None:
        return None
    strategy = entry.get("strategy", "BatchLongest")
    length = int(strategy["Fixed"]) if isinstance(strategy, Mapping) else None
    return {
        "length": length,
        "multiple_of": entry.get("pad_to_multiple_of"),
        "pad_id": int(entry.get("pad_id", 0)),
        "pad_type_id": int(entry.get("pad_type_id", 0)),
        "pad_token": str(entry.get("pad_token", "[PAD]")),
        "side": str(entry.get("direction", "Right")).lower(),
    }


def to_hf_padding(settings: Settings | None) -> dict[str, Any] | None:
    if settings is None:
        return None
    return {
        "strategy": "BatchLongest" if settings["length"] is None else {"Fixed": settings["length"]},
        "direction": settings["side"].capitalize(),
        "pad_to_multiple_of": settings["multiple_of"],
        "pad_id": settings["pad_id"],
        "pad_type_id": settings["pad_type_id"],
        "pad_token": settings["pad_token"],
    }


# -- settings on a tokenizer ---------------------------------------------------------------------
def current(tok: Tokenizer) -> Settings:
    """The tokenizer's settings, read from its core once and kept until they change; a shallow
    copy: callers replace its entries, never change them in place."""
    if tok._settings is None:
        tok._settings = json.loads(tok._core.model_inputs_json())
    return dict(tok._settings)


def settings_key(settings: Settings) -> tuple[object, ...]:
    """What tells a call's truncation and padding apart (both flat dicts of plain values)."""
    return tuple(None if settings[k] is None else tuple(sorted(settings[k].items())) for k in ("truncation", "padding"))


def replaced(tok: Tokenizer, **changes: Any) -> _core.CoreTokenizer:
    """The tokenizer's core with some settings replaced (checked in Rust)."""
    settings = current(tok)
    settings.update(changes)
    return tok._core.with_model_inputs_json(json.dumps(settings))


def _positive(name: str, value: object, *, zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if zero else 1):
        raise _core.ConfigError(f"{name} must be a {'non-negative' if zero else 'positive'} int, got {value!r}")
    return value


def truncation_settings(max_length: object, stride: object, strategy: object, direction: object) -> Settings:
    if strategy not in ("longest_first", "only_first", "only_second"):
        raise _core.ConfigError(f"strategy must be longest_first, only_first or only_second, got {strategy!r}")
    if direction not in ("left", "right"):
        raise _core.ConfigError(f"direction must be 'left' or 'right', got {direction!r}")
    return {
        "max_length": _positive("max_length", max_length, zero=True),
        "stride": _positive("stride", stride, zero=True),
        "strategy": strategy,
        "side": direction,
    }


def padding_settings(
    tok: Tokenizer,
    length: object,
    pad_to_multiple_of: object,
    pad_id: object,
    pad_token: object,
    pad_type_id: object,
    direction: object,
) -> Settings:
    if direction not in ("left", "right"):
        raise _core.ConfigError(f"direction must be 'left' or 'right', got {direction!r}")
    if pad_id is None:
        if not isinstance(pad_token, str):
            raise _core.ConfigError("give pad_id or pad_token")
        pad_id = tok.token_to_id(pad_token)
        if pad_id is None:
            raise _core.ConfigError(f"pad_token {pad_token!r} is not in the vocabulary; give pad_id")
    pad_id = _positive("pad_id", pad_id, zero=True)
    if pad_token is None:
        pad_token = tok.id_to_token(pad_id)
    return {
        "length": None if length is None else _positive("length", length),
        "multiple_of": None if pad_to_multiple_of is None else _positive("pad_to_multiple_of", pad_to_multiple_of),
        "pad_id": pad_id,
        "pad_type_id": _positive("pad_type_id", pad_type_id, zero=True),
        "pad_token": str(pad_token),
        "side": direction,
    }


# -- tokenizer(...) --------------------------------------------------------------------------------
_PADDING = {False: None, "do_not_pad": None, True: "longest", "longest": "longest", "max_length": "max_length"}
_TRUNCATION = {
    False: None,
    "do_not_truncate": None,
    True: "longest_first",
    "longest_first": "longest_first",
    "only_first": "only_first",
    "only_second": "only_second",
}


def call_settings(
    tok: Tokenizer,
    *,
    padding: object,
    truncation: object,
    max_length: object,
    stride: object,
    pad_to_multiple_of: object,
    padding_side: object,
    truncation_side: object,
) -> Settings:
    """The model-input settings one `tokenizer(...)` call asks for, as transformers reads its
    arguments: they replace the tokenizer's own truncation and padding for that call."""
    settings = current(tok)
    if padding not in _PADDING or truncation not in (None, *_TRUNCATION):
        bad = "padding" if padding not in _PADDING else "truncation"
        raise _core.ConfigError(f"{bad} {padding if bad == 'padding' else truncation!r} is not a valid choice")
    if truncation is None:
        # As transformers: max_length alone (no padding asked for) means truncate to it.
        truncation = "longest_first" if max_length is not None and padding is False else False
    strategy = _TRUNCATION[truncation]  # type: ignore[index]
    if strategy is None:
        settings["truncation"] = None
    else:
        if max_length is None:
            raise _core.ConfigError("truncation needs max_length")
        settings["truncation"] = truncation_settings(max_length, stride, strategy, truncation_side or "right")
    pad = _PADDING[padding]  # type: ignore[index]
    if pad is None:
        settings["padding"] = None
    else:
        base = settings.get("padding") or {}
        if pad == "max_length" and max_length is None:
            raise _core.ConfigError("padding='max_length' needs max_length")
        pad_id = base.get("pad_id")
        pad_token = base.get("pad_token")
        if pad_id is None:
            candidates = ("<pad>", "[PAD]", "<|pad|>", "<|endoftext|>")
            pad_token = next((t for t in candidates if tok.token_to_id(t) is not None), None)
            if pad_token is None:
                raise _core.ConfigError("this tokenizer has no padding token: call enable_padding(pad_id=...) first")
        settings["padding"] = padding_settings(
            tok,
            max_length if pad == "max_length" else None,
            pad_to_multiple_of,
            pad_id,
            pad_token,
            base.get("pad_type_id", 0),
            padding_side or base.get("side", "right"),
        )
    return settings


def _uses_type_ids(processor: Settings | None) -> bool:
    if processor is None:
        return False
    if processor["type"] == "bert":
        return True
    if processor["type"] == "template":
        return any(p["type_id"] != 0 for p in processor["pair"])
    if processor["type"] == "sequence":
        return any(_uses_type_ids(p) for p in processor["processors"])
    return False


def call(
    tok: Tokenizer,
    text: str | Sequence[str],
    text_pair: str | Sequence[str] | None,
    *,
    add_special_tokens: bool,
    settings: Settings,
    return_tensors: str | None,
    return_token_type_ids: bool | None,
    return_attention_mask: bool | None,
    return_overflowing_tokens: bool,
    return_special_tokens_mask: bool,
    return_offsets_mapping: bool,
    return_length: bool,
    num_threads: int | None,
) -> dict[str, Any]:
    batched = not isinstance(text, str)
    texts = [text] if isinstance(text, str) else list(text)
    pairs: list[str] | None = None
    if text_pair is not None:
        pairs = [text_pair] if isinstance(text_pair, str) else list(text_pair)
    if not all(isinstance(t, str) for t in texts + (pairs or [])):
        raise _core.ConfigError("texts must be strings (or lists of strings for a batch)")
    core = tok._core_for(settings)
    if return_tensors not in (None, "np"):
        raise _core.ConfigError(f"return_tensors {return_tensors!r} is not supported; use 'np' or None")
    if return_token_type_ids is None:
        # As transformers' tokenizers for such models: type ids when the template gives the
        # second input its own (BERT-style), not for single-type models (GPT, Llama).
        return_token_type_ids = _uses_type_ids(settings.get("post_processor"))
    wanted = {
        "token_type_ids": bool(return_token_type_ids),
        "attention_mask": return_attention_mask is not False,
    }
    if return_tensors == "np":
        import numpy as np

        buffers = core.encode_batch_arrays(
            texts,
            pairs,
            add_special_tokens,
            num_threads,
            wide=True,
            offsets=return_offsets_mapping,
            overflow=return_overflowing_tokens,
            special_tokens_mask=return_special_tokens_mask,
        )
        out: dict[str, Any] = {}
        for name, (raw, rows, cols) in buffers.items():
            if wanted.get(name, True):
                array = np.frombuffer(raw, dtype="<i8").reshape(rows, cols)
                out[name] = array.reshape(rows, cols // 2, 2) if name == "offset_mapping" else array
        if return_length:
            # transformers' `length` is each row's length after padding.
            rows_, cols_ = out["input_ids"].shape
            out["length"] = np.full(rows_, cols_, dtype="<i8")
        if "overflow_to_sample_mapping" in out:
            out["overflow_to_sample_mapping"] = out["overflow_to_sample_mapping"].reshape(-1)
        return out
    encodings = core.encode_batch_for_model(texts, pairs, add_special_tokens, num_threads)
    rows, samples = [], []
    for i, e in enumerate(encodings):
        rows.append(e)
        samples.append(i)
        if return_overflowing_tokens:
            rows.extend(e.overflowing)
            samples.extend([i] * len(e.overflowing))
    out = {"input_ids": [e.ids for e in rows]}
    if wanted["token_type_ids"]:
        out["token_type_ids"] = [e.type_ids for e in rows]
    if wanted["attention_mask"]:
        out["attention_mask"] = [e.attention_mask for e in rows]
    if return_special_tokens_mask:
        out["special_tokens_mask"] = [e.special_tokens_mask for e in rows]
    if return_offsets_mapping:
        out["offset_mapping"] = [e.offsets for e in rows]
    if return_length:
        out["length"] = [len(e) for e in rows]
    if return_overflowing_tokens:
        out["overflow_to_sample_mapping"] = samples
    if not batched and len(rows) == 1:
        # One text gives unbatched lists, as in transformers (whose `length` stays a list).
        out = {k: v if k == "length" else v[0] for k, v in out.items()}
    return out
