"""`Encoding`: tiktoken's class, with the same methods, arguments and results, run by tokenmill.

Each `Encoding` holds a `tokenmill.Tokenizer` built from the same ranks, regex and special
tokens. OpenAI's regexes are recognised and run by tokenmill's hand-written pre-tokenizers;
any other regex is compiled by the core as it is. What tiktoken decides in Python (the
special-token arguments) is decided here the same way; what it decides in Rust (unstable tails,
raw bytes) is rewritten here over the core's pieces.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from tokenmill import _core
from tokenmill._checks import has_surrogates, without_surrogates
from tokenmill.pretokenize_patterns import preset_for_pattern
from tokenmill.tokenizer import Tokenizer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Allowed = Literal["all"] | AbstractSet[str]
Disallowed = Literal["all"] | Collection[str]


class CheckError(_core.ConfigError, AssertionError):
    """A check that tiktoken makes with `assert` (the vocabulary size, a token's type). Both a
    tokenmill `ConfigError` and an `AssertionError`, so code written for either catches it."""


class UnknownTokenIdError(_core.TokenIdError, KeyError):
    """An id that is no token. A `KeyError` (as in tiktoken) and a tokenmill `TokenIdError`."""


class NotATokenError(_core.OutOfVocabularyError, KeyError):
    """Text or bytes that are not one token. A `KeyError` (as in tiktoken) and a tokenmill
    `OutOfVocabularyError`."""


# Rust's `char::is_whitespace` (Unicode White_Space) is Python's `str.isspace` less the four
# information separators, which Python counts as space and Unicode does not.
_NOT_WHITE_SPACE = frozenset("\x1c\x1d\x1e\x1f")


class Encoding:
    """A byte-level BPE encoding with tiktoken's interface.

    >>> enc = Encoding("tiny", pat_str=r"\\S+|\\s+", special_tokens={"<|end|>": 257},
    ...                mergeable_ranks={**{bytes([b]): b for b in range(256)}, b"ab": 256})
    >>> enc.encode("abc ab<|end|>", allowed_special="all")
    [256, 99, 32, 256, 257]
    >>> enc.decode([256, 99])
    'abc'
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        self.name = name
        self._pat_str = pat_str
        self._mergeable_ranks = mergeable_ranks
        self._special_tokens = special_tokens
        self.max_token_value = max(max(mergeable_ranks.values()), max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            count = len(mergeable_ranks) + len(special_tokens)
            if count != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise CheckError(
                    f"encoding {name!r} should have {explicit_n_vocab} tokens with ids 0 to {explicit_n_vocab - 1}; "
                    f"it has {count} tokens and its largest id is {self.max_token_value}"
                )
        self._special_token_values = set(special_tokens.values())
        # OpenAI's regexes run on the core's hand-written pre-tokenizers; others as given.
        pattern = preset_for_pattern(pat_str) or pat_str
        self._tokenizer = Tokenizer.from_tiktoken(mergeable_ranks, pattern=pattern, special_tokens=special_tokens)
        self._core = self._tokenizer._core

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # -- special-token arguments -----------------------------------------------------------------
    def _special_args(
        self, text: str, allowed_special: Allowed, disallowed_special: Disallowed | None
    ) -> tuple[Any, Any]:
        """tiktoken's rules, resolved into what the core takes (``"all"`` or sets).

        ``"all"`` allowed means every special token; ``"all"`` disallowed means every special
        token not allowed; a string that is both allowed and (explicitly) disallowed raises when
        the text holds it; disallowed strings need not be special tokens; ``()`` or `None`
        disallows nothing. The default check runs in the core; an explicit set is searched here.
        """
        allowed, disallowed, searched = self._special_sets(allowed_special, disallowed_special)
        if searched:
            _check_disallowed(text, searched)
        return allowed, disallowed

    def _special_sets(
        self, allowed_special: Allowed, disallowed_special: Disallowed | None
    ) -> tuple[Any, Any, frozenset[str]]:
        """`_special_args` without a text: the arguments for the core, and the explicitly
        disallowed strings each text must be searched for (empty when there are none)."""
        allowed_all = allowed_special == "all"
        if allowed_all:
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            if allowed_all:
                return "all", (), frozenset()
            if not allowed_special:
                return (), "all", frozenset()
            return allowed_special, self.special_tokens_set - allowed_special, frozenset()
        searched = frozenset(disallowed_special) if disallowed_special else frozenset()
        return ("all" if allowed_all else allowed_special), (), searched

    # -- encoding -------------------------------------------------------------------------------
    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes `text`, special-token text included, as ordinary text.

        >>> enc.encode_ordinary("hello world")   # cl100k_base
        [15339, 1917]
        >>> enc.encode_ordinary("<|endoftext|>") == enc.encode("<|endoftext|>", disallowed_special=())
        True
        """
        return self._tokenizer.encode_ordinary(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Allowed = set(),  # noqa: B006 (tiktoken's default, never mutated)
        disallowed_special: Disallowed = "all",
    ) -> list[int]:
        """Encodes `text`. Special-token text raises `ValueError` (`DisallowedSpecialError`)
        unless allowed (then it is the special token) or not disallowed (then it is ordinary text).

        >>> enc.encode("hello <|endoftext|>", allowed_special="all")   # cl100k_base
        [15339, 220, 100257]
        >>> enc.encode("hello <|endoftext|>", disallowed_special=())
        [15339, 83739, 8862, 728, 428, 91, 29]
        >>> enc.encode("hello <|endoftext|>")
        Traceback (most recent call last):
        ...
        tokenmill.DisallowedSpecialError: text contains the special token "<|endoftext|>", which is disallowed; ...
        """
        allowed, disallowed = self._special_args(text, allowed_special, disallowed_special)
        return self._core.encode(text, allowed, disallowed)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Allowed = set(),  # noqa: B006
        disallowed_special: Disallowed = "all",
    ) -> npt.NDArray[np.uint32]:
        """`encode` into a read-only numpy `uint32` array, with no Python list in between."""
        allowed, disallowed = self._special_args(text, allowed_special, disallowed_special)
        ids = self._core.encode_to_array(text, allowed, disallowed)
        ids.flags.writeable = False  # as tiktoken's (a view of bytes)
        return ids

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """`encode_ordinary` of each text, on up to `num_threads` Rust threads."""
        return self._tokenizer.encode_batch(text, num_threads=num_threads, disallowed_special=())

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Allowed = set(),  # noqa: B006
        disallowed_special: Disallowed = "all",
    ) -> list[list[int]]:
        """`encode` of each text, on up to `num_threads` Rust threads.

        >>> enc.encode_batch(["hello world", "goodbye world"])   # cl100k_base
        [[15339, 1917], [19045, 29474, 1917]]
        """
        texts = list(text)
        allowed, disallowed, searched = self._special_sets(allowed_special, disallowed_special)
        if searched:
            for one in texts:
                _check_disallowed(one, searched)
        if not texts:
            return []
        return self._core.encode_batch(texts, allowed, disallowed, num_threads)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Allowed = set(),  # noqa: B006
        disallowed_special: Disallowed = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The tokens of `text` that more text cannot change, and every token sequence that
        could follow them to spell the rest of `text` once more text is added.

        The last regex piece (with the whitespace-only tokens before it) is held back: its
        bytes are the unstable tail. The completions are each token that starts with the whole
        tail, and, for each cut of the tail, the encoding of its head plus each token starting
        with its rest, kept until it covers the tail.

        >>> stable, completions = enc.encode_with_unstable("hello wor")   # cl100k_base
        >>> stable, len(completions)
        ([15339], 119)
        >>> sorted(enc.decode(c) for c in completions)[:4]
        [' wor', ' worage', ' word', ' worden']
        """
        allowed, disallowed = self._special_args(text, allowed_special, disallowed_special)
        text = without_surrogates(text) if has_surrogates(text) else text
        tokens = self._core.encode(text, allowed, disallowed)
        held = self._last_piece_token_count(text, tokens)
        if held == 0:
            return tokens, []
        held = self._with_space_tokens_before(tokens, held)
        tail = self._core.decode_bytes(tokens[len(tokens) - held :])
        stable = tokens[: len(tokens) - held]
        if not tail:
            return stable, []
        # Lists, as tiktoken gives them (its set's order is arbitrary; these are sorted).
        return stable, [list(c) for c in sorted(self._completions(tail))]

    def _completions(self, tail: bytes) -> set[tuple[int, ...]]:
        values = self._sorted_token_bytes
        completions = {(self._mergeable_ranks[t],) for t in _starting_with(values, tail)}
        # Every other place a token could straddle the end of the text: head + a longer token.
        candidates = [tail[:cut] + t for cut in range(1, len(tail)) for t in _starting_with(values, tail[cut:])]
        texts, raw = [], []
        for candidate in candidates:
            try:
                texts.append(candidate.decode("utf-8"))
            except UnicodeDecodeError:
                # No text to split: BPE over the bytes as one piece (as tiktoken does).
                raw.append(self._core.encode_piece_bytes(candidate))
        encoded = self._core.encode_batch(texts, (), (), 1) if texts else []
        for ids in [*encoded, *raw]:
            completions.add(self._covering(ids, len(tail)))
        # The regexes split a run of spaces before its last one ("\s+(?!\S)"), so text that
        # comes next can cut a whitespace character off the tail.
        last = _last_char(tail)
        if len(tail) > 1 and last is not None and last.isspace() and last not in _NOT_WHITE_SPACE:
            size = len(last.encode())
            head = self._core.encode_piece_bytes(tail[:-size])
            completions.add((*head, *self._core.encode_piece_bytes(tail[-size:])))
        return completions

    def _covering(self, ids: list[int], length: int) -> tuple[int, ...]:
        """The shortest prefix of `ids` whose bytes reach `length`."""
        covered, out = 0, []
        for i in ids:
            out.append(i)
            covered += len(self._core.token_bytes(i))
            if covered >= length:
                break
        return tuple(out)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text or bytes that are exactly one token, special tokens included;
        `KeyError` (`NotATokenError`) otherwise.

        >>> enc.encode_single_token("hello"), enc.encode_single_token("<|endoftext|>")   # cl100k_base
        (15339, 100257)
        >>> enc.encode_single_token("hello world")
        Traceback (most recent call last):
        ...
        tokenmill.tiktoken.core.NotATokenError: b'hello world'
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        rank = self._mergeable_ranks.get(text_or_bytes)
        if rank is not None:
            return rank
        try:
            special = self._special_tokens.get(text_or_bytes.decode("utf-8"))
        except UnicodeDecodeError:
            special = None
        if special is None:
            raise NotATokenError(text_or_bytes)
        return special

    # -- decoding -------------------------------------------------------------------------------
    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of `tokens`; `KeyError` (`UnknownTokenIdError`) for an id that is no token."""
        try:
            try:
                return self._core.decode_bytes(tokens)
            except (TypeError, OverflowError):  # not a list, or an id that is no u32
                return self._tokenizer.decode_bytes(tokens)
        except _core.TokenIdError as e:
            raise UnknownTokenIdError(str(e)) from None

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes `tokens` to text; `errors` as for `bytes.decode` (by default bytes that are not
        UTF-8, such as half a character, become U+FFFD)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, special tokens included; `KeyError` for an unknown id."""
        try:
            return self._tokenizer.decode_single_token_bytes(token)
        except _core.TokenIdError:
            raise UnknownTokenIdError(str(token)) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, e.g. ``[b'hello', b' world']``."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text (strict UTF-8) and the index of the character each token starts in."""
        parts = self.decode_tokens_bytes(tokens)
        offsets, chars = [], 0
        for part in parts:
            starts_inside = 0x80 <= part[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(1 for b in part if not 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """`decode` of each sequence. (Decoding is a copy per token; `num_threads` is accepted
        for tiktoken's signature and not needed.)"""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """`decode_bytes` of each sequence."""
        return [self.decode_bytes(tokens) for tokens in batch]

    # -- vocabulary -----------------------------------------------------------------------------
    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted."""
        return list(self._sorted_token_bytes)

    @functools.cached_property
    def _sorted_token_bytes(self) -> list[bytes]:
        return self._core.token_byte_values()

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        if not isinstance(token, int):
            raise CheckError(f"a token id is an int, not {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """One past the largest id (`max_token_value + 1`)."""
        return self.max_token_value + 1

    # -- private methods that tiktoken's users call ---------------------------------------------
    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE over text or bytes as one piece: no regex split, no special tokens."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        rank = self._mergeable_ranks.get(text_or_bytes)
        if rank is not None:
            return [rank]
        return self._core.encode_piece_bytes(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """`encode_ordinary` the slow way: split into pieces, then BPE each piece on its own."""
        return [i for piece in self._tokenizer.pre_tokenize(text) for i in self._encode_single_piece(piece)]

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encodes bytes that need not be UTF-8 (a text cut in the middle of a character, say).

        The valid UTF-8 prefix is encoded as text; its last piece is then merged again together
        with the bytes after it, as one piece.
        """
        try:
            return self.encode_ordinary(text.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid = e.start
        prefix = text[:valid].decode("utf-8")
        tokens = self._core.encode_ordinary(prefix)
        held = self._with_space_tokens_before(tokens, self._last_piece_token_count(prefix, tokens))
        rest = text[valid:]
        if tokens and held:
            rest = self._core.decode_bytes(tokens[len(tokens) - held :]) + rest
            tokens = tokens[: len(tokens) - held]
        return tokens + self._encode_single_piece(rest) if rest else tokens

    # -- the last piece (for _encode_bytes and encode_with_unstable) ----------------------------
    def _last_piece_token_count(self, text: str, tokens: list[int]) -> int:
        """How many of `tokens` (the encoding of `text`) came from the last regex piece: 0 when
        the text ends in a special token."""
        last_special = next((k for k in range(len(tokens) - 1, -1, -1) if tokens[k] in self._special_token_values), -1)
        if last_special == len(tokens) - 1:
            return 0
        if last_special >= 0:
            text = self._core.decode_bytes(tokens[last_special + 1 :]).decode("utf-8")
        pieces = self._tokenizer.pre_tokenize(text)
        if not pieces:
            return 0
        want, covered, count = len(pieces[-1].encode("utf-8")), 0, 0
        while covered < want and count < len(tokens):
            count += 1
            covered += len(self._core.token_bytes(tokens[-count]))
        return count

    def _with_space_tokens_before(self, tokens: list[int], held: int) -> int:
        """Widens the held-back tail over the whitespace tokens before it when it starts with one:
        a regex split before trailing whitespace can vanish once more text comes ("\\n" + " "
        then "\\n" becomes one piece in cl100k_base)."""

        def all_space(i: int) -> bool:
            return i not in self._special_token_values and not self._core.token_bytes(i).strip(b" \n\t")

        if held > 0 and all_space(tokens[len(tokens) - held]):
            while held < len(tokens) and all_space(tokens[len(tokens) - held - 1]):
                held += 1
        return held

    # -- pickling: registered encodings by name, others by their definition ---------------------
    def __getstate__(self) -> object:
        from tokenmill.tiktoken import registry

        if registry.ENCODINGS.get(self.name) is self:
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        from tokenmill.tiktoken import registry

        if isinstance(value, str):
            self.__dict__.update(registry.get_encoding(value).__dict__)
            return
        self.__init__(**value)  # type: ignore[misc]


def _starting_with(sorted_values: list[bytes], prefix: bytes) -> list[bytes]:
    """The items of a sorted list that start with `prefix` (they are contiguous)."""
    start = bisect.bisect_left(sorted_values, prefix)
    end = start
    while end < len(sorted_values) and sorted_values[end].startswith(prefix):
        end += 1
    return sorted_values[start:end]


def _last_char(data: bytes) -> str | None:
    """The character the bytes end with, or None when they end in a broken UTF-8 sequence."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            char = data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return char if len(char) == 1 else None
    return None


@functools.lru_cache(maxsize=128)
def _disallowed_regex(tokens: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in tokens))


def _check_disallowed(text: str, disallowed: frozenset[str]) -> None:
    """Raises for the first place in `text` where a disallowed string occurs. As in tiktoken, an
    empty string in the set is found everywhere, so any text raises."""
    found = _disallowed_regex(disallowed).search(text)
    if found is not None:
        _raise_disallowed(found.group())


def _raise_disallowed(token: str) -> NoReturn:
    raise _core.DisallowedSpecialError(
        f"text contains {token!r}, which disallowed_special names. To encode it as a special token, "
        f"pass it in allowed_special (e.g. allowed_special={{{token!r}}}); to encode it as ordinary text, "
        f"leave it out of disallowed_special (e.g. disallowed_special=enc.special_tokens_set - {{{token!r}}}); "
        "disallowed_special=() turns the check off"
    )
