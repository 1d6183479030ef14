"""sentencepiece's many names for a few methods: `EncodeAsPieces` is `Encode(out_type=str)`,
`SampleEncodeAsIds` samples, `NBestEncodeAsPieces`, `DecodeIds`… and each under its snake_case
name too (`encode_as_pieces`).

>>> from tokenmill.sentencepiece import SentencePieceProcessor
>>> sp = SentencePieceProcessor(model_file="spm.model")
>>> sp.encode_as_pieces("hello") == sp.EncodeAsPieces("hello") == sp.encode("hello", out_type=str)
True
>>> sp.encode_as_pieces("hello")
['▁', 'he', 'll', 'o']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _add_snake_case_names(cls: type) -> None:
    """sentencepiece's methods under both names: `EncodeAsIds` and `encode_as_ids`."""
    for name in dir(cls):
        if name[0].isupper():
            snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
            snake = snake.replace("n_best", "nbest").replace("i_d", "id")
            if not hasattr(cls, snake):
                setattr(cls, snake, getattr(cls, name))


def _shortcut(out_type: object, **fixed: Any) -> Callable[..., Any]:
    def encode(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type, *args, **{**fixed, **kwargs})

    return encode


def _sample_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(
        self: Any,
        input: Any,
        nbest_size: int | None = None,
        alpha: float | None = None,
        **kwargs: Any,
    ) -> Any:  # noqa: E501
        return self.Encode(input, out_type, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    return encode


def _nbest_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(self: Any, input: Any, nbest_size: int | None = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, out_type, nbest_size=nbest_size, **kwargs)

    return encode


def _score_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(
        self: Any,
        input: Any,
        num_samples: int | None = None,
        alpha: float | None = None,
        **kwargs: Any,
    ) -> Any:  # noqa: E501
        return self.SampleEncodeAndScore(input, out_type, num_samples=num_samples, alpha=alpha, **kwargs)

    return encode


def _decode_shortcut(out_type: object) -> Callable[..., Any]:
    def decode(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        if out_type is not str and not args:
            kwargs.setdefault("out_type", out_type)
        return self.Decode(input, *args, **kwargs)

    return decode


def _parallel_shortcut(out_type: object) -> Callable[..., Any]:
    def encode(self: Any, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input, return_type=out_type, **kwargs)

    return encode


_SUFFIXES: dict[str, object] = {
    "Pieces": str,
    "Ids": int,
    "SerializedProto": "serialized_proto",
    "ImmutableProto": "immutable_proto",
    "Numpy": "numpy",
}


def add_aliases(cls: type) -> None:
    """Gives the processor class every other name of its methods."""
    for suffix, out_type in _SUFFIXES.items():
        setattr(cls, f"EncodeAs{suffix}", _shortcut(out_type))
        setattr(cls, f"SampleEncodeAs{suffix}", _sample_shortcut(out_type))
        setattr(cls, f"NBestEncodeAs{suffix}", _nbest_shortcut(out_type))
        setattr(cls, f"SampleEncodeAndScoreAs{suffix}", _score_shortcut(out_type))
    for suffix in ("Pieces", "Ids", "Numpy"):
        setattr(cls, f"ParallelEncodeAs{suffix}", _parallel_shortcut(_SUFFIXES[suffix]))
    cls.EncodeAsOffsetMapping = _shortcut("offset_mapping")  # type: ignore[attr-defined]
    for kind in ("Pieces", "Ids"):
        setattr(cls, f"Decode{kind}", _decode_shortcut(str))
        setattr(cls, f"Decode{kind}AsSerializedProto", _decode_shortcut("serialized_proto"))
        setattr(cls, f"Decode{kind}AsImmutableProto", _decode_shortcut("immutable_proto"))
    cls.Tokenize = cls.Encode  # type: ignore[attr-defined]
    cls.Detokenize = cls.Decode  # type: ignore[attr-defined]
    _add_snake_case_names(cls)
    cls.encode = cls.Encode  # type: ignore[attr-defined]
    cls.decode = cls.Decode  # type: ignore[attr-defined]
    cls.normalize = cls.Normalize  # type: ignore[attr-defined]
