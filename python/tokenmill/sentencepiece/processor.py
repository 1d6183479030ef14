"""`SentencePieceProcessor` on tokenmill's encoder: sentencepiece's class, its methods under both
their names (`EncodeAsIds`, `encode_as_ids`), its arguments, results and exceptions.

>>> sp = SentencePieceProcessor(model_file="spm.model")      # doctest: +SKIP
>>> sp.encode("hello world", out_type=str)                   # doctest: +SKIP
['▁he', 'll', 'o', '▁world']

Ids come from tokenmill's encoder, which equals sentencepiece's on every `.model` file;
pieces, protos, n-best lists and samples are built from the cut with each piece's place in
the text (`CoreTokenizer.best_pieces` and friends). Sampling draws its seeds from this module's
generator (`set_random_generator_seed`).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable
from typing import Any

from tokenmill import _checks, _core
from tokenmill.formats import sentencepiece as spm_format
from tokenmill.sentencepiece.proto import (
    ImmutableNBestSentencePieceText,
    ImmutableSentencePiece,
    ImmutableSentencePieceText,
)
from tokenmill.tokenizer import Tokenizer

_random = random.Random()

_PROTO_TYPES = ("serialized_proto", "immutable_proto")
# Output types: sentencepiece 0.2.1's (`out_type`) and 0.2.3's (`return_type`: bytes, NumPy
# arrays, offset mappings).
_ENCODE_TYPES = (int, str, bytes, *_PROTO_TYPES, "numpy", "offset_mapping")


class UnsupportedTypeError(RuntimeError, ValueError):
    """An output type or sampling argument sentencepiece refuses: 0.2.1 raised RuntimeError,
    0.2.3 ValueError; this is both."""


def _resolve(return_type: object, out_type: object, default: object) -> Any:
    """`out_type` (0.2.1's name) or `return_type` (0.2.3's), not both; `default` for neither."""
    if out_type is not None and return_type is not None:
        raise ValueError("Cannot specify both out_type and return_type. Use return_type instead.")
    chosen = out_type if out_type is not None else return_type
    return default if chosen is None else chosen


# A cut's pieces from the core: (id, normalized text, start, end) with character offsets.
_Piece = tuple[int, str, int, int]


def set_random_generator_seed(seed: int) -> None:
    """Seeds the generator sampling draws from, so that samples repeat."""
    _random.seed(seed)


def _seed() -> int:
    return _random.getrandbits(64)


def _text(value: object) -> str:
    if isinstance(value, str):
        return _checks.without_surrogates(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    raise TypeError("not a string")


def _is_batch(value: object) -> bool:
    return isinstance(value, (list, tuple))


class SentencePieceProcessor:
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
        self._out_type = _resolve(return_type, out_type, int)
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
            raise UnsupportedTypeError("model_file and model_proto must be exclusive.")
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
        core = _core.CoreTokenizer.from_sentencepiece(data, where)
        self._tok = Tokenizer(core)
        self._data = data
        self._specs = spm_format.read_specs(data, where)
        self._unigram = core.model_type == "unigram"
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

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_tok", None)
        state.pop("_piece_list", None)
        state.pop("_ids_of", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tok = None
        if state.get("_data") is not None:
            self._load(state["_data"], "<model proto>")

    # -- the vocabulary ------------------------------------------------------------------------
    def _pieces(self) -> list[str]:
        if self._piece_list is None:
            spell = self._core.token_string
            self._piece_list = [spell(i) for i in range(self._size)]
        return self._piece_list

    def GetPieceSize(self) -> int:
        return self._core.vocab_size

    def _check_id(self, id: object) -> int:
        if isinstance(id, bool) or not isinstance(id, int):
            raise TypeError("piece id must be an int")
        if not 0 <= id < self._size:
            raise IndexError("piece id is out of range.")
        return id

    def _by_id(self, arg: object, f: Callable[[int], Any]) -> Any:
        if _is_batch(arg):
            return [f(self._check_id(i)) for i in arg]  # type: ignore[union-attr]
        return f(self._check_id(arg))

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

        def one(piece: object) -> int:
            if isinstance(piece, bytes):
                piece = piece.decode("utf-8", errors="replace")
            if not isinstance(piece, str):
                raise TypeError("not a string")
            return ids.get(piece, self._unk)

        return [one(p) for p in arg] if _is_batch(arg) else one(arg)  # type: ignore[union-attr]

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
        out_type = _resolve(return_type, out_type, self._out_type)
        opts = self._options(add_bos, add_eos, reverse, emit_unk_piece)
        sampling = self._enable_sampling if enable_sampling is None else enable_sampling
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        alpha = self._alpha if alpha is None else alpha
        if out_type not in _ENCODE_TYPES:
            raise UnsupportedTypeError(f"unknown out_type={out_type}")
        if return_bytes is not None and out_type != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        _refuse_options(out_type, opts)
        if sampling:
            self._check_sampling(nbest_size, alpha)

        def one(text: object) -> Any:
            t = _text(text)
            as_bytes = isinstance(text, (bytes, bytearray)) if return_bytes is None else return_bytes
            if sampling:
                return self._finish(t, self._sampled(t, nbest_size, alpha), out_type, as_bytes=as_bytes, **opts)
            if out_type in (int, "numpy"):
                return self._finish(t, None, out_type, ids=self._core.encode_ordinary(t), **opts)
            return self._finish(t, self._core.best_pieces(t), out_type, as_bytes=as_bytes, **opts)

        if hasattr(input, "tolist") and not isinstance(input, (str, bytes)):
            input = input.tolist()
        if _is_batch(input):
            if out_type in (int, "numpy") and not sampling:
                texts = [_text(t) for t in input]
                threads = None if num_threads is None or num_threads < 0 else max(1, num_threads)
                self._core  # noqa: B018 - raises when nothing is loaded
                ids = self._tok.encode_ordinary_batch(texts, num_threads=threads)  # type: ignore[union-attr]
                return [self._finish("", None, out_type, ids=x, **opts) for x in ids]
            return [one(t) for t in input]
        return one(input)

    def _check_sampling(self, nbest_size: int, alpha: float) -> None:
        if self._unigram and nbest_size in (0, 1) or alpha is None:
            raise UnsupportedTypeError(
                'When enable_sampling is True, We must specify "nbest_size > 1" or "nbest_size = -1", and "alpha".'
            )
        if not self._unigram and not 0.0 <= alpha <= 1.0:
            raise RuntimeError(f"alpha must be in [0, 1] for BPE-dropout, got {alpha}")

    def _sampled(self, text: str, nbest_size: int, alpha: float) -> list[_Piece]:
        core = self._core
        if not self._unigram:
            ids = core.encode_sampled(text, float(alpha), _seed())
            return self._place(text, ids)
        if nbest_size < 0:
            return core.sampled_pieces(text, float(alpha), _seed())[0]
        cuts = core.nbest_pieces(text, nbest_size)
        top = max(score for _, score in cuts)
        weights = [math.exp(alpha * (score - top)) for _, score in cuts]
        return _random.choices([pieces for pieces, _ in cuts], weights)[0]

    def _place(self, text: str, ids: list[int]) -> list[_Piece]:
        """Pieces for ids that spell the normalized text in order (a BPE model's cut): each
        known piece covers its own text, each byte piece one byte, an unknown piece the rest up
        to the next piece's text."""
        normalized, starts = self._core.normalize_aligned(text)
        raw = normalized.encode("utf-8")
        byte_to_char = _char_index(text)
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
            raise RuntimeError(f"{which}_id is not defined.")
        return found

    def _finish(
        self,
        text: str,
        pieces: list[_Piece] | None,
        out_type: object,
        ids: list[int] | None = None,
        as_bytes: bool = False,
        **opts: bool,
    ) -> Any:
        """A cut as `out_type` asks: `pieces` with their places, or only `ids`."""
        if out_type in (int, "numpy"):
            ids = self._with_options(ids if pieces is None else [p[0] for p in pieces], **opts)
            if out_type == "numpy":
                import numpy as np

                array = np.asarray(ids, dtype=np.int32)
                array.flags.writeable = False  # as sentencepiece's, a view of its result
                return array
            return ids
        assert pieces is not None
        if out_type in (str, bytes):
            spelled = [self._spell(p, opts["emit_unk_piece"]) for p in pieces]
            spelled = self._with_options(spelled, pieces=True, **opts)
            return [p.encode("utf-8") for p in spelled] if out_type is bytes else spelled
        if out_type == "offset_mapping":
            offsets = [(p[2], p[3]) for p in pieces]
            spelled = [self._spell(p, False) for p in pieces]
            if as_bytes:
                at = _byte_offsets(text)
                offsets = [(at[a], at[b]) for a, b in offsets]
                return {
                    "ids": [p[0] for p in pieces],
                    "pieces": [x.encode("utf-8") for x in spelled],
                    "offsets": offsets,
                }
            return {"ids": [p[0] for p in pieces], "pieces": spelled, "offsets": offsets}
        proto = self._proto(text, pieces)
        return _as_asked(proto, out_type)

    def _spell(self, piece: _Piece, emit_unk_piece: bool) -> str:
        """A piece as sentencepiece spells it: an unknown piece as the text it stands for, and
        with `emit_unk_piece` as the unknown piece — unless that text spells a piece of the
        vocabulary (a control piece's `<s>`): sentencepiece 0.2.3 replaces by string."""
        i, normalized = piece[0], piece[1]
        if i != self._unk:
            return self._pieces()[i]
        if emit_unk_piece and self._piece_ids().get(normalized, self._unk) == self._unk:
            return self._pieces()[i]
        return normalized

    def _proto(self, text: str, pieces: list[_Piece], score: float | None = None) -> ImmutableSentencePieceText:
        offsets = _byte_offsets(text)
        kind = self._core.token_kind
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
                    partial=p[2] == p[3] and kind(p[0]) == "byte",
                )
                for p in pieces
            ],
            score,
        )

    def NBestEncode(
        self,
        input: Any,
        out_type: type | str | None = None,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        nbest_size: int | None = None,
        return_type: type | str | None = None,
    ) -> Any:
        """The `nbest_size` best cuts of `input` (Unigram models), best first."""
        out_type = _resolve(return_type, out_type, self._out_type)
        opts = self._options(add_bos, add_eos, reverse, emit_unk_piece)
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        if out_type not in _ENCODE_TYPES or out_type == "offset_mapping":
            raise UnsupportedTypeError(f"unknown out_type={out_type}")
        _refuse_options(out_type, opts)
        self._need_unigram("n-best encoding")

        def one(text: object) -> Any:
            t = _text(text)
            cuts = self._core.nbest_pieces(t, max(1, nbest_size))
            if out_type in _PROTO_TYPES:
                proto = ImmutableNBestSentencePieceText([self._proto(t, pieces, score) for pieces, score in cuts])
                return _as_asked(proto, out_type)
            return [self._finish(t, pieces, out_type, **opts) for pieces, _ in cuts]

        return [one(t) for t in input] if _is_batch(input) else one(input)

    def _need_unigram(self, what: str) -> None:
        self._core  # noqa: B018 - raises when nothing is loaded
        if not self._unigram:
            raise RuntimeError(f"{what} needs a Unigram model; this one is {self._core.model_type}")

    def SampleEncodeAndScore(
        self,
        input: Any,
        out_type: type | str | None = None,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        num_samples: int | None = None,
        alpha: float | None = None,
        wor: bool | None = None,
        include_best: bool | None = None,
        return_type: type | str | None = None,
    ) -> Any:
        """`num_samples` cuts of `input` (Unigram), each with a score: drawn with replacement,
        each cut's log-probability; without (`wor=True`, Gumbel top-k), the log of each cut's
        probability of being among those drawn. `include_best` puts the best cut first."""
        out_type = _resolve(return_type, out_type, self._out_type)
        opts = self._options(add_bos, add_eos, reverse, emit_unk_piece)
        num_samples = 1 if num_samples is None else num_samples
        alpha = self._alpha if alpha is None else alpha
        if include_best and not wor:
            raise RuntimeError("include_best not supported for wor false")
        if out_type not in _ENCODE_TYPES or out_type == "offset_mapping":
            raise UnsupportedTypeError(f"unknown out_type={out_type}")
        self._need_unigram("sampling with scores")

        def one(text: object) -> Any:
            t = _text(text)
            if wor:
                drawn = self._without_replacement(t, num_samples, float(alpha), bool(include_best))
            else:
                drawn = [self._core.sampled_pieces(t, float(alpha), _seed()) for _ in range(num_samples)]
            if out_type in _PROTO_TYPES:
                proto = ImmutableNBestSentencePieceText([self._proto(t, pieces, score) for pieces, score in drawn])
                return _as_asked(proto, out_type)
            return [(self._finish(t, pieces, out_type, **opts), score) for pieces, score in drawn]

        return [one(t) for t in input] if _is_batch(input) else one(input)

    def _without_replacement(
        self, text: str, k: int, alpha: float, include_best: bool
    ) -> list[tuple[list[_Piece], float]]:
        """Gumbel top-k over the cuts: each cut's alpha × score plus Gumbel noise, the `k`
        largest kept; a kept cut's score is log(1 − exp(−exp(φ − κ))), with φ its alpha × score
        and κ the (k+1)-th largest perturbed value — the estimate of its chance of being drawn.
        The cuts are the lattice's best `_WOR_CUTS` (or fewer on long texts); a text with more
        cuts than that leaves its least likely ones out of the draw."""
        budget = max(k + 1, min(_WOR_CUTS, (1 << 24) // max(1, len(text.encode("utf-8")))))
        cuts = self._core.nbest_pieces(text, budget)
        perturbed = sorted(
            ((alpha * score - math.log(-math.log(_random.random() or 1e-300)), n) for n, (_, score) in enumerate(cuts)),
            reverse=True,
        )
        if include_best:
            perturbed = [(math.inf, 0)] + [p for p in perturbed if p[1] != 0]
        kappa = perturbed[k][0] if len(perturbed) > k else -math.inf
        out = []
        for _, n in perturbed[:k]:
            phi = alpha * cuts[n][1]
            if include_best and n == 0 or kappa == -math.inf:
                score = 0.0
            else:
                score = _log1mexp(-math.exp(phi - kappa))
            out.append((cuts[n][0], score))
        return out

    def CalculateEntropy(self, input: Any, alpha: float, num_threads: int | None = None) -> Any:
        """The entropy of the cuts sampling draws from `input` with `alpha` (Unigram)."""
        self._need_unigram("the entropy of a lattice")
        if _is_batch(input):
            return [self._core.entropy(_text(t), float(alpha)) for t in input]
        return self._core.entropy(_text(input), float(alpha))

    # -- decoding ------------------------------------------------------------------------------
    def Decode(
        self,
        input: Any,
        out_type: type | str | None = None,
        num_threads: int | None = None,
        thread_pool: object = None,
        return_type: type | str | None = None,
    ) -> Any:
        """Ids or pieces back to text (`out_type=str` or `bytes`), a proto, or the text with
        each piece's place (`"offset_mapping"`); a list of lists decodes each."""
        out_type = _resolve(return_type, out_type, str)
        if out_type not in (str, bytes, *_PROTO_TYPES, "offset_mapping"):
            raise UnsupportedTypeError("unknown output or input type")
        if hasattr(input, "tolist") and not isinstance(input, (str, bytes)):
            input = input.tolist()
        if isinstance(input, int) and not isinstance(input, bool):
            input = [input]
        if input is None:
            input = []
        if not isinstance(input, (list, tuple)):
            raise TypeError("input must be a list of ids or pieces")
        if input and all(isinstance(x, (list, tuple)) for x in input):
            return [self._decode_one(list(x), out_type) for x in input]
        return self._decode_one(list(input), out_type)

    def _decode_one(self, items: list[Any], out_type: object) -> Any:
        if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            for i in items:
                self._check_id(i)
            parts = self._core.decode_parts(items) if items else []
            pieces_text = [self._pieces()[i] for i in items]
            ids = items
        elif all(isinstance(x, (str, bytes)) for x in items):
            pieces_text = [x.decode("utf-8", errors="replace") if isinstance(x, bytes) else x for x in items]
            parts, ids = self._decode_pieces(pieces_text)
        else:
            if any(isinstance(x, (str, bytes)) for x in items):
                raise TypeError("list must contain strings")
            raise RuntimeError("unknown output or input type")
        raw = b"".join(parts)
        if out_type is bytes:
            return raw
        text = raw.decode("utf-8", errors="replace")
        if out_type is str:
            return text
        proto = self._decoded_proto(text, pieces_text, ids, parts)
        if out_type == "offset_mapping":
            return {
                "text": text,
                "ids": ids,
                "pieces": pieces_text,
                "offsets": [(p.begin, p.end) for p in proto._pieces],
            }
        return _as_asked(proto, out_type)

    def _decode_pieces(self, pieces: list[str]) -> tuple[list[bytes], list[int]]:
        """Each piece's bytes in the decoded text: pieces of the vocabulary decode as their ids
        do; a piece it lacks stands for itself, as written, in the place of an unknown piece
        (so the pieces around it decode as they would around one)."""
        ids = [self.PieceToId(p) for p in pieces]
        spelled = self._pieces()
        parts = self._core.decode_parts(ids) if ids else []
        for k, (p, i) in enumerate(zip(pieces, ids, strict=True)):
            if i == self._unk and p != spelled[i]:
                parts[k] = p.encode("utf-8")
        return parts, ids

    def _decoded_proto(
        self, text: str, pieces: list[str], ids: list[int], parts: list[bytes]
    ) -> ImmutableSentencePieceText:
        out, byte_at, char_at = [], 0, 0
        for piece, i, part in zip(pieces, ids, parts, strict=True):
            surface = part.decode("utf-8", errors="replace")
            n = len(surface)
            out.append(ImmutableSentencePiece(piece, i, surface, char_at, char_at + n, (byte_at, byte_at + len(part))))
            byte_at += len(part)
            char_at += n
        return ImmutableSentencePieceText(text, out)

    # -- normalizing ---------------------------------------------------------------------------
    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """`input` as the model's normalizer leaves it (spaces as `▁`); `with_offsets` adds, for
        each normalized character (byte, for bytes input), where it came from, and the length."""
        if _is_batch(input):
            return [self._normalize_one(x, with_offsets) for x in input]
        return self._normalize_one(input, with_offsets)

    def _normalize_one(self, value: object, with_offsets: bool | None) -> Any:
        as_bytes = isinstance(value, (bytes, bytearray))
        text = _text(value)
        normalized, starts = self._core.normalize_aligned(text)
        if not with_offsets:
            return normalized.encode("utf-8") if as_bytes else normalized
        if as_bytes:
            return normalized.encode("utf-8"), starts if normalized else []
        char_of = _char_index(text)
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


_WOR_CUTS = 1024


def _refuse_options(out_type: object, opts: dict[str, bool]) -> None:
    """Protos and offset mappings show the cut as it is: no added or reversed pieces."""
    if out_type in (*_PROTO_TYPES, "offset_mapping") and any(opts.values()):
        raise RuntimeError("Unimplemented: add_bos, add_eos, reverse, and emit_unk_piece is not supported in proto API")


def _as_asked(proto: Any, out_type: object) -> Any:
    """A proto object, or its wire bytes (with byte offsets) for ``"serialized_proto"``."""
    return proto._wire(True) if out_type == "serialized_proto" else proto


def _log1mexp(x: float) -> float:
    """log(1 − exp(x)) for x < 0, accurately on both sides."""
    return math.log(-math.expm1(x)) if x > -0.693 else math.log1p(-math.exp(x))


def _char_index(text: str) -> list[int]:
    """For each byte offset of `text` (and its end), the index of the character it falls in."""
    out = []
    for n, ch in enumerate(text):
        out.extend([n] * len(ch.encode("utf-8")))
    out.append(len(text))
    return out


def _byte_offsets(text: str) -> list[int]:
    """For each character offset of `text` (and its end), its byte offset."""
    out, at = [0], 0
    for ch in text:
        at += len(ch.encode("utf-8"))
        out.append(at)
    return out


def _add_snake_case_names(cls: type) -> None:
    """sentencepiece's methods under both names: `EncodeAsIds` and `encode_as_ids`."""
    for name in list(vars(cls)):
        if name[0].isupper():
            snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
            snake = snake.replace("n_best", "nbest").replace("i_d", "id")
            if not hasattr(cls, snake):
                setattr(cls, snake, getattr(cls, name))


def _shortcut(out_type: object, **fixed: Any) -> Callable[..., Any]:
    def encode(self: SentencePieceProcessor, input: Any, *args: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type, *args, **{**fixed, **kwargs})

    return encode


def _sample_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(
        self: SentencePieceProcessor,
        input: Any,
        nbest_size: int | None = None,
        alpha: float | None = None,
        **kwargs: Any,
    ) -> Any:  # noqa: E501
        return self.Encode(input, out_type, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    return encode


def _nbest_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(self: SentencePieceProcessor, input: Any, nbest_size: int | None = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, out_type, nbest_size=nbest_size, **kwargs)

    return encode


def _score_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(
        self: SentencePieceProcessor,
        input: Any,
        num_samples: int | None = None,
        alpha: float | None = None,
        **kwargs: Any,
    ) -> Any:  # noqa: E501
        return self.SampleEncodeAndScore(input, out_type, num_samples=num_samples, alpha=alpha, **kwargs)

    return encode


def _decode_shortcut(out_type: object) -> Callable[..., Any]:
    def decode(self: SentencePieceProcessor, input: Any, *args: Any, **kwargs: Any) -> Any:
        if out_type is not str and not args:
            kwargs.setdefault("out_type", out_type)
        return self.Decode(input, *args, **kwargs)

    return decode


_SUFFIXES: dict[str, object] = {
    "Pieces": str,
    "Ids": int,
    "SerializedProto": "serialized_proto",
    "ImmutableProto": "immutable_proto",
    "Numpy": "numpy",
}
for _suffix, _type in _SUFFIXES.items():
    setattr(SentencePieceProcessor, f"EncodeAs{_suffix}", _shortcut(_type))
    setattr(SentencePieceProcessor, f"SampleEncodeAs{_suffix}", _sample_shortcut(_type))
    setattr(SentencePieceProcessor, f"NBestEncodeAs{_suffix}", _nbest_shortcut(_type))
    setattr(SentencePieceProcessor, f"SampleEncodeAndScoreAs{_suffix}", _score_shortcut(_type))
SentencePieceProcessor.EncodeAsOffsetMapping = _shortcut("offset_mapping")  # type: ignore[attr-defined]
for _kind in ("Pieces", "Ids"):
    setattr(SentencePieceProcessor, f"Decode{_kind}", _decode_shortcut(str))
    setattr(SentencePieceProcessor, f"Decode{_kind}AsSerializedProto", _decode_shortcut("serialized_proto"))
    setattr(SentencePieceProcessor, f"Decode{_kind}AsImmutableProto", _decode_shortcut("immutable_proto"))
_add_snake_case_names(SentencePieceProcessor)
SentencePieceProcessor.encode = SentencePieceProcessor.Encode  # type: ignore[attr-defined]
SentencePieceProcessor.decode = SentencePieceProcessor.Decode  # type: ignore[attr-defined]
SentencePieceProcessor.normalize = SentencePieceProcessor.Normalize  # type: ignore[attr-defined]
