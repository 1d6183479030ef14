"""`tokenmill.tokenizers.Tokenizer`: Hugging Face `tokenizers.Tokenizer`'s API over tokenmill's
core, so a pipeline switches by changing its import. `encode` returns an `Encoding` with the
template applied (Hugging Face's meaning, not tiktoken's list of ids); truncation and padding are
the tokenizer's own settings, as in `tokenizers`.

>>> from tokenmill.tokenizers import Tokenizer
>>> tokenizer = Tokenizer.from_file("tokenizer.json")   # bert-base-uncased's
>>> tokenizer.encode("Hello world").ids
[101, 7592, 2088, 102]
>>> tokenizer.decode([101, 7592, 2088, 102])
'hello world'

A tokenizer whose normalizer or pre-tokenizer is (or holds) a custom Python component has no
`tokenizer.json` form for tokenmill's core to run whole: it encodes in Python as tokenizers does
(`tokenmill.tokenizers.pre_tokenized_string.PythonPipeline`), the built-in steps and the model
still in Rust; it cannot be saved or pickled, as in tokenizers.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tokenmill import _core
from tokenmill import tokenizer as _tokenmill
from tokenmill.tokenizers._component import Component, has_custom, not_serializable
from tokenmill.tokenizers.added_token import AddedToken
from tokenmill.tokenizers.decoders import Decoder
from tokenmill.tokenizers.encoding import Encoding
from tokenmill.tokenizers.models import SAMPLING, Model, without_sampling
from tokenmill.tokenizers.normalizers import Normalizer
from tokenmill.tokenizers.pre_tokenized_string import PythonPipeline
from tokenmill.tokenizers.pre_tokenizers import PreTokenizer
from tokenmill.tokenizers.processors import PostProcessor
from tokenmill.tokenizers.trainers import Trainer

InputSequence = str
EncodeInput = str | tuple[str, str] | list[str]


class Tokenizer:
    """A tokenizer with `tokenizers.Tokenizer`'s methods, run by tokenmill's core.

    Made from a file (`from_file`, `from_str`, `from_buffer`), or around a `tokenmill.Tokenizer`.
    """

    def __init__(self, model: _tokenmill.Tokenizer | Model) -> None:
        # The tokenizer as tokenmill runs it, loaded when first needed (`_tok`).
        self._loaded: _tokenmill.Tokenizer | None = None
        # The tokenizer.json it was read from, for what only the file says (the model's own
        # vocabulary, apart from added tokens): a path or the text.
        self._source: tuple[str, str] | None = None
        # The tokenizer.json as a dict, once read or once built from components: what a component
        # set or changed edits, and what `_tok` is loaded from again after.
        self._doc: dict[str, Any] | None = None
        if isinstance(model, Model):
            self._doc = {
                "version": "1.0",
                "truncation": None,
                "padding": None,
                "added_tokens": [],
                "normalizer": None,
                "pre_tokenizer": None,
                "post_processor": None,
                "decoder": None,
                "model": model._node,
            }
            model._listeners.append(self._watcher())
            return
        if not isinstance(model, _tokenmill.Tokenizer):
            raise TypeError(
                "tokenmill.tokenizers.Tokenizer is made from a model (tokenmill.tokenizers.models), a file "
                f"(Tokenizer.from_file / from_str) or a tokenmill.Tokenizer, not a {type(model).__name__}"
            )
        self._loaded = model

    @property
    def _tok(self) -> _tokenmill.Tokenizer:
        if self._loaded is None:
            assert self._doc is not None  # either is set
            self._loaded = _load(_runnable(self._doc))
        return self._loaded

    def _watcher(self) -> Any:
        """What a component shared with this tokenizer calls when it changes (held weakly)."""
        me = weakref.ref(self)

        def changed() -> None:
            tok = me()
            if tok is not None:
                tok._invalidate()

        return changed

    def _invalidate(self) -> None:
        """The file is about to change: keep the current truncation and padding in it, and load it
        again when next needed."""
        doc = self._document()
        if self._loaded is not None:
            doc["truncation"], doc["padding"] = _settings_nodes(self.truncation, self.padding)
        self._loaded = None
        self._source = None  # the file it was read from no longer says what this tokenizer is
        self.__dict__.pop("_spelled_cache", None)
        self.__dict__.pop("_plain_core", None)
        self.__dict__.pop("_pipeline_cache", None)

    # -- components -------------------------------------------------------------------------
    def _component(self, key: str, family: type[Component]) -> Any:
        found = family._wrap(self._document().get(key))
        if found is not None:
            found._listeners.append(self._watcher())
        return found

    def _set_component(self, key: str, family: type[Component], value: Component | None) -> None:
        if value is not None and not isinstance(value, family) and type(value).__module__.startswith("tokenizers"):
            # Hugging Face's own component (transformers sets them): the same node, run here.
            value = family._wrap(json.loads(value.__getstate__()))
        if value is not None and not isinstance(value, family):
            raise TypeError(f"{key} must be a {family.__module__}.{family.__name__} or None, not {value!r:.60}")
        if key == "model" and value is None:
            raise TypeError("a tokenizer needs a model")
        self._invalidate()
        self._document()[key] = None if value is None else value._node
        if value is not None:
            value._listeners.append(self._watcher())

    @property
    def model(self) -> Model:
        """The model (its vocabulary and settings); changing it changes this tokenizer."""
        return self._component("model", Model)  # type: ignore[no-any-return]

    @model.setter
    def model(self, value: Model) -> None:
        self._set_component("model", Model, value)

    @property
    def normalizer(self) -> Normalizer | None:
        return self._component("normalizer", Normalizer)  # type: ignore[no-any-return]

    @normalizer.setter
    def normalizer(self, value: Normalizer | None) -> None:
        self._set_component("normalizer", Normalizer, value)

    @property
    def pre_tokenizer(self) -> PreTokenizer | None:
        return self._component("pre_tokenizer", PreTokenizer)  # type: ignore[no-any-return]

    @pre_tokenizer.setter
    def pre_tokenizer(self, value: PreTokenizer | None) -> None:
        self._set_component("pre_tokenizer", PreTokenizer, value)

    @property
    def post_processor(self) -> PostProcessor | None:
        return self._component("post_processor", PostProcessor)  # type: ignore[no-any-return]

    @post_processor.setter
    def post_processor(self, value: PostProcessor | None) -> None:
        self._set_component("post_processor", PostProcessor, value)

    @property
    def decoder(self) -> Decoder | None:
        return self._component("decoder", Decoder)  # type: ignore[no-any-return]

    @decoder.setter
    def decoder(self, value: Decoder | None) -> None:
        self._set_component("decoder", Decoder, value)

    # -- files ------------------------------------------------------------------------------
    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> Tokenizer:
        """Reads a `tokenizer.json`.

        >>> tokenizer = Tokenizer.from_file("tokenizer.json")
        >>> tokenizer.get_vocab_size()
        30522
        """
        made = Tokenizer(_tokenmill.Tokenizer.from_huggingface(path))
        made._source = ("path", os.fspath(path))
        return made

    @staticmethod
    def from_pretrained(identifier: str, revision: str = "main", token: str | None = None) -> Tokenizer:
        """The `tokenizer.json` of a model on the Hugging Face Hub, as tokenizers'
        `Tokenizer.from_pretrained`: `identifier` is the repository (`"bert-base-uncased"`,
        `"org/name"`), `revision` a branch, tag or commit, `token` an access token for a private
        or gated repository (by default huggingface_hub's own: `HF_TOKEN` or `hf auth login`).

        The file is fetched by huggingface_hub's `hf_hub_download` into its cache (`HF_HUB_CACHE`;
        with `HF_HUB_OFFLINE=1` only the cache is read), then read by `from_file`. For example,
        ``Tokenizer.from_pretrained("bert-base-uncased").encode("Hello world").ids`` gives
        ``[101, 7592, 2088, 102]``. huggingface_hub is not a dependency of tokenmill: without it
        this raises a `ConfigError`. A repository, revision or file that cannot be found (or
        fetched) raises a `HubError`, which is both a tokenmill `CorpusError` and an `OSError`
        (what huggingface_hub's own errors are, for code written against tokenizers).
        """
        hub = _huggingface_hub()
        options = {"revision": revision} if token is None else {"revision": revision, "token": token}
        with _hub_errors(identifier, revision, "tokenizer.json"):
            path = hub.hf_hub_download(repo_id=identifier, filename="tokenizer.json", **options)
        return Tokenizer.from_file(path)

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
        """The `tokenizer.json` text of this tokenizer: the file it was read from (or was built
        from components), with the current truncation and padding, so every component is kept as
        the file spelled it; for one made from a `tokenmill.Tokenizer`, tokenmill's export of it.
        A custom component has no JSON form: a tokenizer holding one is refused (a ConfigError)."""
        for family in ("normalizer", "pre_tokenizer", "decoder"):
            if has_custom(self._document().get(family)):
                raise not_serializable(family)
        document = _without_sampling_settings(self._document())
        document["truncation"], document["padding"] = _settings_nodes(self.truncation, self.padding)
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

        >>> enc = tokenizer.encode("Hello", "world")
        >>> enc.tokens, enc.type_ids
        (['[CLS]', 'hello', '[SEP]', 'world', '[SEP]'], [0, 0, 0, 1, 1])
        """
        pipeline = self._pipeline()
        if pipeline is not None:
            first = pipeline.encode(sequence, 0, is_pretokenized)
            second = None if pair is None else pipeline.encode(pair, 1, is_pretokenized)
            return self.post_process(first, second, add_special_tokens)
        if is_pretokenized:
            second = None if pair is None else self._words(pair, 1)
            return self.post_process(self._words(sequence, 0), second, add_special_tokens)
        core = self._encoder().encode_for_model(sequence, pair, add_special_tokens=add_special_tokens)
        return Encoding._from_core(core)

    async def async_encode(
        self,
        sequence: InputSequence,
        pair: InputSequence | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        """`encode` on a worker thread, awaited (the core releases the GIL while it works).

        >>> import asyncio
        >>> asyncio.run(tokenizer.async_encode("Hello", "world")).tokens
        ['[CLS]', 'hello', '[SEP]', 'world', '[SEP]']
        """
        import asyncio

        return await asyncio.to_thread(self.encode, sequence, pair, is_pretokenized, add_special_tokens)

    def _words(self, words: Any, type_id: int) -> Encoding:
        """Words given already split (`is_pretokenized`): each normalized and encoded on its own,
        its tokens' word id its index and their offsets within it, as tokenizers has them (a
        pair's type id 1 until a template says otherwise)."""
        if type(words).__module__ == "numpy" and getattr(words, "ndim", None) == 1:
            words = words.tolist()  # a NumPy array of words, which tokenizers takes too
        if isinstance(words, str) or not isinstance(words, (list, tuple)) or not all(isinstance(w, str) for w in words):
            raise TypeError("with is_pretokenized=True, a sequence is a list of words (str)")
        plain = self.__dict__.get("_plain_core")
        if plain is None:  # the same tokenizer without truncation or padding (post_process does those)
            plain = self.__dict__["_plain_core"] = self._encoder()._core.with_settings(None, None)
        parts = []
        for i, word in enumerate(words):
            part = Encoding._from_core(plain.encode_for_model(word, None, False))
            lists = part._own()
            lists["word_ids"], lists["type_ids"] = [i] * len(part), [type_id] * len(part)
            part._ranges = {}  # the model's tokens alone: post_process marks the sequences
            parts.append(part)
        return Encoding.merge(parts, growing_offsets=False)

    def encode_batch(
        self, input: Sequence[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """`encode` over a batch (texts, or `(text, pair)` tuples) on all cores; padding to the
        longest pads the whole batch."""
        items = list(input)
        if is_pretokenized or self._pipeline() is not None:
            encodings = []
            for item in items:
                if is_pretokenized:
                    first, second = item if isinstance(item, tuple) else (item, None)
                else:
                    first, second = _parts(item)
                encodings.append(self.encode(first, second, is_pretokenized, add_special_tokens))
            return _padded_together(encodings, self.padding)
        pairs = [isinstance(item, (tuple, list)) for item in items]
        if any(pairs) and not all(pairs):
            # Mixed singles and pairs: the core takes one kind per batch; padding must still
            # cover the whole batch, so pad afterwards as tokenizers does.
            encodings = [self.encode(*_parts(item), add_special_tokens=add_special_tokens) for item in items]
            return _padded_together(encodings, self.padding)
        if any(pairs):
            firsts, seconds = zip(*(_parts(item) for item in items), strict=True)
            core = self._encoder().encode_batch_for_model(
                list(firsts), list(seconds), add_special_tokens=add_special_tokens
            )
        else:
            core = self._encoder().encode_batch_for_model(items, add_special_tokens=add_special_tokens)
        return [Encoding._from_core(e) for e in core]

    async def async_encode_batch(
        self, input: Sequence[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """`encode_batch` on a worker thread, awaited (the core releases the GIL while it works)."""
        import asyncio

        return await asyncio.to_thread(self.encode_batch, input, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(
        self, input: Sequence[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        return await self.async_encode_batch(input, is_pretokenized, add_special_tokens)

    def encode_batch_fast(
        self, input: Sequence[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """`encode_batch` (tokenizers' variant without offsets; here offsets cost nothing more)."""
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    def post_process(
        self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True
    ) -> Encoding:
        """Truncation, the post-processor's template and padding, applied to encodings made
        without them (`encode(..., add_special_tokens=False)` with neither set, or built by hand).

        >>> tokenizer.post_process(tokenizer.encode("Hello", add_special_tokens=False)).tokens
        ['[CLS]', 'hello', '[SEP]']
        """
        for name, value in (("encoding", encoding), ("pair", pair)):
            if value is not None and not isinstance(value, Encoding):
                raise TypeError(f"post_process: {name} must be an Encoding, not {type(value).__name__}")
        core = self._tok._core
        second = None if pair is None else _core_encoding(core, pair)
        return Encoding._from_core(core.post_process(_core_encoding(core, encoding), second, add_special_tokens))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens the template adds to one text (or a pair)."""
        core = self._tok._core.with_settings(None, None)
        encoding = core.encode_for_model("", "" if is_pair else None, True)
        return sum(encoding.special_tokens_mask)

    @property
    def encode_special_tokens(self) -> bool:
        """Whether special added tokens in text are encoded as ordinary text (tokenizers' option,
        which transformers' `split_special_tokens` sets); non-special added tokens are matched
        either way.

        >>> tok = Tokenizer.from_file("tokenizer.json")
        >>> tok.encode("[CLS]").tokens
        ['[CLS]', '[CLS]', '[SEP]']
        >>> tok.encode_special_tokens = True
        >>> tok.encode("[CLS]").tokens
        ['[CLS]', '[', 'cl', '##s', ']', '[SEP]']
        """
        return bool(self.__dict__.get("_specials_as_text", False))

    @encode_special_tokens.setter
    def encode_special_tokens(self, value: bool) -> None:
        self.__dict__["_specials_as_text"] = bool(value)
        self.__dict__.pop("_plain_core", None)
        self.__dict__.pop("_pipeline_cache", None)

    def _pipeline(self) -> PythonPipeline | None:
        """How this tokenizer encodes when its normalizer or pre-tokenizer holds a custom Python
        component (made once per state of its file); None when the core runs it whole."""
        doc = self._doc
        if doc is None or not (has_custom(doc.get("normalizer")) or has_custom(doc.get("pre_tokenizer"))):
            return None
        cached = self.__dict__.get("_pipeline_cache")
        if cached is None:
            # The model alone, in Rust: the pipeline gives it the pieces.
            model = dict(_runnable(doc), added_tokens=[], normalizer=None, pre_tokenizer=None, post_processor=None)
            model.update(decoder=None, truncation=None, padding=None)
            cached = self.__dict__["_pipeline_cache"] = PythonPipeline(
                doc.get("added_tokens") or [],
                self.normalizer,
                self.pre_tokenizer,
                _load(model)._core.with_settings(None, None),
                specials_as_text=self.encode_special_tokens,
            )
        return cached  # type: ignore[no-any-return]

    def _custom_decoder(self) -> Decoder | None:
        """The decoder, when it is a custom Python one (decoding then runs in Python)."""
        doc = self._doc
        if doc is None or not has_custom(doc.get("decoder")):
            return None
        return self.decoder

    def _encoder(self) -> _tokenmill.Tokenizer:
        """The tokenizer encodings come from: this one, or with `encode_special_tokens` one whose
        model inputs read the special added tokens as text (made once per loaded core)."""
        tok = self._tok
        if not self.encode_special_tokens:
            return tok
        cached = self.__dict__.get("_encoder_cache")
        if cached is None or cached[0] is not tok._core:
            names = [t.content for t in self.get_added_tokens_decoder().values() if t.special]
            cached = (tok._core, _tokenmill.Tokenizer(tok._core.with_specials_as_text(names)))
            self.__dict__["_encoder_cache"] = cached
        return cached[1]  # type: ignore[no-any-return]

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The text of `ids` through the tokenizer's decoder."""
        decoder = self._custom_decoder()
        if decoder is not None:
            # As tokenizers: each id's token (unknown ids and, if asked, special tokens left out)
            # through the decoder.
            specials = {t.content for t in self._added().values() if t.special} if skip_special_tokens else set()
            tokens = [self.id_to_token(i) for i in ids]
            return decoder.decode([t for t in tokens if t is not None and t not in specials])
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = True) -> list[str]:
        """`decode` of each list of ids."""
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    async def async_decode_batch(
        self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = True
    ) -> list[str]:
        """`decode_batch` on a worker thread, awaited."""
        import asyncio

        return await asyncio.to_thread(self.decode_batch, list(sequences), skip_special_tokens)

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

        >>> tok = Tokenizer.from_file("tokenizer.json")
        >>> tok.add_tokens(["tokenmill", AddedToken(" <row>", lstrip=True)])
        2
        >>> tok.encode("tokenmill reads a <row>").tokens
        ['[CLS]', 'tokenmill', 'reads', 'a', ' <row>', '[SEP]']
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
        vocab = self.get_vocab()
        model = self._model_tokens()
        self._invalidate()
        entries = self._document().setdefault("added_tokens", [])
        known = {entry["content"]: entry for entry in entries}
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
        return new

    # -- training ---------------------------------------------------------------------------
    def train(self, files: list[str], trainer: Trainer | None = None) -> None:
        """Trains the model on the lines of `files` (see `tokenmill.tokenizers.trainers`)."""
        from tokenmill.tokenizers import training

        training.train(self, training.lines_of(files), trainer)

    def train_from_iterator(
        self, iterator: Iterable[Any], trainer: Trainer | None = None, length: int | None = None
    ) -> None:
        """Trains the model on texts (or batches of texts) from `iterator`; `length` is ignored
        (tokenizers uses it for its progress bar)."""
        from tokenmill.tokenizers import training

        training.train(self, training.texts_of(iterator), trainer)

    # -- truncation and padding -------------------------------------------------------------
    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> None:
        """Truncates every encoding to `max_length` tokens (the template's included); what is cut
        off comes back in `overflowing`, windows overlapping by `stride` tokens. As in tokenizers,
        a `max_length` shorter than the template's tokens leaves inputs whole."""
        self._tok.enable_truncation(
            max_length, stride=stride, strategy=strategy, direction=direction, whole_below_template=True
        )

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
        """The tokenizer.json as a dict: read from the file once, or written from the loaded
        tokenizer; components and added tokens are edited in it."""
        if self._doc is None:
            if self._source is None:
                with tempfile.TemporaryDirectory(prefix="tokenmill-") as directory:
                    path = Path(directory) / "tokenizer.json"
                    self._tok.to_huggingface(path)
                    self._doc = json.loads(path.read_text(encoding="utf-8"))
            else:
                kind, value = self._source
                self._doc = json.loads(Path(value).read_text(encoding="utf-8") if kind == "path" else value)
        return self._doc

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
        """Its tokenizer.json as tokenizers shows it: `Tokenizer(version="1.0", ..., model=BPE(...))`."""
        from tokenmill.tokenizers._pythonic import render_tokenizer

        return render_tokenizer(self._document(), None)

    def __str__(self) -> str:
        from tokenmill.tokenizers._pythonic import render_tokenizer

        return render_tokenizer(self._document(), 5)

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = {"encode_special_tokens": self.encode_special_tokens}
        if self._doc is None and self._source is None:
            return {"tok": self._tok, **state}
        return {"json": self.to_str(), **state}

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "tok" in state:
            self.__init__(state["tok"])  # type: ignore[misc]
        else:
            made = Tokenizer.from_str(state["json"])
            self.__dict__.update(made.__dict__)
        self.encode_special_tokens = state.get("encode_special_tokens", False)


class HubError(_core.CorpusError, OSError):
    """A file of a Hugging Face Hub repository could not be found or fetched (the repository,
    revision or file is missing, private, or the Hub is out of reach with no copy in the cache):
    a tokenmill `CorpusError`, and an `OSError` as huggingface_hub's own errors are. The error
    huggingface_hub raised is its `__cause__`."""


def _huggingface_hub() -> Any:
    """The huggingface_hub module, imported when first needed (it is not a dependency)."""
    try:
        import huggingface_hub
    except ImportError:
        raise _core.ConfigError(
            "loading from the Hugging Face Hub needs huggingface_hub: pip install huggingface_hub"
        ) from None
    return huggingface_hub


@contextlib.contextmanager
def _hub_errors(identifier: str, revision: str | None, what: str, or_directory: bool = False) -> Iterator[None]:
    """huggingface_hub's errors while fetching `what` of a repository, as tokenmill's: a `HubError`
    (or a `ConfigError` for a malformed repository id, or a missing directory when `identifier`
    could have been one) naming the repository and revision."""
    from huggingface_hub import errors

    where = identifier if revision is None else f"{identifier}@{revision}"
    try:
        yield
    except errors.HFValidationError as e:
        not_an_id = "neither a directory nor" if or_directory else "not"
        raise _core.ConfigError(f"{identifier!r} is {not_an_id} a Hugging Face Hub repository id ({e})") from e
    except (OSError, errors.EntryNotFoundError) as e:
        if isinstance(e, errors.GatedRepoError):
            why = "a gated repository: ask for access on the Hub and pass a token"
        elif isinstance(e, errors.RepositoryNotFoundError):
            why = "no such repository, or a private one (pass a token)"
        elif isinstance(e, errors.RevisionNotFoundError):
            why = f"no revision {revision!r} in this repository"
        elif isinstance(e, errors.RemoteEntryNotFoundError):
            why = f"the repository has no {what}"
        elif isinstance(e, errors.LocalEntryNotFoundError):
            why = "not in the local cache, and the Hub was not reached (offline, or no network)"
        else:
            why = type(e).__name__
        detail = " ".join(str(e).split())
        raise HubError(f"{where}: cannot get {what} from the Hugging Face Hub: {why} ({detail})") from e


def _core_encoding(core: Any, encoding: Encoding) -> Any:
    """The core encoding behind `encoding`, or one made from its lists if it was changed in Python."""
    if encoding._core is not None:
        return encoding._core
    return core.encoding_from_lists(
        encoding.ids,
        encoding.type_ids,
        encoding.tokens,
        encoding.word_ids,
        encoding.offsets,
        encoding.special_tokens_mask,
        encoding.attention_mask,
        [(s, start, stop) for s, (start, stop) in encoding._sequence_ranges().items()],
        [_core_encoding(core, window) for window in encoding._windows()],
    )


def _without_sampling_settings(doc: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy of `doc` whose Unigram model has no sampling settings (as tokenizers writes it)."""
    model = doc.get("model")
    if isinstance(model, dict) and any(key in model for key in SAMPLING):
        doc = {**doc, "model": without_sampling(model)}
    return dict(doc)


def _draw(model: dict[str, Any]) -> tuple[float, int] | None:
    """How a Unigram model draws a cut on every encode, as tokenizers runs it: with an `alpha`
    (among the `nbest_size` best cuts when that is above 0); None when it takes the best cut (no
    alpha, or 0). (A BPE `dropout` is in the file, and read with it.)"""
    if model.get("type") == "Unigram" and model.get("alpha"):
        return float(model["alpha"]), int(model.get("nbest_size") or 0)
    return None


def _runnable(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` without its custom components (which run in Python), for what the core does with the
    rest: the vocabulary, post-processing, decoding. A byte-level BPE whose ByteLevel step goes with
    the custom pre-tokenizer keeps a stand-in one, which says its tokens are byte-level text."""
    if not any(has_custom(doc.get(key)) for key in ("normalizer", "pre_tokenizer", "decoder")):
        return doc
    out = {key: _without_custom(value) if key in ("normalizer", "pre_tokenizer", "decoder") else value
           for key, value in doc.items()}  # fmt: skip
    byte_level = (doc.get("model") or {}).get("type") == "BPE" and "ByteLevel" in json.dumps(out.get("decoder"))
    if has_custom(doc.get("pre_tokenizer")) and byte_level:
        if "ByteLevel" not in json.dumps(out["pre_tokenizer"]):
            out["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False}
            out["pre_tokenizer"]["use_regex"] = False
    return out


def _without_custom(node: Any) -> Any:
    """A component node without its custom parts: a custom one is None, a Sequence keeps the rest."""
    if not has_custom(node):
        return node
    for key in ("normalizers", "pretokenizers", "decoders"):
        if isinstance(node.get(key), list):
            kept = [child for child in map(_without_custom, node[key]) if child is not None]
            return {**node, key: kept} if kept else None
    return None


def _load(doc: dict[str, Any]) -> _tokenmill.Tokenizer:
    """tokenmill's tokenizer for a tokenizer.json dict (its model's sampling, if any, applied
    after reading the rest)."""
    model = doc.get("model") or {}
    draw = _draw(model)
    if draw is not None:
        doc = _without_sampling_settings(doc)
    tok = _read(doc)
    return tok if draw is None else _tokenmill.Tokenizer(tok._core.with_draw(*draw))


def _read(doc: dict[str, Any]) -> _tokenmill.Tokenizer:
    """tokenmill's tokenizer for a tokenizer.json dict, read as a file."""
    with tempfile.TemporaryDirectory(prefix="tokenmill-") as directory:
        path = Path(directory) / "tokenizer.json"
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        try:
            return _tokenmill.Tokenizer.from_huggingface(path)
        except _core.TokenmillError as e:
            # The temporary file's name means nothing to the caller.
            message = str(e).replace(str(path), "<tokenizer.json text>")
            model = doc.get("model") or {}
            if not model.get("vocab") or model.get("vocab") == [["<unk>", 0.0]]:
                message += f" (the {model.get('type', '')} model has no vocabulary yet: train it or give it one)"
            raise type(e)(message) from None


_STRATEGIES = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}


def _settings_nodes(truncation: dict[str, Any] | None, padding: dict[str, Any] | None) -> tuple[Any, Any]:
    """The `truncation` and `padding` sections of a tokenizer.json for these settings (as
    `Tokenizer.truncation` and `.padding` report them)."""
    cut = None
    if truncation is not None:
        cut = {
            "direction": truncation["direction"].capitalize(),
            "max_length": truncation["max_length"],
            "strategy": _STRATEGIES[truncation["strategy"]],
            "stride": truncation["stride"],
        }
    pad = None
    if padding is not None:
        pad = {
            "strategy": "BatchLongest" if padding["length"] is None else {"Fixed": padding["length"]},
            "direction": padding["direction"].capitalize(),
            "pad_to_multiple_of": padding["pad_to_multiple_of"],
            "pad_id": padding["pad_id"],
            "pad_type_id": padding["pad_type_id"],
            "pad_token": padding["pad_token"],
        }
    return cut, pad


def _token_list(tokens: Sequence[str | AddedToken]) -> list[str | AddedToken]:
    if isinstance(tokens, (str, AddedToken)) or not isinstance(tokens, Iterable):
        raise TypeError("expected a list of str or AddedToken")
    out: list[str | AddedToken] = []
    for t in tokens:
        if type(t).__module__.startswith("tokenizers") and type(t).__name__ == "AddedToken":
            t = AddedToken(**t.__getstate__())  # Hugging Face's own (transformers passes them)
        if not isinstance(t, (str, AddedToken)):
            raise TypeError(f"expected str or AddedToken, not {type(t).__name__}")
        out.append(t)
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
