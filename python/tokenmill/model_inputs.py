"""Settings for the stage after the model (templates, truncation, padding) and the
`tokenizer(...)` call that turns texts into model inputs, with Hugging Face's names.

Truncation and padding are typed objects made in Rust (`_core.Truncation`, `_core.Padding`); a
`tokenizer.json`'s own `post_processor`, `truncation` and `padding` sections are read and written
in Rust (`src/io/huggingface_inputs.rs`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tokenmill import _checks, _core

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


# -- settings on a tokenizer ---------------------------------------------------------------------
CallSettings = tuple["_core.Truncation | None", "_core.Padding | None"]


def own_settings(tok: Tokenizer) -> CallSettings:
    """The tokenizer's truncation and padding, read from its core once and kept until they
    change (typed objects, frozen and hashable: a call's settings key its cache by them)."""
    if tok._settings is None:
        tok._settings = (tok._core.truncation, tok._core.padding)
    return tok._settings


def padding_settings(
    tok: Tokenizer,
    length: int | None,
    pad_to_multiple_of: int | None,
    pad_id: int | None,
    pad_token: str | None,
    pad_type_id: int,
    direction: str,
) -> _core.Padding:
    """Padding settings; the padding token is named by id or by text (looked up here)."""
    if pad_id is None:
        if not isinstance(pad_token, str):
            raise _core.ConfigError("give pad_id or pad_token")
        pad_id = tok.token_to_id(pad_token)
        if pad_id is None:
            raise _core.ConfigError(f"pad_token {pad_token!r} is not in the vocabulary; give pad_id")
    if pad_token is None:
        if isinstance(pad_id, bool) or not isinstance(pad_id, int) or not 0 <= pad_id < tok.n_vocab:
            raise _core.ConfigError(f"pad_id must be a token id, got {pad_id!r}")
        pad_token = tok.id_to_token(pad_id)
    return _core.Padding(
        pad_id,
        str(pad_token),
        length=length,
        pad_to_multiple_of=pad_to_multiple_of,
        pad_type_id=pad_type_id,
        direction=direction,
    )


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
) -> CallSettings:
    """The truncation and padding one `tokenizer(...)` call asks for, as transformers reads its
    arguments: they replace the tokenizer's own for that call."""
    if padding not in _PADDING or truncation not in (None, *_TRUNCATION):
        bad = "padding" if padding not in _PADDING else "truncation"
        raise _core.ConfigError(f"{bad} {padding if bad == 'padding' else truncation!r} is not a valid choice")
    if truncation is None:
        # As transformers: max_length alone (no padding asked for) means truncate to it.
        truncation = "longest_first" if max_length is not None and padding is False else False
    strategy = _TRUNCATION[truncation]  # type: ignore[index]
    pad = _PADDING[padding]  # type: ignore[index]
    if max_length is None and (strategy is not None or pad == "max_length"):
        # As transformers: the model's own limit, from its tokenizer_config.json.
        max_length = tok._chat.get("model_max_length")
    cut = None
    if strategy is not None:
        if max_length is None:
            raise _core.ConfigError(
                "truncation needs max_length (this tokenizer has no model_max_length from a tokenizer_config.json)"
            )
        cut = _core.Truncation(max_length, stride=stride, strategy=strategy, direction=truncation_side or "right")
    if pad is None:
        return cut, None
    if pad == "max_length" and max_length is None:
        raise _core.ConfigError(
            "padding='max_length' needs max_length (this tokenizer has no model_max_length from a "
            "tokenizer_config.json)"
        )
    base = own_settings(tok)[1]
    pad_id = None if base is None else base.pad_id
    pad_token = None if base is None else base.pad_token
    if pad_id is None:
        candidates = ("<pad>", "[PAD]", "<|pad|>", "<|endoftext|>")
        pad_token = next((t for t in candidates if tok.token_to_id(t) is not None), None)
        if pad_token is None:
            raise _core.ConfigError("this tokenizer has no padding token: call enable_padding(pad_id=...) first")
    return cut, padding_settings(
        tok,
        max_length if pad == "max_length" else None,  # type: ignore[arg-type]
        pad_to_multiple_of,  # type: ignore[arg-type]
        pad_id,
        pad_token,
        0 if base is None else base.pad_type_id,
        padding_side or ("right" if base is None else base.direction),  # type: ignore[arg-type]
    )


