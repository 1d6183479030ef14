"""`SentencePieceProcessor` on tokenmill's encoder: sentencepiece's class, its methods under both
their names (`EncodeAsIds`, `encode_as_ids`), its arguments, results and exceptions.

>>> sp = SentencePieceProcessor(model_file="spm.model")
>>> sp.encode("hello world", out_type=str)
['▁', 'he', 'll', 'o', '▁world']

Ids come from tokenmill's encoder, which equals sentencepiece's on every `.model` file;
pieces, protos, n-best lists and samples are built from the cut with each piece's place in
the text (`CoreTokenizer.best_pieces` and friends). Decoding lives in `decoding.py`, sampling
and n-best lists in `sampling.py`, the methods' other names in `aliases.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tokenmill import _core
from tokenmill.formats import sentencepiece as spm_format
from tokenmill.sentencepiece import id_inputs
from tokenmill.sentencepiece.aliases import add_aliases
from tokenmill.sentencepiece.arguments import (
    ENCODE_TYPES,
    Piece,
    RefusedError,
    as_asked,
    as_text,
    byte_offsets,
    char_index,
    refuse_options,
    resolve,
    thread_count,
)
from tokenmill.sentencepiece.binding import Binding
from tokenmill.sentencepiece.decoding import Decoding
from tokenmill.sentencepiece.proto import ImmutableSentencePiece, ImmutableSentencePieceText
from tokenmill.sentencepiece.sampling import Sampling
from tokenmill.sentencepiece.word_model import word_cut
from tokenmill.tokenizer import Tokenizer


class SentencePieceProcessor(Decoding, Sampling):
    """sentencepiece's processor: loads a `.model` file (or its bytes) and encodes, decodes,
    samples and normalizes as sentencepiece does. Options given here are the defaults of
    `encode`."""

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        model_proto: bytes | None = None,
        out_type: type | str | None = None,
        add_bos: bool = False,
        add_eos: bool = False,
        reverse: bool = False,
        emit_unk_piece: bool = False,
        enable_sampling: bool = False,
        nbest_size: int = -1,
        alpha: float = 0.1,
        num_threads: int = -1,
        return_type: type | str | None = None,
    ) -> None:
        self._tok: Tokenizer | None = None
        self._words: dict[str, int] | None = None
        self._out_type = resolve(return_type, out_type, int)
        self._add_bos, self._add_eos, self._reverse = add_bos, add_eos, reverse
        self._emit_unk_piece, self._enable_sampling = emit_unk_piece, enable_sampling
        self._nbest_size, self._alpha, self._num_threads = nbest_size, alpha, num_threads
        if model_file or model_proto:
            self.Load(model_file=model_file, model_proto=model_proto)

    # -- loading -------------------------------------------------------------------------------
    def Init(self, **kwargs: Any) -> None:
        self.__init__(**kwargs)  # type: ignore[misc]

    @classmethod
    def from_file(cls, model_file: str | os.PathLike[str], **kwargs: Any) -> SentencePieceProcessor:
        """A processor of the model in `model_file`, with `kwargs` as `__init__` takes them."""
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise ValueError("model_file and model_proto cannot be passed via kwargs when using from_file.")
        processor = cls(**kwargs)
        processor.LoadFromFile(model_file)
        return processor

    @classmethod
    def from_proto(cls, model_proto: bytes, **kwargs: Any) -> SentencePieceProcessor:
        """A processor of the model in `model_proto` (the bytes of a `.model` file)."""
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise ValueError("model_file and model_proto cannot be passed via kwargs when using from_proto.")
        processor = cls(**kwargs)
        processor.LoadFromSerializedProto(model_proto)
        return processor

    def Load(self, model_file: str | os.PathLike[str] | None = None, model_proto: bytes | None = None) -> bool:
        if model_file and model_proto:
            raise RefusedError("model_file and model_proto must be exclusive.")
        if model_proto:
            return self.LoadFromSerializedProto(model_proto)
        if not model_file:
            raise ValueError("Either model_file or model_proto must be specified.")
        return self.LoadFromFile(model_file)

    def LoadFromFile(self, arg: str | os.PathLike[str] | None) -> bool:
        if arg is None:
            raise TypeError("model_file must be a path")
        path = os.fspath(arg)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise OSError(f'Not found: "{path}": {e.strerror}') from None
        self._load(data, path)
        return True

    def LoadFromSerializedProto(self, serialized: bytes) -> bool:
        self._load(bytes(serialized), "<model proto>")
        return True

    def _load(self, data: bytes, where: str) -> None:
        self._specs = spm_format.read_specs(data, where)
        is_word = self._specs.trainer_spec.model_type == spm_format.ModelType.WORD
        # A WORD model's vocabulary and normalizer run in the core as a Unigram model's; its
        # cut (whole words) is made here.
        core = _core.CoreTokenizer.from_sentencepiece(_as_unigram(data, where) if is_word else data, where)
        self._tok = Tokenizer(core)
        self._data = data
        self._unigram = core.model_type == "unigram" and not is_word
        self._words = _word_ids(core) if is_word else None
        self._size = core.vocab_size
        self._piece_list: list[str] | None = None
        self._ids_of: dict[str, int] | None = None
        self._unk = next((i for i in range(self._size) if core.token_kind(i) == "unknown"), -1)

    @property
    def _core(self) -> _core.CoreTokenizer:
        if self._tok is None:
            raise RuntimeError("Model is not initialized.")
        return self._tok._core

    def serialized_model_proto(self) -> bytes:
        self._core  # noqa: B018 - raises when nothing is loaded
        return self._data

    @property
    def _processor(self) -> Binding:
        """sentencepiece's low-level methods (`_DecodePiecesBatch`…), which its tests call."""
        return Binding(self)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_tok", None)
        state.pop("_piece_list", None)
        state.pop("_ids_of", None)
        return state

    def __setstate__(self, state: dict[str, Any] | bytes) -> None:
        """Restores a pickled processor: its options and model, or (pickles of older
        sentencepiece releases) the model's bytes alone, with default options."""
        if not isinstance(state, dict):
            state = {"model_proto": state}
        state = dict(state)
        SentencePieceProcessor.__init__(self)
        model = state.pop("model_proto", None)  # sentencepiece 0.2.3's key
        self.__dict__.update(state)
        self._tok = None
        data = model if model is not None else state.get("_data")
        if data is not None:
            self._load(bytes(data), "<model proto>")

    # -- the vocabulary ------------------------------------------------------------------------
    def _pieces(self) -> list[str]:
        if self._piece_list is None:
            spell = self._core.token_string
            self._piece_list = [spell(i) for i in range(self._size)]
        return self._piece_list

    def GetPieceSize(self) -> int:
        return self._core.vocab_size

    def _in_range(self, id: int) -> int:
        if not 0 <= id < self._size:
            raise IndexError("piece id is out of range.")
        return id

    def _by_id(self, arg: object, f: Callable[[int], Any]) -> Any:
        """`f` of an id, or of each id of a sequence (a 1-D NumPy array included)."""
        self._core  # noqa: B018 - raises when nothing is loaded
        if id_inputs.is_sequence(arg) or id_inputs.is_array(arg):
            return [f(self._in_range(i)) for i in id_inputs.id_list(arg)]
        return f(self._in_range(id_inputs.one_id(arg)))

    def _piece_ids(self) -> dict[str, int]:
        if self._ids_of is None:
            pieces = self._pieces()
            # The first id of a string wins, as in sentencepiece's table.
            self._ids_of = {}
            for i in range(len(pieces) - 1, -1, -1):
                self._ids_of[pieces[i]] = i
        return self._ids_of

    def PieceToId(self, arg: object) -> Any:
        ids = self._piece_ids()

        def one(piece: object, what: str) -> int:
            if isinstance(piece, bytes):
                piece = piece.decode("utf-8", errors="replace")
            if not isinstance(piece, str):
                raise TypeError(f"{what} must be str or bytes")
            return ids.get(piece, self._unk)

        if id_inputs.is_sequence(arg):
            return [one(p, "Sequence elements") for p in id_inputs.items(arg)]
        return one(arg, "PieceToId(): the piece")

    def IdToPiece(self, arg: object) -> Any:
        pieces = self._pieces()
        return self._by_id(arg, lambda i: pieces[i])

    def GetScore(self, arg: object) -> Any:
        return self._by_id(arg, lambda i: self._core.score(i) or 0.0)

    def _kind_is(self, arg: object, kind: str) -> Any:
        return self._by_id(arg, lambda i: self._core.token_kind(i) == kind)

    def IsUnknown(self, arg: object) -> Any:
        return self._kind_is(arg, "unknown")

    def IsControl(self, arg: object) -> Any:
        return self._kind_is(arg, "control")

    def IsUnused(self, arg: object) -> Any:
        return self._kind_is(arg, "unused")

    def IsByte(self, arg: object) -> Any:
        return self._kind_is(arg, "byte")

    def _control_id(self, piece: str) -> int:
        found = self._piece_ids().get(piece)
        return found if found is not None and self._core.token_kind(found) == "control" else -1

    def unk_id(self) -> int:
        return self._unk

    def bos_id(self) -> int:
        return self._control_id(self._specs.trainer_spec.bos_piece)

    def eos_id(self) -> int:
        return self._control_id(self._specs.trainer_spec.eos_piece)

    def pad_id(self) -> int:
        return self._control_id(self._specs.trainer_spec.pad_piece)

    def piece_size(self) -> int:
        return self.GetPieceSize()

    def vocab_size(self) -> int:
        return self.GetPieceSize()

    def __len__(self) -> int:
        return self.GetPieceSize()

    def __getitem__(self, piece: str) -> int:
        return self.PieceToId(piece)

    # -- encoding ------------------------------------------------------------------------------
    def _options(
        self, add_bos: bool | None, add_eos: bool | None, reverse: bool | None, emit_unk_piece: bool | None
    ) -> dict[str, bool]:
        """A call's options, the processor's where the call gives none."""
        return dict(
            add_bos=self._add_bos if add_bos is None else add_bos,
            add_eos=self._add_eos if add_eos is None else add_eos,
            reverse=self._reverse if reverse is None else reverse,
            emit_unk_piece=self._emit_unk_piece if emit_unk_piece is None else emit_unk_piece,
        )

    def Encode(
        self,
        input: Any,
        out_type: type | str | None = None,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        enable_sampling: bool | None = None,
        nbest_size: int | None = None,
        alpha: float | None = None,
        num_threads: int | None = None,
        thread_pool: object = None,
        return_type: type | str | None = None,
        return_bytes: bool | None = None,
    ) -> Any:
        """`input` (a text or a list of texts) as ids (`out_type=int`), pieces (`str`, `bytes`),
        a proto (`"serialized_proto"`, `"immutable_proto"`), a NumPy array (`"numpy"`) or ids,
        pieces and offsets (`"offset_mapping"`; byte offsets for `bytes` input or
        `return_bytes=True`). `return_type` is 0.2.3's name for `out_type`."""
        out_type = resolve(return_type, out_type, self._out_type)
        opts = self._options(add_bos, add_eos, reverse, emit_unk_piece)
        sampling = self._enable_sampling if enable_sampling is None else enable_sampling
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        alpha = self._alpha if alpha is None else alpha
        if out_type not in ENCODE_TYPES:
            raise RefusedError(f"unknown out_type={out_type}")
        if return_bytes is not None and out_type != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        refuse_options(out_type, opts)
        if sampling:
            self._check_sampling(nbest_size, alpha)
        threads = thread_count(num_threads, self._num_threads, thread_pool)
        batch = isinstance(input, list)
        if return_bytes is None:
            # As sentencepiece: offsets in bytes for bytes input (a batch: its first text).
            first = input[0] if batch and input else input
            return_bytes = isinstance(first, (bytes, bytearray))

        def one(text: object) -> Any:
            t = as_text(text, batch)
            if sampling:
                return self._finish(t, self._sampled(t, nbest_size, alpha), out_type, as_bytes=return_bytes, **opts)
            if out_type in (int, "numpy") and self._words is None:
                return self._finish(t, None, out_type, ids=self._core.encode_ordinary(t), **opts)
            return self._finish(t, self._best(t), out_type, as_bytes=return_bytes, **opts)

        if not batch:
            return one(input)
        if out_type in (int, "numpy") and not sampling and self._words is None:
            texts = [as_text(t, True) for t in input]
            self._core  # noqa: B018 - raises when nothing is loaded
            ids = self._tok.encode_ordinary_batch(texts, num_threads=threads)  # type: ignore[union-attr]
            return [self._finish("", None, out_type, ids=x, **opts) for x in ids]
        return [one(t) for t in input]

    def ParallelEncode(
        self,
        input: Any,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        chunk_len: int | None = None,
        num_threads: int | None = None,
        thread_pool: object = None,
        return_type: type | str | None = None,
        out_type: type | str | None = None,
    ) -> Any:
        """`Encode` for long texts (sentencepiece 0.2.3 cuts them into `chunk_len`-long parts
        encoded on threads): the same ids, pieces or proto as `Encode`. tokenmill's encoder
        releases the GIL and is fast on one long text, so the text is encoded whole; a list of
        texts is encoded text by text, each as one.

        >>> sp.parallel_encode("hello world", chunk_len=1000, num_threads=4)
        [3, 37, 91, 11, 41]
        >>> sp.parallel_encode(["hello world", "the world"], chunk_len=1000, out_type=str)
        [['▁', 'he', 'll', 'o', '▁world'], ['▁the', '▁world']]
        """
        out_type = resolve(return_type, out_type, self._out_type)
        if out_type not in ENCODE_TYPES or out_type == "offset_mapping":
            raise RefusedError(f"unknown return_type={out_type}")
        thread_count(num_threads, self._num_threads, thread_pool)
        if isinstance(chunk_len, bool) or not isinstance(chunk_len, int) or chunk_len <= 0:
            raise ValueError("chunk_len must be positive.")
        options = dict(add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece)

        def one(text: object) -> Any:
            if not isinstance(text, (str, bytes)):
                raise TypeError("Input must be str or bytes")
            return self.Encode(text, return_type=out_type, enable_sampling=False, **options)

        return [one(t) for t in input] if isinstance(input, list) else one(input)

    def _best(self, text: str) -> list[Piece]:
        """The best cut, each piece with its place in `text`."""
        if self._words is None:
            return self._core.best_pieces(text)  # type: ignore[no-any-return]
        normalized, starts = self._core.normalize_aligned(text)
        raw = normalized.encode("utf-8")
        char_of = char_index(text)
        return [
            (i, raw[b:e].decode("utf-8"), char_of[starts[b]], char_of[starts[e] if e < len(raw) else starts[-1]])
            for i, b, e in word_cut(normalized, self._words, self._unk)
        ]

    def _place(self, text: str, ids: list[int]) -> list[Piece]:
        """Pieces for ids that spell the normalized text in order (a BPE model's cut): each
        known piece covers its own text, each byte piece one byte, an unknown piece the rest up
        to the next piece's text."""
        normalized, starts = self._core.normalize_aligned(text)
        raw = normalized.encode("utf-8")
        byte_to_char = char_index(text)
        spell = self._core.token_bytes
        out, at = [], 0
        for k, i in enumerate(ids):
            kind = self._core.token_kind(i)
            if kind == "byte":
                length = 1
            elif kind == "unknown":
                following = spell(ids[k + 1]) if k + 1 < len(ids) else b""
                stop = raw.find(following, at + 1) if following else len(raw)
                length = (stop if stop > at else len(raw)) - at
            elif kind == "control":
                length = 0
            else:
                length = len(spell(i))
            end = min(at + length, len(raw))
            begin_byte = starts[at] if at < len(raw) else starts[-1]
            end_byte = starts[end] if end < len(raw) else starts[-1]
            out.append(
                (i, raw[at:end].decode("utf-8", errors="replace"), byte_to_char[begin_byte], byte_to_char[end_byte])
            )
            at = end
        return out

    def _with_options(
        self, items: list[Any], add_bos: bool, add_eos: bool, reverse: bool, pieces: bool = False, **_: Any
    ) -> list[Any]:
        """`items` reversed, then between `<s>` and `</s>` (ids, or pieces with `pieces`)."""
        if reverse:
            items = items[::-1]
        if add_bos:
            bos = self._special("bos")
            items = [self._pieces()[bos] if pieces else bos] + items
        if add_eos:
            eos = self._special("eos")
            items = items + [self._pieces()[eos] if pieces else eos]
        return items

    def _special(self, which: str) -> int:
        found = self.bos_id() if which == "bos" else self.eos_id()
        if found < 0:
            raise RefusedError(f"{which}_id is not defined.")
        return found

    def _finish(
        self,
        text: str,
        pieces: list[Piece] | None,
        out_type: object,
        ids: list[int] | None = None,
        as_bytes: bool = False,
        **opts: bool,
    ) -> Any:
        """A cut as `out_type` asks: `pieces` with their places, or only `ids`."""
        if out_type in (int, "numpy"):
            ids = self._with_options(ids if pieces is None else [p[0] for p in pieces], **opts)
            return id_inputs.as_array(ids) if out_type == "numpy" else ids
        assert pieces is not None
        if out_type in (str, bytes):
            spelled = [self._spell(p, opts["emit_unk_piece"]) for p in pieces]
            spelled = self._with_options(spelled, pieces=True, **opts)
            return [p.encode("utf-8") for p in spelled] if out_type is bytes else spelled
        if out_type == "offset_mapping":
            offsets = [(p[2], p[3]) for p in pieces]
            spelled = [self._spell(p, False) for p in pieces]
            if as_bytes:
                at = byte_offsets(text)
                offsets = [(at[a], at[b]) for a, b in offsets]
                return {
                    "ids": [p[0] for p in pieces],
                    "pieces": [x.encode("utf-8") for x in spelled],
                    "offsets": offsets,
                }
            return {"ids": [p[0] for p in pieces], "pieces": spelled, "offsets": offsets}
        proto = self._proto(text, pieces)
        return as_asked(proto, out_type)

    def _spell(self, piece: Piece, emit_unk_piece: bool) -> str:
        """A piece as sentencepiece spells it: an unknown piece as the text it stands for, and
        with `emit_unk_piece` as the unknown piece — unless that text spells a piece of the
        vocabulary (a control piece's `<s>`): sentencepiece 0.2.3 replaces by string."""
        i, normalized = piece[0], piece[1]
        if i != self._unk:
            return self._pieces()[i]
        if emit_unk_piece and self._piece_ids().get(normalized, self._unk) == self._unk:
            return self._pieces()[i]
        return normalized

    def _proto(self, text: str, pieces: list[Piece], score: float | None = None) -> ImmutableSentencePieceText:
        offsets = byte_offsets(text)
        kind = self._core.token_kind
        spelled = self._pieces()

        def continued(k: int) -> bool:
            """Whether byte piece `k` is not its character's last: the next piece is a byte
            piece holding a UTF-8 continuation byte (sentencepiece gives only the last a surface,
            even an empty one)."""
            if k + 1 >= len(pieces) or kind(pieces[k][0]) != "byte" or kind(pieces[k + 1][0]) != "byte":
                return False
            return int(spelled[pieces[k + 1][0]][3:5], 16) & 0xC0 == 0x80

        return ImmutableSentencePieceText(
            text,
            [
                ImmutableSentencePiece(
                    self._spell(p, False),
                    p[0],
                    text[p[2] : p[3]],
                    p[2],
                    p[3],
                    (offsets[p[2]], offsets[p[3]]),
                    partial=continued(k),
                )
                for k, p in enumerate(pieces)
            ],
            score,
        )

    # -- normalizing ---------------------------------------------------------------------------
    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """`input` as the model's normalizer leaves it (spaces as `▁`); `with_offsets` adds, for
        each normalized character (byte, for bytes input), where it came from, and the length."""
        if isinstance(input, list):
            return [self._normalize_one(x, with_offsets) for x in input]
        return self._normalize_one(input, with_offsets)

    def _normalize_one(self, value: object, with_offsets: bool | None) -> Any:
        as_bytes = isinstance(value, (bytes, bytearray))
        text = as_text(value)
        normalized, starts = self._core.normalize_aligned(text)
        if not with_offsets:
            return normalized.encode("utf-8") if as_bytes else normalized
        if as_bytes:
            return normalized.encode("utf-8"), starts if normalized else []
        char_of = char_index(text)
        offsets, at = [], 0
        for ch in normalized:
            offsets.append(char_of[starts[at]])
            at += len(ch.encode("utf-8"))
        offsets.append(char_of[starts[-1]])
        return normalized, offsets

    def override_normalizer_spec(self, **kwargs: Any) -> None:
        """Changes the model's normalizer options (`add_dummy_prefix`, `remove_extra_whitespaces`,
        `escape_whitespaces`) for this processor."""
        model = spm_format.read_model(self.serialized_model_proto())
        for name, value in kwargs.items():
            if not hasattr(model.normalizer_spec, name) or name in ("explicit", "unknown"):
                raise RuntimeError(f"unknown normalizer spec field: {name}")
            setattr(model.normalizer_spec, name, type(getattr(model.normalizer_spec, name))(value))
            model.normalizer_spec.explicit.add(name)
        self._load(spm_format.model_bytes(model), "<model proto>")


def _as_unigram(data: bytes, where: str) -> bytes:
    """A WORD model's file as a Unigram model's, for the core to hold its vocabulary."""
    model = spm_format.read_model(data)
    model.trainer_spec.model_type = spm_format.ModelType.UNIGRAM
    return spm_format.model_bytes(model)


def _word_ids(core: _core.CoreTokenizer) -> dict[str, int]:
    """A WORD model's words: the pieces that text can hold (not control, unknown, unused or
    byte pieces), by their strings; the first id of a string wins."""
    words: dict[str, int] = {}
    for i in range(core.vocab_size):
        if core.token_kind(i) in ("normal", "special"):
            words.setdefault(core.token_string(i), i)
    return words


add_aliases(SentencePieceProcessor)
