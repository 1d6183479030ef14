"""The `Tokenizer` users hold: a thin typed layer over the Rust pipeline in `_core`."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union

from tokenmill import _checks, _core
from tokenmill._files import remove_stale_temp_files

if TYPE_CHECKING:
    import numpy as np

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
        remove_stale_temp_files(path)  # left by killed saves (Rust's writer does not look)
        self._core.save(os.fspath(path))

    def save_vocab(self, path: str | os.PathLike[str]) -> None:
        """Writes a listing for people: one line per id with the token and the merge that made it."""
        self._core.save_vocab_listing(os.fspath(path))

    def vocab_listing(self) -> str:
        """The text `save_vocab` writes."""
        return self._core.vocab_listing()

    # -- other libraries' files ---------------------------------------------------------------
    @classmethod
    def from_tiktoken(
        cls,
        path_or_ranks: str | os.PathLike[str] | Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Tokenizer:
        """Loads a tiktoken vocabulary: a `.tiktoken` file (or `.tiktoken.gz`) or a bytes → rank
        mapping. `pattern` is a preset (`gpt2`/`r50k_base`, `p50k_base`, `cl100k_base`,
        `o200k_base`, or `cl100k`, `o200k`) or a regex. With `special_tokens=None`, an OpenAI
        encoding name brings that encoding's special tokens.

        >>> enc = Tokenizer.from_tiktoken("cl100k_base.tiktoken", pattern="cl100k_base")  # doctest: +SKIP
        >>> enc.encode("hello world")                                                      # doctest: +SKIP
        [15339, 1917]
        """
        from tokenmill.formats import tiktoken as tt

        ranks = path_or_ranks if isinstance(path_or_ranks, Mapping) else tt.read_ranks(path_or_ranks)
        if special_tokens is None:
            special_tokens = tt.OPENAI_SPECIAL_TOKENS.get(pattern, {})
        core = _core.CoreTokenizer.from_parts(
            tokens=tt.tokens_by_id(ranks),
            merges=None,
            special_tokens=list(special_tokens.items()),
            pattern=pattern,
            keep_gaps=False,
            normalizer="none",
            byte_level=True,
            end_of_word_suffix=None,
            unk_token=None,
            whole_piece_first=True,
        )
        return cls(core)

    def save_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Writes the ordinary tokens as a `.tiktoken` file (rank = id). Special tokens and the
        pattern are not part of that format: pass them to `from_tiktoken` when loading."""
        from tokenmill.formats import tiktoken as tt

        if not self.byte_level:
            raise _core.ConfigError("the tiktoken format holds byte-level BPE only")
        specials = set(self.special_tokens.values())
        tt.write_ranks(path, [(i, self._core.token_bytes(i)) for i in self._ordinary_ids(specials)])

    @classmethod
    def from_huggingface(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Loads a byte-level BPE `tokenizer.json` (GPT-2 style vocabulary and merges, `Split`
        and `ByteLevel` pre-tokenizers, added tokens). Added tokens become special tokens: pass
        ``allowed_special="all"`` to `encode` to match them as Hugging Face does."""
        from tokenmill.formats import huggingface as hf

        return cls._from_parts(hf.read_tokenizer_json(path))

    def to_huggingface(self, path: str | os.PathLike[str]) -> None:
        """Writes a `tokenizer.json` that `tokenizers.Tokenizer.from_file` (and
        `transformers.PreTrainedTokenizerFast`) load and encode identically."""
        from tokenmill.formats import huggingface as hf

        hf.write_tokenizer_json(path, self._core)

    @classmethod
    def from_gpt2(cls, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> Tokenizer:
        """Loads GPT-2's `vocab.json` + `merges.txt` pair."""
        from tokenmill.formats import huggingface as hf

        return cls._from_parts(hf.read_gpt2_files(vocab_path, merges_path))

    @classmethod
    def _from_parts(cls, parts: dict[str, Any]) -> Tokenizer:
        return cls(_core.CoreTokenizer.from_parts(byte_level=True, end_of_word_suffix=None, unk_token=None, **parts))

    def _ordinary_ids(self, specials: set[int]) -> list[int]:
        ids = []
        for i in range(self.n_vocab):
            if i in specials:
                continue
            try:
                self._core.token_bytes(i)
            except _core.TokenIdError:
                continue
            ids.append(i)
        return ids

    def truncated(self, vocab_size: int) -> Tokenizer:
        """The tokenizer that training with this smaller `vocab_size` would have given: merges
        form a prefix, so it keeps the special tokens, the base alphabet and the first merges.

        >>> small = tok.truncated(1000)   # doctest: +SKIP
        """
        specials = self.special_tokens
        special_ids = set(specials.values())
        ordinary = self._ordinary_ids(special_ids)
        keep_count = vocab_size - len(specials)
        if self._core.is_rank_based:
            base = sum(1 for i in ordinary if len(self._core.token_bytes(i)) == 1)
        else:
            made = {
                self._core.token_id(self._core.token_bytes(a) + self._core.token_bytes(b))
                for a, b in self._core.merge_ids()
            }
            base = sum(1 for i in ordinary if i not in made)
        if not isinstance(vocab_size, int) or keep_count < max(base, 1) or vocab_size > self.vocab_size:
            raise _core.ConfigError(
                f"vocab_size must be between {len(specials) + max(base, 1)} and {self.vocab_size}, got {vocab_size!r}"
            )
        kept = set(ordinary[:keep_count])
        tokens: list[bytes | None] = [None] * (max(kept) + 1)
        for i in kept:
            tokens[i] = self._core.token_bytes(i)
        merges: list[tuple[int, int]] | None = None
        if not self._core.is_rank_based:
            merges = []
            for a, b in self._core.merge_ids():
                result = self._core.token_id(self._core.token_bytes(a) + self._core.token_bytes(b))
                if result not in kept:
                    break
                merges.append((a, b))
        core = _core.CoreTokenizer.from_parts(
            tokens=tokens,
            merges=merges,
            special_tokens=list(specials.items()),
            pattern=self.pattern,
            keep_gaps=self._core.keeps_gaps,
            normalizer=self.normalizer,
            byte_level=self.byte_level,
            end_of_word_suffix=self.end_of_word_suffix,
            unk_token=self.unk_token,
            whole_piece_first=self._core.whole_piece_first,
        )
        return type(self)(core)

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
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
            raise _core.ConfigError(f"texts must be a sequence of str, got {type(texts).__name__}")
        texts = list(texts)
        _checks.count("num_threads", num_threads, minimum=1, optional=True)
        try:
            return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)
        except UnicodeEncodeError:
            texts = [_without_surrogates(t) for t in texts]
            return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ordinary` over many texts on Rust threads."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> np.ndarray[Any, np.dtype[np.uint32]]:
        """`encode` into a numpy `uint32` array, with no Python list in between (needs numpy)."""
        import numpy as np

        try:
            raw = self._core.encode_to_bytes(text, allowed_special, disallowed_special)
        except UnicodeEncodeError:
            raw = self._core.encode_to_bytes(_without_surrogates(text), allowed_special, disallowed_special)
        return np.frombuffer(raw, dtype="<u4")

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
        return self.decode_bytes(ids).decode("utf-8", errors=_checks.decode_errors(errors))

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        return self._core.token_bytes(token)

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""
        return [self._core.token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The decoded text and, for each token, the index of the character where it starts.
        A token that starts inside a character (a UTF-8 continuation byte) is given the index
        of that character."""
        parts = self.decode_tokens_bytes(tokens)
        offsets, chars = [], 0
        for part in parts:
            starts_inside = bool(part) and 0x80 <= part[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(1 for b in part if not 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

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
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        eot = self.special_tokens.get("<|endoftext|>")
        if eot is None:
            raise _core.ConfigError("this tokenizer has no <|endoftext|> special token")
        return eot

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted."""
        return self._core.token_byte_values()

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