def call(
    tok: Tokenizer,
    text: str | Sequence[str],
    text_pair: str | Sequence[str] | None,
    *,
    add_special_tokens: bool,
    settings: CallSettings,
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
        return_token_type_ids = core.pair_type_ids
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


class ModelInputMethods:
    """The model-input side of `Tokenizer`: templates, truncation, padding, offsets, and
    transformers' `tokenizer(...)` call."""

    __slots__ = ()
    _core: _core.CoreTokenizer
    _settings: CallSettings | None
    _call_cores: dict[CallSettings, _core.CoreTokenizer]

    def encode_for_model(
        self, text: str, pair: str | None = None, *, add_special_tokens: bool = True
    ) -> _core.Encoding:
        """Encodes one text (or a pair) into model inputs with this tokenizer's settings: its
        template's special tokens and type ids, truncation (with overflowing windows) and
        padding. Offsets are character offsets into the original text.

        >>> enc = bert.encode_for_model("Hello world")   # bert-base-uncased: [CLS] $A [SEP]
        >>> enc.tokens
        ['[CLS]', 'hello', 'world', '[SEP]']
        >>> enc.ids, enc.offsets, enc.attention_mask
        ([101, 7592, 2088, 102], [(0, 0), (0, 5), (6, 11), (0, 0)], [1, 1, 1, 1])
        """
        text, pair = _checks.input_text(text), None if pair is None else _checks.input_text(pair)
        return self._core.encode_for_model(text, pair, add_special_tokens)

    def encode_batch_for_model(
        self,
        texts: Sequence[str],
        pairs: Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        num_threads: int | None = None,
    ) -> list[_core.Encoding]:
        """`encode_for_model` over a batch on Rust threads; padding to the longest covers the batch."""
        texts = [_checks.input_text(t) for t in texts]
        pair_list = None if pairs is None else [_checks.input_text(p) for p in pairs]
        return self._core.encode_batch_for_model(texts, pair_list, add_special_tokens, _checks.threads(num_threads))

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        stride: int = 0,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        truncation_side: str | None = None,
        return_tensors: str | None = None,
        return_token_type_ids: bool | None = None,
        return_attention_mask: bool | None = None,
        return_overflowing_tokens: bool = False,
        return_special_tokens_mask: bool = False,
        return_offsets_mapping: bool = False,
        return_length: bool = False,
        num_threads: int | None = None,
    ) -> dict[str, Any]:
        """Model inputs for a text, a pair, or a batch, with transformers' argument names and
        output keys (`input_ids`, `attention_mask`, `token_type_ids`, `offset_mapping`,
        `overflow_to_sample_mapping`, ...). The call's `padding`/`truncation` arguments replace
        the tokenizer's own settings for the call. ``return_tensors="np"`` builds numpy arrays
        in Rust, with no Python object per token.

        >>> inputs = bert(["a text", "another"], padding=True, truncation=True, max_length=512,
        ...               return_tensors="np")
        >>> inputs["input_ids"]
        array([[ 101, 1037, 3793,  102],
               [ 101, 2178,  102,    0]])
        >>> inputs["attention_mask"]
        array([[1, 1, 1, 1],
               [1, 1, 1, 0]])
        """
        settings = call_settings(
            self,
            padding=padding,
            truncation=truncation,
            max_length=max_length,
            stride=stride,
            pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side,
            truncation_side=truncation_side,
        )
        return call(
            self,
            text,
            text_pair,
            add_special_tokens=add_special_tokens,
            settings=settings,
            return_tensors=return_tensors,
            return_token_type_ids=return_token_type_ids,
            return_attention_mask=return_attention_mask,
            return_overflowing_tokens=return_overflowing_tokens,
            return_special_tokens_mask=return_special_tokens_mask,
            return_offsets_mapping=return_offsets_mapping,
            return_length=return_length,
            num_threads=_checks.threads(num_threads),
        )

    def _core_for(self, settings: CallSettings) -> _core.CoreTokenizer:
        """A core with this truncation and padding: this tokenizer's own when they are its own,
        else one made once per distinct settings and kept (a call's settings repeat; the cores
        share the vocabulary and model)."""
        own = own_settings(self)  # type: ignore[arg-type]
        if settings == own:
            return self._core
        core = self._call_cores.get(settings)
        if core is None:
            if len(self._call_cores) >= 16:
                self._call_cores.clear()
            core = self._call_cores[settings] = self._core.with_settings(*settings)
        return core

    def set_template(
        self,
        single: str | Sequence[str],
        pair: str | Sequence[str] | None = None,
        special_tokens: Any = None,
    ) -> None:
        """Sets a post-processing template, in Hugging Face's `TemplateProcessing` syntax:
        ``"[CLS] $A [SEP]"`` and ``"[CLS] $A [SEP] $B:1 [SEP]:1"`` (`:N` is the type id).
        Special tokens are looked up in the vocabulary unless `special_tokens` gives their ids.

        >>> import tokenmill
        >>> gpt = tokenmill.load("cl100k_base.tiktoken")
        >>> gpt.encode_for_model("Hello world").ids
        [9906, 1917]
        >>> gpt.set_template("<|endoftext|> $A", "<|endoftext|> $A <|endoftext|> $B:1")
        >>> gpt.encode_for_model("Hello world").ids
        [100257, 9906, 1917]
        >>> enc = gpt.encode_for_model("Hello", "world")
        >>> enc.ids, enc.type_ids
        ([100257, 9906, 100257, 14957], [0, 0, 0, 1])
        """
        self._set_post_processor(template(self, single, pair, special_tokens))  # type: ignore[arg-type]

    @property
    def post_processor(self) -> dict[str, Any] | None:
        """The post-processor in tokenmill's JSON shape (None: no template)."""
        text = self._core.post_processor_json()
        return None if text is None else json.loads(text)

    @post_processor.setter
    def post_processor(self, value: dict[str, Any] | None) -> None:
        self._set_post_processor(value)

    def enable_truncation(
        self,
        max_length: int,
        *,
        stride: int = 0,
        strategy: str = "longest_first",
        direction: str = "right",
        whole_below_template: bool = False,
    ) -> None:
        """Truncates every model input to `max_length` tokens (template tokens included); what is
        cut off comes back as overflowing windows overlapping by `stride` tokens. A `max_length`
        shorter than the template's own tokens is an error, or with `whole_below_template` leaves
        the inputs whole (Hugging Face tokenizers' behaviour)."""
        truncation = _core.Truncation(
            max_length, stride=stride, strategy=strategy, direction=direction, whole_below_template=whole_below_template
        )
        self._set_settings(truncation, own_settings(self)[1])  # type: ignore[arg-type]

    def no_truncation(self) -> None:
        self._set_settings(None, own_settings(self)[1])  # type: ignore[arg-type]

    @property
    def truncation(self) -> dict[str, Any] | None:
        truncation = self._core.truncation
        return None if truncation is None else truncation.as_dict()

    def enable_padding(
        self,
        *,
        direction: str = "right",
        pad_id: int | None = None,
        pad_type_id: int = 0,
        pad_token: str | None = None,
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        """Pads model inputs to `length`, or to the longest of a batch; `pad_id` or `pad_token`
        names the padding token."""
        settings = padding_settings(
            self,  # type: ignore[arg-type]
            length,
            pad_to_multiple_of,
            pad_id,
            pad_token,
            pad_type_id,
            direction,
        )
        self._set_settings(own_settings(self)[0], settings)  # type: ignore[arg-type]

    def no_padding(self) -> None:
        self._set_settings(own_settings(self)[0], None)  # type: ignore[arg-type]

    @property
    def padding(self) -> dict[str, Any] | None:
        padding = self._core.padding
        return None if padding is None else padding.as_dict()

    def _set_settings(self, truncation: _core.Truncation | None, padding: _core.Padding | None) -> None:
        self._replace_core(self._core.with_settings(truncation, padding))

    def _set_post_processor(self, value: Mapping[str, Any] | None) -> None:
        text = None if value is None else json.dumps(value)
        self._replace_core(self._core.with_post_processor_json(text))

    def _replace_core(self, core: _core.CoreTokenizer) -> None:
        self._core = core
        self._settings = None
        self._call_cores.clear()
