"""`tokenmill.tokenizers.Tokenizer`: Hugging Face `tokenizers.Tokenizer`'s API over tokenmill's
core, so a pipeline switches by changing its import. `encode` returns an `Encoding` with the
template applied (Hugging Face's meaning, not tiktoken's list of ids); truncation and padding are
the tokenizer's own settings, as in `tokenizers`.

>>> from tokenmill.tokenizers import Tokenizer
>>> tok = Tokenizer.from_file("tokenizer.json")                       # doctest: +SKIP
>>> tok.encode("Hello world").ids                                      # doctest: +SKIP
[101, 7592, 2088, 102]
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tokenmill import _core
from tokenmill import tokenizer as _tokenmill
from tokenmill.tokenizers.added_token import AddedToken
from tokenmill.tokenizers.encoding import Encoding

InputSequence = str
EncodeInput = str | tuple[str, str] | list[str]


class Tokenizer:
    """A tokenizer with `tokenizers.Tokenizer`'s methods, run by tokenmill's core.

    Made from a file (`from_file`, `from_str`, `from_buffer`), or around a `tokenmill.Tokenizer`.
    """

    def __init__(self, model: _tokenmill.Tokenizer) -> None:
        if not isinstance(model, _tokenmill.Tokenizer):
            raise _core.ConfigError(
                "tokenmill.tokenizers.Tokenizer is made from a file (Tokenizer.from_file / from_str) or a "
                f"tokenmill.Tokenizer; building one from a {type(model).__name__} is not supported yet"
            )
        self._tok = model
        # The tokenizer.json it was read from, for what only the file says (the model's own
        # vocabulary, apart from added tokens): a path or the text.
        self._source: tuple[str, str] | None = None

    # -- files ------------------------------------------------------------------------------
    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> Tokenizer:
        """Reads a `tokenizer.json`.

        >>> tok = Tokenizer.from_file("tokenizer.json")   # doctest: +SKIP
        """
        made = Tokenizer(_tokenmill.Tokenizer.from_huggingface(path))
        made._source = ("path", os.fspath(path))
        return made

    @staticmethod
    def from_str(json_text: str) -> Tokenizer:
        """A tokenizer from the text of a `tokenizer.json`."""
        if not isinstance(json_text, str):
            raise _core.ConfigError(f"from_str takes the JSON text, not {type(json_text).__name__}")
        with tempfile.TemporaryDirectory(prefix="tokenmill-") as directory:
            path = Path(directory) / "tokenizer.json"
            path.write_text(json_text, encoding="utf-8")
            try:
                made = Tokenizer(_tokenmill.Tokenizer.from_huggingface(path))
            except _core.TokenmillError as e:
                # The temporary file's name means nothing to the caller.
                raise type(e)(str(e).replace(str(path), "<tokenizer.json text>")) from None
        made._source = ("text", json_text)
        return made

    @staticmethod
    def from_buffer(buffer: bytes) -> Tokenizer:
        """A tokenizer from the bytes of a `tokenizer.json`."""
        try:
            text = bytes(buffer).decode("utf-8")
        except UnicodeDecodeError as e:
            raise _core.FormatError(f"<tokenizer.json buffer>: not UTF-8 at byte {e.start}") from None
        return Tokenizer.from_str(text)

    def to_str(self, pretty: bool = False) -> str:
        """The `tokenizer.json` text of this tokenizer: the file it was read from, with the
        current truncation and padding (so every component is kept as the file wrote it), or
        tokenmill's export of it."""
        with tempfile.TemporaryDirectory(prefix="tokenmill-") as directory:
            path = Path(directory) / "tokenizer.json"
            self._tok.to_huggingface(path)
            document = json.loads(path.read_text(encoding="utf-8"))
        if self._source is not None:
            settings = {key: document.get(key) for key in ("truncation", "padding")}
            document = self._document()
            document.update(settings)
        if pretty:
            return json.dumps(document, indent=2, ensure_ascii=False)
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"))

    def save(self, path: str | os.PathLike[str], pretty: bool = True) -> None:
        """Writes this tokenizer as a `tokenizer.json` (atomically)."""
        from tokenmill._files import write_atomically

        write_atomically(Path(path), self.to_str(pretty).encode("utf-8"))

    # -- encoding ---------------------------------------------------------------------------
    def encode(
        self,
        sequence: InputSequence,
        pair: InputSequence | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        """The `Encoding` of a text (or a pair), template applied, truncated and padded as set.

        >>> tok.encode("Hello", "world").type_ids   # doctest: +SKIP
        [0, 0, 0, 1, 1]
        """
        _no_pretokenized(is_pretokenized)
        core = self._tok.encode_for_model(sequence, pair, add_special_tokens=add_special_tokens)
        return Encoding._from_core(core)

    def encode_batch(
        self, input: Sequence[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """`encode` over a batch (texts, or `(text, pair)` tuples) on all cores; padding to the
        longest pads the whole batch."""
        _no_pretokenized(is_pretokenized)
        items = list(input)
        pairs = [isinstance(item, (tuple, list)) for item in items]
        if any(pairs) and not all(pairs):
            # Mixed singles and pairs: the core takes one kind per batch; padding must still
            # cover the whole batch, so pad afterwards as tokenizers does.
            encodings = [self.encode(*_parts(item), add_special_tokens=add_special_tokens) for item in items]
            return _padded_together(encodings, self._tok.padding)
        if any(pairs):
            firsts, seconds = zip(*(_parts(item) for item in items), strict=True)
            core = self._tok.encode_batch_for_model(list(firsts), list(seconds), add_special_tokens=add_special_tokens)
        else:
            core = self._tok.encode_batch_for_model(items, add_special_tokens=add_special_tokens)
        return [Encoding._from_core(e) for e in core]

    def encode_batch_fast(
        self, input: Sequence[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """`encode_batch` (tokenizers' variant without offsets; here offsets cost nothing more)."""
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens the template adds to one text (or a pair)."""
        core = self._tok._core.with_settings(None, None)
        encoding = core.encode_for_model("", "" if is_pair else None, True)
        return sum(encoding.special_tokens_mask)

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The text of `ids` through the tokenizer's decoder."""
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = True) -> list[str]:
        """`decode` of each list of ids."""
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- vocabulary -------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        """The id of a token as the vocabulary spells it (`"Ġworld"`, `"##ing"`, `"▁the"`), or None."""
        return self._spelled().get(token) if isinstance(token, str) else None

    def id_to_token(self, id: int) -> str | None:
        """The token of an id as the vocabulary spells it, or None outside the vocabulary."""
        if not 0 <= id < 2**32:  # as tokenizers, whose ids are u32
            raise OverflowError(f"id {id} is not a 32-bit unsigned integer")
        if not 0 <= id < self._tok.n_vocab:
            return None
        if self._tok._core.token_kind(id) == "unused":
            return None
        return self._tok._core.token_string(id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """Every token as the vocabulary spells it, with its id; without `with_added_tokens`,
        the model's own vocabulary only."""
        vocab = dict(self._spelled())
        if not with_added_tokens:
            model = self._model_tokens()
            vocab = {t: i for t, i in vocab.items() if t in model}
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """How many tokens `get_vocab` gives."""
        return len(self.get_vocab(with_added_tokens))

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        """The added tokens by id, with their flags as the file gives them."""
        return {i: token for i, token in sorted(self._added().items())}

    def add_tokens(self, tokens: Sequence[str | AddedToken]) -> int:
        """Adds tokens matched in text before the model runs (a `str` is an ordinary added token,
        matched in the normalized text); returns how many were added (tokens already added
        before are not counted; their flags are updated).

        >>> tok.add_tokens(["tokenmill", AddedToken(" <row>", lstrip=True)])   # doctest: +SKIP
        2
        """
        return self._add([t if isinstance(t, AddedToken) else AddedToken(t) for t in _token_list(tokens)])

    def add_special_tokens(self, tokens: Sequence[str | AddedToken]) -> int:
        """Adds special tokens (matched in the raw text, skipped by `decode` with
        `skip_special_tokens`); returns how many were new."""
        added = []
        for t in _token_list(tokens):
            if isinstance(t, AddedToken):
                t.special = True
                added.append(t)
            else:
                added.append(AddedToken(t, special=True))
        return self._add(added)

    def _add(self, tokens: list[AddedToken]) -> int:
        """Writes the tokens into the file's added tokens, as tokenizers numbers them (a token the
        model already holds keeps its id; others follow the largest id), and reads it again."""
        document = json.loads(self.to_str())
        entries = document.setdefault("added_tokens", [])
        known = {entry["content"]: entry for entry in entries}
        vocab = self.get_vocab()
        model = self._model_tokens()
        next_id = max([*vocab.values(), -1]) + 1
        new = 0
        for token in tokens:
            if not token.content:
                continue
            entry = known.get(token.content)
            if entry is not None:
                entry.update(token.__getstate__())  # tokenizers updates the flags of a known one
                continue
            if token.content in model:
                found = vocab[token.content]
            else:
                found, next_id = next_id, next_id + 1
            new += 1  # counted as tokenizers counts: added, whether or not the model held it
            entry = {"id": found, **token.__getstate__()}
            entries.append(entry)
            known[token.content] = entry
        again = Tokenizer.from_str(json.dumps(document, ensure_ascii=False))
        self._tok, self._source = again._tok, again._source
        self.__dict__.pop("_spelled_cache", None)
        return new

    # -- truncation and padding -------------------------------------------------------------
    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> None:
        """Truncates every encoding to `max_length` tokens (the template's included); what is cut
        off comes back in `overflowing`, windows overlapping by `stride` tokens."""
        self._tok.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)

    def no_truncation(self) -> None:
        self._tok.no_truncation()

    @property
    def truncation(self) -> dict[str, Any] | None:
        """The truncation settings as tokenizers reports them, or None."""
        settings = self._tok.truncation
        if settings is None:
            return None
        return {
            "max_length": settings["max_length"],
            "stride": settings["stride"],
            "strategy": settings["strategy"],
            "direction": settings["side"],
        }

    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        """Pads every encoding to `length`, or a batch to its longest (then to a multiple of
        `pad_to_multiple_of`), with `pad_id` (`pad_token` is the text reported for it)."""
        self._tok.enable_padding(
            direction=direction,
            pad_id=pad_id,
            pad_type_id=pad_type_id,
            pad_token=pad_token,
            length=length,
            pad_to_multiple_of=pad_to_multiple_of,
        )

    def no_padding(self) -> None:
        self._tok.no_padding()

    @property
    def padding(self) -> dict[str, Any] | None:
        """The padding settings as tokenizers reports them, or None."""
        settings = self._tok.padding
        if settings is None:
            return None
        return {
            "length": settings["length"],
            "pad_to_multiple_of": settings["multiple_of"],
            "pad_id": settings["pad_id"],
            "pad_token": settings["pad_token"],
            "pad_type_id": settings["pad_type_id"],
            "direction": settings["side"],
        }

    # -- what only the file says ------------------------------------------------------------
    def _spelled(self) -> dict[str, int]:
        cached = self.__dict__.get("_spelled_cache")
        if cached is None:
            core = self._tok._core
            cached = {}
            for i in range(self._tok.n_vocab):
                if core.token_kind(i) != "unused":
                    cached.setdefault(core.token_string(i), i)
            self.__dict__["_spelled_cache"] = cached
        return cached

    def _document(self) -> dict[str, Any]:
        if self._source is None:
            return json.loads(self.to_str())
        kind, value = self._source
        return json.loads(Path(value).read_text(encoding="utf-8") if kind == "path" else value)

    def _model_tokens(self) -> set[str]:
        vocab = self._document().get("model", {}).get("vocab", {})
        if isinstance(vocab, dict):
            return set(vocab)
        return {entry[0] for entry in vocab if isinstance(entry, list) and entry}  # Unigram: [piece, score]

    def _added(self) -> dict[int, AddedToken]:
        out: dict[int, AddedToken] = {}
        for entry in self._document().get("added_tokens") or []:
            out[entry["id"]] = AddedToken(
                entry["content"],
                single_word=entry.get("single_word", False),
                lstrip=entry.get("lstrip", False),
                rstrip=entry.get("rstrip", False),
                normalized=entry.get("normalized", True),
                special=entry.get("special", False),
            )
        return out

    def __repr__(self) -> str:
        return f"Tokenizer(vocab_size={self.get_vocab_size()}, model={self._tok.model_type})"

    def __getstate__(self) -> dict[str, Any]:
        return {"tok": self._tok, "source": self._source}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["tok"])  # type: ignore[misc]
        self._source = state["source"]


def _no_pretokenized(is_pretokenized: bool) -> None:
    if is_pretokenized:
        raise _core.ConfigError("is_pretokenized=True (input already split into words) is not supported yet")


def _token_list(tokens: Sequence[str | AddedToken]) -> list[str | AddedToken]:
    if isinstance(tokens, (str, AddedToken)) or not isinstance(tokens, Iterable):
        raise TypeError("expected a list of str or AddedToken")
    out = list(tokens)
    for t in out:
        if not isinstance(t, (str, AddedToken)):
            raise TypeError(f"expected str or AddedToken, not {type(t).__name__}")
    return out


def _parts(item: EncodeInput) -> tuple[str, str | None]:
    if isinstance(item, str):
        return item, None
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return item[0], item[1]
    raise _core.ConfigError(f"a batch item is a text or a (text, pair) tuple, not {item!r:.80}")


def _padded_together(encodings: list[Encoding], padding: dict[str, Any] | None) -> list[Encoding]:
    """Pads a batch encoded one by one to its longest, as the batch call would."""
    if not padding or padding.get("length") is not None:
        return encodings
    longest = max((len(e) for e in encodings), default=0)
    multiple = padding.get("pad_to_multiple_of")
    if multiple:
        longest = -(-longest // multiple) * multiple
    for e in encodings:
        e.pad(
            longest,
            direction=padding["direction"],
            pad_id=padding["pad_id"],
            pad_type_id=padding["pad_type_id"],
            pad_token=padding["pad_token"],
        )
    return encodings
