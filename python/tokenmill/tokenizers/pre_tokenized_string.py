"""`PreTokenizedString`: a text cut into splits, each a `NormalizedString` aligned with the whole
original, as Hugging Face's `tokenizers.PreTokenizedString` — what a custom pre-tokenizer
(`pre_tokenizers.PreTokenizer.custom`) works on, and what the pipeline of a tokenizer with a
custom component runs on in Python.

`split(func)` replaces each split by the parts `func(index, normalized)` returns (slices of it,
`normalized[i:j]` or `normalized.split(...)`, so their places are known), `normalize(func)` changes
splits in place, `tokenize(func)` gives each split its tokens; splits that have tokens are left
alone by all three. `get_splits()` reads them with their offsets in the original text.

`PythonPipeline` is how a `Tokenizer` with a custom normalizer or pre-tokenizer encodes: tokenizers'
steps one by one on a PreTokenizedString.

>>> pretok = PreTokenizedString("Hello big world")
>>> pretok.split(lambda i, normalized: normalized.split(" ", "removed"))
>>> pretok.normalize(lambda normalized: normalized.uppercase())
>>> pretok.get_splits()
[('HELLO', (0, 5), None), ('BIG', (6, 9), None), ('WORLD', (10, 15), None)]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tokenmill import _core
from tokenmill.tokenizers.encoding import Encoding
from tokenmill.tokenizers.models import Token
from tokenmill.tokenizers.normalized_string import NormalizedString, NormalizedStringRefMut, _is_space

if TYPE_CHECKING:
    from tokenmill.tokenizers.normalizers import Normalizer
    from tokenmill.tokenizers.pre_tokenizers import PreTokenizer

__all__ = ["PreTokenizedString", "PreTokenizedStringRefMut"]


class _Split:
    """A part of the text: its NormalizedString and, once tokenized, its tokens."""

    __slots__ = ("normalized", "tokens")

    def __init__(self, normalized: NormalizedString, tokens: list[Token] | None = None) -> None:
        self.normalized = normalized
        self.tokens = tokens


class PreTokenizedString:
    """A text cut into splits that keep their place in it."""

    def __init__(self, sequence: str) -> None:
        if not isinstance(sequence, str):
            raise TypeError(f"PreTokenizedString takes a str, not {type(sequence).__name__}")
        self._original = sequence
        self._splits = [_Split(NormalizedString(sequence))]

    def __repr__(self) -> str:
        return f"PreTokenizedString(original={self._original!r}, splits={[str(s.normalized) for s in self._splits]})"

    def split(self, func: Callable[[int, NormalizedString], list[NormalizedString]]) -> None:
        """Each split without tokens replaced by what `func(index, normalized)` returns: a list of
        NormalizedStrings cut from `normalized` (`normalized[i:j]`, `normalized.split(...)`, or
        `normalized` itself); empty ones are dropped.

        >>> pretok = PreTokenizedString("ab-cd")
        >>> pretok.split(lambda i, n: n.split("-", "isolated"))
        >>> [(text, offsets) for text, offsets, _ in pretok.get_splits()]
        [('ab', (0, 2)), ('-', (2, 3)), ('cd', (3, 5))]
        """
        if not callable(func):
            raise TypeError(
                "`split` expect a callable with the signature: "
                "`fn(index: int, normalized: NormalizedString) -> List[NormalizedString]`"
            )

        def parts_of(i: int, normalized: NormalizedString) -> list[tuple[NormalizedString, None]]:
            parts = func(i, normalized)
            if isinstance(parts, (str, NormalizedString)) or not isinstance(parts, (list, tuple)):
                raise TypeError(
                    f"`split`'s function must return a list of NormalizedString, not {type(parts).__name__}"
                )
            out: list[tuple[NormalizedString, None]] = []
            seen: set[int] = set()
            for part in parts:
                if not isinstance(part, NormalizedString):
                    raise TypeError(f"`split`'s function must return NormalizedStrings, not {type(part).__name__}")
                # The same object returned twice makes two independent splits.
                out.append((part._copy() if id(part) in seen else part, None))
                seen.add(id(part))
            return out

        self._split_parts(parts_of)

    def _split_parts(
        self, func: Callable[[int, NormalizedString], list[tuple[NormalizedString, list[Token] | None]]]
    ) -> None:
        """`split`, the parts given with their tokens (None for none yet): how added tokens are
        cut out of the text."""
        splits: list[_Split] = []
        for i, split in enumerate(self._splits):
            if split.tokens is not None:
                splits.append(split)
                continue
            splits.extend(_Split(part, tokens) for part, tokens in func(i, split.normalized) if part._chars)
        self._splits = splits

    def normalize(self, func: Callable[[NormalizedStringRefMut], Any]) -> None:
        """`func(normalized)` on each split without tokens, changing it in place.

        >>> pretok = PreTokenizedString("Straße")
        >>> pretok.normalize(lambda normalized: normalized.uppercase())
        >>> pretok.get_splits()
        [('STRASSE', (0, 6), None)]
        """
        if not callable(func):
            raise TypeError("`normalize` expect a callable with the signature: `fn(normalized: NormalizedString)`")
        for split in self._splits:
            if split.tokens is None:
                with_ref(split.normalized, func)

    def tokenize(self, func: Callable[[str], list[Token]]) -> None:
        """Each split without tokens given the tokens `func(text)` returns (`Token(id, value,
        offsets)`, offsets in characters of the split's normalized text).

        >>> from tokenmill.tokenizers import Token
        >>> pretok = PreTokenizedString("ab")
        >>> pretok.tokenize(lambda text: [Token(7, text, (0, len(text)))])
        >>> pretok.to_encoding().tokens
        ['ab']
        """
        if not callable(func):
            raise TypeError("`tokenize` expect a callable with the signature: `fn(str) -> List[Token]`")
        for split in self._splits:
            if split.tokens is None:
                tokens = func(split.normalized.normalized)
                if isinstance(tokens, str) or not isinstance(tokens, (list, tuple)):
                    raise TypeError(f"`tokenize`'s function must return a list of Token, not {type(tokens).__name__}")
                split.tokens = [_token(t) for t in tokens]

    def _tokenize_batch(self, func: Callable[[list[str]], list[list[Token]]]) -> None:
        """`tokenize` with every split's text at once (the model runs on a batch)."""
        waiting = [split for split in self._splits if split.tokens is None]
        for split, tokens in zip(waiting, func([s.normalized.normalized for s in waiting]), strict=True):
            split.tokens = tokens

    def to_encoding(self, type_id: int = 0, word_idx: int | None = None) -> Encoding:
        """The Encoding of the tokens (every split must have them): offsets in characters of the
        original text, each token's word the index of its split (or `word_idx` for all)."""
        lists: dict[str, list[Any]] = {
            name: [] for name in ("ids", "type_ids", "tokens", "word_ids", "offsets", "special_tokens_mask")
        }
        for index, split in enumerate(self._splits):
            if split.tokens is None:
                raise _core.ConfigError("Split has not been tokenized, call `PreTokenizedString.tokenize` first")
            normalized = split.normalized
            for token in split.tokens:
                lists["ids"].append(token.id)
                lists["tokens"].append(token.value)
                lists["offsets"].append(normalized._to_original(*token.offsets))
                lists["word_ids"].append(index if word_idx is None else word_idx)
        n = len(lists["ids"])
        lists["type_ids"] = [type_id] * n
        lists["special_tokens_mask"] = [0] * n
        lists["attention_mask"] = [1] * n
        made = Encoding()
        made._lists = lists
        return made

    def get_splits(self, offset_referential: str = "original", offset_type: str = "char") -> list[Any]:
        """The splits as (normalized text, (start, end), tokens or None): offsets in the original
        text (`"original"`) or in the splits' normalized texts laid end to end (`"normalized"`),
        counted in characters (`"char"`) or UTF-8 bytes (`"byte"`)."""
        if offset_referential not in ("original", "normalized"):
            raise ValueError("Wrong value for OffsetReferential, expected one of `original, normalized`")
        if offset_type not in ("char", "byte"):
            raise ValueError("Wrong value for OffsetType, expected one of `byte, char`")
        out = []
        at = 0
        for split in self._splits:
            text = split.normalized.normalized
            if offset_referential == "normalized":
                size = len(text) if offset_type == "char" else len(text.encode("utf-8"))
                offsets = (at, at + size)
                at += size
            else:
                start, end = split.normalized._offsets_original()
                if offset_type == "byte":
                    start, end = _bytes_at(self._original, start), _bytes_at(self._original, end)
                offsets = (start, end)
            out.append((text, offsets, None if split.tokens is None else list(split.tokens)))
        return out


def _bytes_at(text: str, chars: int) -> int:
    return len(text[:chars].encode("utf-8"))


def _token(token: Any) -> Token:
    if isinstance(token, Token):
        return token
    try:
        return Token(int(token.id), str(token.value), (int(token.offsets[0]), int(token.offsets[1])))
    except (AttributeError, TypeError, IndexError, ValueError):
        raise TypeError(f"`tokenize`'s function must return Tokens, not {type(token).__name__}") from None


class PreTokenizedStringRefMut:
    """The PreTokenizedString a custom pre-tokenizer's `pre_tokenize` works on: its methods while
    `pre_tokenize` runs, refused after (as tokenizers refuses them)."""

    __slots__ = ("_target",)

    def __init__(self, target: PreTokenizedString) -> None:
        self._target: PreTokenizedString | None = target

    def _get(self) -> PreTokenizedString:
        if self._target is None:
            raise _core.TokenmillError("Cannot use a PreTokenizedStringRefMut outside `pre_tokenize`")
        return self._target

    def _close(self) -> None:
        self._target = None

    def __repr__(self) -> str:
        target = self._target
        return "PreTokenizedStringRefMut(<outside pre_tokenize>)" if target is None else repr(target)

    def split(self, func: Callable[[int, NormalizedString], list[NormalizedString]]) -> None:
        self._get().split(func)

    def normalize(self, func: Callable[[NormalizedStringRefMut], Any]) -> None:
        self._get().normalize(func)

    def tokenize(self, func: Callable[[str], list[Token]]) -> None:
        self._get().tokenize(func)

    def to_encoding(self, type_id: int = 0, word_idx: int | None = None) -> Encoding:
        return self._get().to_encoding(type_id, word_idx)

    def get_splits(self, offset_referential: str = "original", offset_type: str = "char") -> list[Any]:
        return self._get().get_splits(offset_referential, offset_type)


def target_of(pretok: Any) -> PreTokenizedString:
    """The PreTokenizedString behind `pretok` (itself, or what a ref-mut stands for)."""
    if isinstance(pretok, PreTokenizedStringRefMut):
        return pretok._get()
    if not isinstance(pretok, PreTokenizedString):
        raise TypeError(f"pre_tokenize takes a PreTokenizedString, not {type(pretok).__name__}")
    return pretok


def with_ref(normalized: NormalizedString, func: Callable[[NormalizedStringRefMut], Any]) -> Any:
    """`func` called with a ref-mut of `normalized`, which is closed when it returns."""
    ref = NormalizedStringRefMut(normalized)
    try:
        return func(ref)
    finally:
        ref._close()


class PythonPipeline:
    """A tokenizer's encoding as tokenizers runs it, step by step in Python, for a normalizer or
    pre-tokenizer that is custom Python code: the added tokens matched in the raw text are cut
    out; each remaining split is normalized and the added tokens matched in its normalized text
    cut out; the pre-tokenizer cuts the rest; the model (`model`, a core tokenizer with nothing
    but the model) encodes every piece in one batch; `to_encoding` places the tokens in the
    original text. Built-in normalizers and pre-tokenizer steps still run in Rust.

    >>> from tokenmill.tokenizers import Regex, Tokenizer, pre_tokenizers
    >>> class Words:   # words and single other characters, a hyphenated word whole
    ...     def pre_tokenize(self, pretok):
    ...         pretok.split(lambda i, normalized: normalized.split(Regex(r"[^\\w-]"), "isolated"))
    ...         pretok.split(lambda i, normalized: normalized.split(" ", "removed"))
    >>> tok = Tokenizer.from_file("tokenizer.json")   # bert-base-uncased
    >>> tok.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(Words())
    >>> encoding = tok.encode("Up-to-date tokens!")
    >>> encoding.tokens
    ['[CLS]', 'up', '##-', '##to', '##-', '##date', 'token', '##s', '!', '[SEP]']
    >>> encoding.word_ids
    [None, 0, 0, 0, 0, 0, 1, 1, 2, None]
    """

    def __init__(
        self,
        added_tokens: list[dict[str, Any]],
        normalizer: Normalizer | None,
        pre_tokenizer: PreTokenizer | None,
        model: Any,
        specials_as_text: bool = False,
    ) -> None:
        self.normalizer, self.pre_tokenizer, self.model = normalizer, pre_tokenizer, model
        raw, normalized = [], []
        for entry in added_tokens:
            content = entry["content"]
            if entry.get("normalized", not entry.get("special", False)):
                # Matched as the normalizer writes it (tokenizers normalizes it once, when added).
                pattern = content if normalizer is None else normalizer.normalize_str(content)
                normalized.append((pattern, entry))
            else:
                raw.append((content, entry))
        self.raw_tokens = _AddedTokens(raw, specials_as_text)
        self.normalized_tokens = _AddedTokens(normalized, specials_as_text)

    def encode(self, sequence: Any, type_id: int, is_pretokenized: bool) -> Encoding:
        """The encoding of one input (a text, or with `is_pretokenized` a list of words), before
        truncation, template and padding."""
        if not is_pretokenized:
            if not isinstance(sequence, str):
                raise TypeError(f"a text to encode is a str, not {type(sequence).__name__}")
            return self._encode(sequence, type_id, None)
        if isinstance(sequence, str) or not isinstance(sequence, (list, tuple)):
            raise TypeError("with is_pretokenized=True, a sequence is a list of words (str)")
        if not all(isinstance(w, str) for w in sequence):
            raise TypeError("with is_pretokenized=True, a sequence is a list of words (str)")
        # Each word through the whole pipeline, its tokens' word id its index (tokenizers' way).
        return Encoding.merge([self._encode(w, type_id, i) for i, w in enumerate(sequence)], growing_offsets=False)

    def _encode(self, text: str, type_id: int, word_idx: int | None) -> Encoding:
        pretok = PreTokenizedString(text)
        pretok._split_parts(lambda _, n: self.raw_tokens.split(n))

        def normalized_parts(_: int, n: NormalizedString) -> list[tuple[NormalizedString, list[Token] | None]]:
            if self.normalizer is not None:
                self.normalizer._apply(n)
            return self.normalized_tokens.split(n)

        pretok._split_parts(normalized_parts)
        if self.pre_tokenizer is not None:
            self.pre_tokenizer._apply(pretok)
        pretok._tokenize_batch(self._tokenize)
        return pretok.to_encoding(type_id, word_idx)

    def _tokenize(self, pieces: list[str]) -> list[list[Token]]:
        if not pieces:
            return []
        encodings = self.model.encode_batch_for_model(pieces, add_special_tokens=False)
        return [[Token(*t) for t in zip(e.ids, e.tokens, e.offsets, strict=True)] for e in encodings]


class _AddedTokens:
    """Added tokens matched in a text as tokenizers matches them: leftmost, the longest there, a
    `single_word` one only between non-word characters, `lstrip`/`rstrip` taking the spaces
    beside it, special ones passed over with `encode_special_tokens`."""

    def __init__(self, tokens: list[tuple[str, dict[str, Any]]], specials_as_text: bool) -> None:
        self.entries = {pattern: entry for pattern, entry in tokens if pattern}
        self.specials_as_text = specials_as_text
        ordered = sorted(self.entries, key=len, reverse=True)  # longest first: leftmost-longest
        self.regex = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def split(self, normalized: NormalizedString) -> list[tuple[NormalizedString, list[Token] | None]]:
        text = normalized.normalized
        if self.regex is None or not text:
            return [(normalized, None)]
        out: list[tuple[NormalizedString, list[Token] | None]] = []
        at = 0
        for match in self.regex.finditer(text):
            start, stop = match.span()
            entry = self.entries[match.group()]
            if self.specials_as_text and entry.get("special", False):
                continue
            if entry.get("single_word", False):
                alone_before = start == 0 or not _is_word_char(text[start - 1])
                alone_after = stop == len(text) or not _is_word_char(text[stop])
                if not (alone_before and alone_after):
                    continue
            if entry.get("lstrip", False):
                spaces = start
                while spaces > 0 and _is_space(text[spaces - 1]):
                    spaces -= 1
                start = max(spaces, at)  # spaces the token before took stay its own
            if entry.get("rstrip", False):
                while stop < len(text) and _is_space(text[stop]):
                    stop += 1
            if at < start:
                out.append((normalized._sliced(at, start), None))
            piece = normalized._sliced(start, stop)
            out.append((piece, [Token(entry["id"], piece.normalized, (0, stop - start))]))
            at = stop
        if at != len(text):
            out.append((normalized._sliced(at, len(text)), None))
        return out


def _is_word_char(c: str) -> bool:
    """Whether `c` is in the class `\\w` of tokenizers' (Rust) regular expressions."""
    return c.isalpha() or c in "_\u200c\u200d" or unicodedata.category(c) in ("Nd", "Nl", "Mn", "Mc", "Me", "Pc")
