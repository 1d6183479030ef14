"""The `Tokenizer` users hold: a thin typed layer over the Rust pipeline in `_core`."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import Literal, Union

from tokenmill import _core

SpecialArg = Union[Literal["all"], Collection[str]]


def _without_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8; like tiktoken, encode them as U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _token_text(token: bytes) -> str:
    """A token's bytes as text; bytes that are not UTF-8 show as `\\xNN`."""
    return token.decode("utf-8", errors="backslashreplace")


class Tokenizer:
    """A trained or loaded tokenizer: normalize → pre-tokenize → subword model → ids, and back.

    >>> tok = Tokenizer.load("tok.json")          # doctest: +SKIP
    >>> tok.decode(tok.encode("hello world"))     # doctest: +SKIP
    'hello world'
    """

    __slots__ = ("_core",)

    def __init__(self, core: _core.CoreTokenizer) -> None:
        self._core = core

    # -- files -------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Loads a file written by `save` (raises `FormatError` for anything else)."""
        return cls(_core.CoreTokenizer.load(os.fspath(path)))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the tokenizer as versioned JSON, atomically (temp file + rename)."""
        self._core.save(os.fspath(path))

    def save_vocab(self, path: str | os.PathLike[str]) -> None:
        """Writes a listing for people: one line per id with the token and the merge that made it."""
        self._core.save_vocab_listing(os.fspath(path))

    def vocab_listing(self) -> str:
        """The text `save_vocab` writes."""
        return self._core.vocab_listing()

    # -- encoding ----------------------------------------------------------------------------
    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> list[int]:
        """Encodes `text` with tiktoken's special-token rules.

        Special tokens in `allowed_special` (or all, with ``"all"``) become their ids; a special
        token in `disallowed_special` that appears in the text raises `DisallowedSpecialError`;
        with ``disallowed_special=()`` special-token text is encoded as ordinary text.

        >>> tok.encode("hi<|endoftext|>", allowed_special="all")   # doctest: +SKIP
        [5067, 0]
        """
        try:
            return self._core.encode(text, allowed_special, disallowed_special)
        except UnicodeEncodeError:
            return self._core.encode(_without_surrogates(text), allowed_special, disallowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes `text`, treating special-token text as ordinary text."""
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_without_surrogates(text))

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> list[list[int]]:
        """Encodes many texts on `num_threads` Rust threads (all cores by default), GIL released."""
        texts = list(texts)
        try:
            return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)
        except UnicodeEncodeError:
            texts = [_without_surrogates(t) for t in texts]
            return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ordinary` over many texts on Rust threads."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def tokenize(self, text: str) -> list[str]:
        """The tokens of `text` as strings (bytes that are not UTF-8 show as `\\xNN`).

        >>> tok.tokenize("lowest")   # doctest: +SKIP
        ['low', 'est</w>']
        """
        return [self.id_to_token(i) for i in self.encode(text, disallowed_special=())]

    def pre_tokenize(self, text: str) -> list[str]:
        """The pieces the pre-tokenizer cuts `text` into; merges never cross them."""
        return self._core.pre_tokenize(text)

    # -- decoding ----------------------------------------------------------------------------
    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes `ids` stand for. Raises `TokenIdError` for an id outside the vocabulary."""
        return self._core.decode_bytes(list(ids))

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """Decodes ids to text; `errors` is as for `bytes.decode` (a token boundary can split a
        UTF-8 character)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        return self._core.token_bytes(token)

    # -- vocabulary --------------------------------------------------------------------------
    def token_to_id(self, token: str | bytes) -> int | None:
        """The id of a token (ordinary or special), or None."""
        key = token.encode("utf-8") if isinstance(token, str) else bytes(token)
        return self._core.token_id(key)

    def id_to_token(self, id: int) -> str:
        """The token of an id as a string (see `tokenize`)."""
        return _token_text(self._core.token_bytes(id))

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges in rank order, as pairs of token bytes."""
        return self._core.merges()

    @property
    def vocab_size(self) -> int:
        """Number of tokens, special tokens included."""
        return self._core.vocab_size

    @property
    def n_vocab(self) -> int:
        """One past the largest token id (as in tiktoken)."""
        return self._core.n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token → id."""
        return dict(self._core.special_tokens())

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def pattern(self) -> str:
        """The pre-tokenizer: a preset name or a regex."""
        return self._core.pattern

    @property
    def normalizer(self) -> str:
        return self._core.normalizer

    @property
    def byte_level(self) -> bool:
        return self._core.byte_level

    @property
    def end_of_word_suffix(self) -> str | None:
        return self._core.end_of_word_suffix

    @property
    def unk_token(self) -> str | None:
        return self._core.unk_token

    # -- Python protocols --------------------------------------------------------------------
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_from_json, (self._core.to_json(),))

    def __repr__(self) -> str:
        kind = "byte-level" if self.byte_level else "char-level"
        return f"<tokenmill.Tokenizer {kind} BPE, {self.vocab_size} tokens, pattern={self.pattern!r}>"


def _from_json(text: str) -> Tokenizer:
    return Tokenizer(_core.CoreTokenizer.from_json(text))
