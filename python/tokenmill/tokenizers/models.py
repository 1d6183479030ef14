"""`tokenmill.tokenizers.models`: Hugging Face's models (BPE, WordPiece, WordLevel, Unigram), each
its `tokenizer.json` node (vocabulary included), run by tokenmill's core — alone through
`tokenize`, or as a `Tokenizer`'s model.

>>> m = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
>>> [(t.id, t.value, t.offsets) for t in m.tokenize("abab")]
[(2, 'ab', (0, 2)), (2, 'ab', (2, 4))]
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, ClassVar

from tokenmill import _core
from tokenmill.tokenizers._component import Component


class Token:
    """A token a model gives: its id, its string and its (start, end) in the text."""

    __slots__ = ("id", "offsets", "value")

    def __init__(self, id: int, value: str, offsets: tuple[int, int]) -> None:
        self.id, self.value, self.offsets = id, value, offsets

    def as_tuple(self) -> tuple[int, str, tuple[int, int]]:
        return self.id, self.value, self.offsets

    def __repr__(self) -> str:
        return f"Token(id={self.id}, value={self.value!r}, offsets={self.offsets})"


class Model(Component):
    """The base of every model."""

    _family = "model"

    def _alone(self) -> Any:
        """A `tokenmill.tokenizers.Tokenizer` of this model alone (made once per node state)."""
        from tokenmill.tokenizers.tokenizer import Tokenizer

        key = json.dumps(self._node, sort_keys=True, ensure_ascii=False)
        cached = self.__dict__.get("_alone_cache")
        if cached is None or cached[0] != key:
            cached = (key, Tokenizer(self._copy()))
            object.__setattr__(self, "_alone_cache", cached)
        return cached[1]

    def _copy(self) -> Model:
        made = object.__new__(type(self))
        made._adopt(json.loads(json.dumps(self._node)))
        return made

    def tokenize(self, sequence: str) -> list[Token]:
        """The tokens of `sequence` by this model alone (no normalizer or pre-tokenizer)."""
        encoding = self._alone().encode(sequence, add_special_tokens=False)
        return [Token(i, t, o) for i, t, o in zip(encoding.ids, encoding.tokens, encoding.offsets, strict=True)]

    def token_to_id(self, token: str) -> int | None:
        return self._vocab().get(token)

    def id_to_token(self, id: int) -> str | None:
        for token, i in self._vocab().items():
            if i == id:
                return token
        return None

    def _vocab(self) -> dict[str, int]:
        vocab = self._node.get("vocab") or {}
        if isinstance(vocab, list):  # Unigram: [piece, score] in id order
            return {entry[0]: i for i, entry in enumerate(vocab)}
        return dict(vocab)

    def get_trainer(self) -> Any:
        """A trainer for this kind of model, with default settings."""
        from tokenmill.tokenizers import trainers

        return {
            "BPE": trainers.BpeTrainer,
            "WordPiece": trainers.WordPieceTrainer,
            "WordLevel": trainers.WordLevelTrainer,
            "Unigram": trainers.UnigramTrainer,
        }[self._type]()

    def save(self, folder: str | os.PathLike[str], prefix: str | None = None) -> list[str]:
        """Writes the model's files (as `tokenizers` names them) into `folder`; returns their paths."""
        directory = Path(folder)
        if not directory.is_dir():
            raise _core.ConfigError(f"{directory}: not a directory")
        return [str(p) for p in self._save(directory, f"{prefix}-" if prefix else "")]

    def _save(self, directory: Path, prefix: str) -> list[Path]:
        vocab = directory / f"{prefix}vocab.json"
        vocab.write_text(json.dumps(self._vocab(), ensure_ascii=False), encoding="utf-8")
        return [vocab]


def _read_json_vocab(path: str | os.PathLike[str]) -> dict[str, int]:
    try:
        vocab = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise _core.CorpusError(f"{path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise _core.FormatError(f"{path}: not a JSON vocabulary: {e}") from None
    if not isinstance(vocab, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()):
        raise _core.FormatError(f"{path}: a vocabulary is a JSON object of token → id")
    return vocab


def _vocab_arg(vocab: Any, name: str) -> dict[str, int]:
    if vocab is None:
        return {}
    if not isinstance(vocab, dict):
        raise TypeError(f"{name} vocab must be a dict of token → id")
    return {str(k): int(v) for k, v in vocab.items()}


class BPE(Model):
    """Byte-pair encoding: `vocab` (token → id) and `merges` (pairs, in order)."""

    _type = "BPE"
    _fields: ClassVar[dict[str, str]] = {
        k: k
        for k in (
            "dropout",
            "unk_token",
            "continuing_subword_prefix",
            "end_of_word_suffix",
            "fuse_unk",
            "byte_fallback",
            "ignore_merges",
        )
    }

    def __new__(
        cls,
        vocab: dict[str, int] | None = None,
        merges: list[tuple[str, str]] | None = None,
        cache_capacity: int | None = None,
        dropout: float | None = None,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool | None = None,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ) -> BPE:
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise _core.ConfigError(f"dropout must be between 0 and 1, not {dropout}")
        if isinstance(vocab, (str, os.PathLike)) and isinstance(merges, (str, os.PathLike)):
            vocab, merges = BPE.read_file(vocab, merges)  # paths, as tokenizers still takes them
        pairs = []
        for merge in merges or []:
            if isinstance(merge, str):
                merge = tuple(merge.split(" ", 1))
            if not (isinstance(merge, (tuple, list)) and len(merge) == 2):
                raise TypeError(f"a merge is a pair of strings, not {merge!r}")
            pairs.append([str(merge[0]), str(merge[1])])
        node = {
            "type": "BPE",
            "dropout": dropout,
            "unk_token": unk_token,
            "continuing_subword_prefix": continuing_subword_prefix,
            "end_of_word_suffix": end_of_word_suffix,
            "fuse_unk": bool(fuse_unk),
            "byte_fallback": bool(byte_fallback),
            "ignore_merges": bool(ignore_merges),
            "vocab": _vocab_arg(vocab, "BPE"),
            "merges": pairs,
        }
        return cls._make(node)  # type: ignore[no-any-return]

    @staticmethod
    def read_file(
        vocab: str | os.PathLike[str], merges: str | os.PathLike[str]
    ) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """(vocab, merges) from GPT-2's `vocab.json` and `merges.txt`."""
        try:
            lines = Path(merges).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise _core.CorpusError(f"{merges}: {e.strerror}") from None
        pairs: list[tuple[str, str]] = []
        for n, line in enumerate(lines, 1):
            if (n == 1 and line.startswith("#version")) or not line.strip():
                continue
            parts = line.split(" ")
            if len(parts) != 2:
                raise _core.FormatError(f"{merges}:{n}: a merge is two tokens separated by a space, not {line!r:.80}")
            pairs.append((parts[0], parts[1]))
        return _read_json_vocab(vocab), pairs

    @classmethod
    def from_file(cls, vocab: str | os.PathLike[str], merges: str | os.PathLike[str], **kwargs: Any) -> BPE:
        """A BPE model from GPT-2's `vocab.json` and `merges.txt`."""
        v, m = cls.read_file(vocab, merges)
        return cls(v, m, **kwargs)

    def _save(self, directory: Path, prefix: str) -> list[Path]:
        (vocab,) = super()._save(directory, prefix)
        merges = directory / f"{prefix}merges.txt"
        body = "".join(f"{a} {b}\n" for a, b in (_pair(m) for m in self._node.get("merges", [])))
        merges.write_text("#version: 0.2\n" + body, encoding="utf-8")
        return [vocab, merges]


def _pair(merge: Any) -> tuple[str, str]:
    if isinstance(merge, str):
        a, b = merge.split(" ", 1)
        return a, b
    return merge[0], merge[1]


class WordPiece(Model):
    """WordPiece: greedy longest match from the vocabulary, `##` (the prefix) inside words."""

    _type = "WordPiece"
    _fields: ClassVar[dict[str, str]] = {
        k: k for k in ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word")
    }

    def __new__(
        cls,
        vocab: dict[str, int] | None = None,
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 100,
        continuing_subword_prefix: str = "##",
    ) -> WordPiece:
        if isinstance(vocab, (str, os.PathLike)):
            vocab = WordPiece.read_file(vocab)  # a path, as tokenizers still takes one
        node = {
            "type": "WordPiece",
            "unk_token": unk_token,
            "continuing_subword_prefix": continuing_subword_prefix,
            "max_input_chars_per_word": max_input_chars_per_word,
            "vocab": _vocab_arg(vocab, "WordPiece"),
        }
        return cls._make(node)  # type: ignore[no-any-return]

    @staticmethod
    def read_file(vocab: str | os.PathLike[str]) -> dict[str, int]:
        """BERT's `vocab.txt`: one token per line, its id the line number from 0."""
        try:
            lines = Path(vocab).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise _core.CorpusError(f"{vocab}: {e.strerror}") from None
        out: dict[str, int] = {}
        for line in lines:
            out.setdefault(line.rstrip("\r"), len(out))
        return out

    @classmethod
    def from_file(cls, vocab: str | os.PathLike[str], **kwargs: Any) -> WordPiece:
        return cls(cls.read_file(vocab), **kwargs)

    def _save(self, directory: Path, prefix: str) -> list[Path]:
        path = directory / f"{prefix}vocab.txt"
        tokens = sorted(self._vocab().items(), key=lambda item: item[1])
        path.write_text("".join(f"{t}\n" for t, _ in tokens), encoding="utf-8")
        return [path]


class WordLevel(Model):
    """One id per word the pre-tokenizer cuts; others are `unk_token`."""

    _type = "WordLevel"
    _fields: ClassVar[dict[str, str]] = {"unk_token": "unk_token"}

    def __new__(cls, vocab: dict[str, int] | None = None, unk_token: str | None = None) -> WordLevel:
        if isinstance(vocab, (str, os.PathLike)):
            vocab = WordLevel.read_file(vocab)  # a path, as tokenizers still takes one
        node = {"type": "WordLevel", "vocab": _vocab_arg(vocab, "WordLevel"), "unk_token": unk_token or "<unk>"}
        return cls._make(node)  # type: ignore[no-any-return]

    @staticmethod
    def read_file(vocab: str | os.PathLike[str]) -> dict[str, int]:
        return _read_json_vocab(vocab)

    @classmethod
    def from_file(cls, vocab: str | os.PathLike[str], unk_token: str | None = None) -> WordLevel:
        return cls(cls.read_file(vocab), unk_token)


class Unigram(Model):
    """Unigram: pieces with log-probabilities (`vocab`: (piece, score) pairs, the id their
    order), the most likely segmentation (Viterbi)."""

    _type = "Unigram"

    def __new__(
        cls,
        vocab: list[tuple[str, float]] | None = None,
        unk_id: int | None = None,
        byte_fallback: bool | None = None,
        alpha: float | None = None,
        nbest_size: int | None = None,
    ) -> Unigram:
        if vocab is None:
            pieces, unk = [["<unk>", 0.0]], 0
        else:
            pieces = [[str(p), float(s)] for p, s in vocab]
            unk = unk_id
            if unk is not None and not 0 <= unk < len(pieces):
                raise _core.ConfigError(f"unk_id {unk} is outside the vocabulary of {len(pieces)} pieces")
        node = {"type": "Unigram", "unk_id": unk, "vocab": pieces, "byte_fallback": bool(byte_fallback)}
        made = cls._make(node)
        made.alpha, made.nbest_size = alpha, nbest_size
        return made  # type: ignore[no-any-return]

    # Sampling settings, kept on the model's node (a tokenizer sharing the node sees a change)
    # and, as tokenizers keeps them, out of the file. With `alpha` 0 (or None) the cut is the
    # best one; any other draws a cut on every encode, with probability proportional to
    # exp(alpha × score), among the `nbest_size` best cuts when that is above 0.
    @property
    def alpha(self) -> float | None:
        """Subword regularization's smoothing (None: the best cut).

        >>> Unigram([("<unk>", 0.0), ("a", -1.0)], 0, alpha=0.1).alpha
        0.1
        """
        return self._node.get("alpha")  # type: ignore[no-any-return]

    @alpha.setter
    def alpha(self, value: float | None) -> None:
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise _core.ConfigError(f"alpha must be a finite number >= 0, not {value!r}")
        self._set_sampling("alpha", None if value is None else float(value))

    @property
    def nbest_size(self) -> int | None:
        """How many best cuts sampling draws from (0 or None: all; unused without `alpha`)."""
        return self._node.get("nbest_size")  # type: ignore[no-any-return]

    @nbest_size.setter
    def nbest_size(self, value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise _core.ConfigError(f"nbest_size must be an integer >= 0, not {value!r}")
        self._set_sampling("nbest_size", value)

    def __getstate__(self) -> str:
        # As tokenizers serializes the model: without its sampling settings.
        return json.dumps(without_sampling(self._node), ensure_ascii=False)

    def _set_sampling(self, key: str, value: float | int | None) -> None:
        if value is None:
            self._node.pop(key, None)
        else:
            self._node[key] = value
        self._changed()

    def _save(self, directory: Path, prefix: str) -> list[Path]:
        path = directory / f"{prefix}unigram.json"
        node = {"type": "Unigram", **without_sampling(self._node)}  # sampling stays out, as in tokenizers
        path.write_text(json.dumps(node, ensure_ascii=False), encoding="utf-8")
        return [path]


# A Unigram model's sampling settings, which tokenizers keeps on the model and out of the file.
SAMPLING = ("alpha", "nbest_size")


def without_sampling(node: dict[str, Any]) -> dict[str, Any]:
    """A model node without its sampling settings (as tokenizers writes the model)."""
    return {k: v for k, v in node.items() if k not in SAMPLING}


__all__ = ["BPE", "Model", "Token", "Unigram", "WordLevel", "WordPiece"]
