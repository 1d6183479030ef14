"""`Encoding`: Hugging Face `tokenizers.Encoding` (0.22/0.23) over tokenmill's core encodings.

One input's model inputs — ids and everything aligned with them — with the same properties,
accessors (`char_to_token`, `word_to_tokens`, ...) and in-place operations (`pad`, `truncate`,
`merge`, `set_sequence_id`) as Hugging Face's, edge cases included: the methods follow
`tokenizers/src/tokenizer/encoding.rs` and its Python binding rule for rule.

An encoding made by tokenmill wraps the core's (Rust) object and reads each property from it on
demand, so that a batch of them costs one small Python object per input. Its lists are copied
into Python only when an in-place operation changes them (copy on write).

Hugging Face keeps, beside the per-token lists, a map from sequence index to the range of tokens
that sequence covers; every accessor that takes a `sequence_index`, and `token_to_sequence`, reads
that map, not the `sequence_ids` list. The core records the map as Hugging Face does and hands it
over (`sequence_ranges`).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenmill._core import Encoding as CoreEncoding

__all__ = ["Encoding"]

# The per-token lists, by the core's attribute names (Hugging Face's `words` is `word_ids`).
_LISTS = ("ids", "type_ids", "tokens", "word_ids", "offsets", "special_tokens_mask", "attention_mask")

# Sequence index -> (start, stop) token range, as Hugging Face's `sequence_ranges`.
Ranges = dict[int, tuple[int, int]]

_U32, _U64 = 1 << 32, 1 << 64
_REPR_ATTRIBUTES = "ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing"


# -- arguments, checked as Hugging Face's binding (pyo3) converts them ----------------------------
# Hugging Face's methods take `usize`/`u32` arguments: a negative index is an OverflowError there,
# not a Python-style index from the end, and a float is a TypeError. Same errors here.
def _usize(value: object) -> int:
    if type(value) is int and 0 <= value < _U64:
        return value  # the common case, without the calls below
    number = operator.index(value)  # type: ignore[call-overload]
    if number < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if number >> 64:
        raise OverflowError("int too big to convert")
    return number


def _u32(value: object) -> int:
    if type(value) is int and 0 <= value < _U32:
        return value
    number = operator.index(value)  # type: ignore[call-overload]
    if number < 0:
        raise OverflowError("number too small to fit in target type")
    if number >> 32:
        raise OverflowError("number too large to fit in target type")
    return number


def _not_instance(value: object, expected: str) -> TypeError:
    # pyo3's wording, which names None by itself and other values by their type.
    what = "'None'" if value is None else f"'{type(value).__name__}' object"
    return TypeError(f"{what} is not an instance of '{expected}'")


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise _not_instance(value, "str")
    return value


class Encoding:
    """The output of a tokenizer for one input (or a pair): ids, type ids, tokens, offsets, masks,
    words, sequences and the overflowing windows truncation cut off, as `tokenizers.Encoding`.

    Every property returns a fresh list, as Hugging Face's do: changing it leaves the encoding
    as it was. `pad`, `truncate` and `set_sequence_id` change the encoding in place.

    >>> from tokenmill.tokenizers import Tokenizer
    >>> tokenizer = Tokenizer.from_file("tokenizer.json")   # bert-base-uncased
    >>> enc = tokenizer.encode("Hello, world!")
    >>> enc.tokens
    ['[CLS]', 'hello', ',', 'world', '!', '[SEP]']
    >>> enc.char_to_token(8), enc.token_to_chars(3)
    (3, (7, 12))
    >>> repr(Encoding())[:22], Encoding().n_sequences
    ('Encoding(num_tokens=0,', 1)
    """

    # Two states. Backed by a core encoding: `_core` is set, `_lists` and `_ranges` are caches
    # filled for the accessor methods (shared with clones, never changed). Owned: `_core` is None
    # and `_lists`, `_ranges`, `_overflowing` belong to this object alone. A change turns a backed
    # encoding into an owned one first (`_own`). `__dict__` because Hugging Face's Encoding
    # takes arbitrary attributes.
    __slots__ = ("_core", "_lists", "_ranges", "_overflowing", "__dict__", "__weakref__")

    _core: CoreEncoding | None
    _lists: dict[str, list[Any]] | None
    _ranges: Ranges | None
    _overflowing: list[Encoding] | None

    def __init__(self) -> None:
        """An empty encoding, as `tokenizers.Encoding()`."""
        self._core = None
        self._lists = {name: [] for name in _LISTS}
        self._ranges = {}
        self._overflowing = []

    @classmethod
    def _from_core(cls, core: CoreEncoding) -> Encoding:
        """Wraps a core encoding without reading it.

        >>> enc = Encoding._from_core(bert.encode_for_model("Hello"))
        >>> enc.tokens
        ['[CLS]', 'hello', '[SEP]']
        """
        self = object.__new__(cls)
        self._core = core
        self._lists = None
        self._ranges = None
        self._overflowing = None
        return self

    # -- internal state ----------------------------------------------------------------------------
    def _list(self, name: str) -> list[Any]:
        """A per-token list for reading only: the owned one, or the core's, read once and kept
        (the accessor methods look at single entries, so they must not convert a whole list from
        Rust per call)."""
        lists = self._lists
        if lists is None:
            lists = self._lists = {}
        found = lists.get(name)
        if found is None:
            found = lists[name] = getattr(self._core, name)
        return found

    def _sequence_ranges(self) -> Ranges:
        """Hugging Face's `sequence_ranges`, for reading only."""
        ranges = self._ranges
        if ranges is None:
            core = self._core
            assert core is not None
            # The core records ranges as Hugging Face does (none without a post-processor, only the
            # second text's in a window of a pair without one).
            ranges = self._ranges = {s: (start, stop) for s, start, stop in core.sequence_ranges}
        return ranges

    def _windows(self) -> list[Encoding]:
        """The overflowing windows, for reading only."""
        if self._core is None:
            assert self._overflowing is not None
            return self._overflowing
        return [Encoding._from_core(o) for o in self._core.overflowing]

    def _own(self) -> dict[str, list[Any]]:
        """Makes this encoding own its lists (copied from the core if it still reads them from
        there) before a change, and returns them."""
        core = self._core
        if core is not None:
            ranges = self._sequence_ranges()
            windows = self._windows()
            # Fresh lists from Rust, never the cached ones: those may be shared with clones.
            self._lists = {name: getattr(core, name) for name in _LISTS}
            self._ranges = dict(ranges)
            self._overflowing = windows
            self._core = None
        assert self._lists is not None
        return self._lists

    def _clone(self) -> Encoding:
        """An independent copy (Rust's `clone`). A backed encoding shares its immutable core."""
        other = object.__new__(Encoding)
        if self._core is not None:
            if self._lists is None:
                # One cache for this encoding and its clone: they read the same core.
                self._lists = {}
            other._core = self._core
            other._lists = self._lists
            other._ranges = self._ranges
            other._overflowing = None
            return other
        assert self._lists is not None and self._ranges is not None and self._overflowing is not None
        other._core = None
        other._lists = {name: list(values) for name, values in self._lists.items()}
        other._ranges = dict(self._ranges)
        other._overflowing = [o._clone() for o in self._overflowing]
        return other

    def _range(self, sequence_index: int) -> tuple[int, int]:
        """The tokens of a sequence; the whole encoding when no range is recorded for it (as
        Hugging Face: `sequence_index=1` on a single input looks at every token)."""
        return self._sequence_ranges().get(sequence_index, (0, len(self)))

    # -- properties ----------------------------------------------------------------------------
    @property
    def ids(self) -> list[int]:
        """The token ids, the main input to a model."""
        core = self._core
        return core.ids if core is not None else list(self._list("ids"))

    @property
    def type_ids(self) -> list[int]:
        """The type (segment) id of each token: which input of a pair it belongs to, as the
        post-processor's template sets it."""
        core = self._core
        return core.type_ids if core is not None else list(self._list("type_ids"))

    @property
    def tokens(self) -> list[str]:
        """The tokens as strings (`'##ing'`, `'Ġworld'`, `'[CLS]'`)."""
        core = self._core
        return core.tokens if core is not None else list(self._list("tokens"))

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Each token's `(start, end)` character offsets in the input it came from; `(0, 0)` for
        inserted tokens (special tokens, padding)."""
        core = self._core
        return core.offsets if core is not None else list(self._list("offsets"))

    @property
    def attention_mask(self) -> list[int]:
        """1 for tokens the model attends to, 0 for padding."""
        core = self._core
        return core.attention_mask if core is not None else list(self._list("attention_mask"))

    @property
    def special_tokens_mask(self) -> list[int]:
        """1 for special tokens inserted by the post-processor and for padding, else 0."""
        core = self._core
        return core.special_tokens_mask if core is not None else list(self._list("special_tokens_mask"))

    @property
    def word_ids(self) -> list[int | None]:
        """The index of the word (pre-tokenized piece) each token came from, within its input;
        None for inserted tokens."""
        core = self._core
        return core.word_ids if core is not None else list(self._list("word_ids"))

    @property
    def words(self) -> list[int | None]:
        """Deprecated alias of `word_ids`, with Hugging Face's DeprecationWarning."""
        warnings.warn(
            "Deprecated in 0.9.4: Encoding.words is deprecated, please use Encoding.word_ids instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.word_ids

    @property
    def sequence_ids(self) -> list[int | None]:
        """The input (0 or 1) each token belongs to; None for tokens outside every recorded
        sequence range (special tokens, padding)."""
        core = self._core
        if core is not None:
            return core.sequence_ids
        n = len(self)
        out: list[int | None] = [None] * n
        ranges = self._sequence_ranges()
        # Hugging Face's reading: sequences 0..n_sequences in order, each over its recorded range
        # or, with none recorded for that index, over every token.
        for sequence in range(len(ranges) or 1):
            start, stop = ranges.get(sequence, (0, n))
            stop = min(stop, n)
            out[start:stop] = [sequence] * max(stop - start, 0)
        return out

    @property
    def n_sequences(self) -> int:
        """How many inputs this encoding holds (1 when no sequence range is recorded)."""
        core = self._core
        return core.n_sequences if core is not None else len(self._sequence_ranges()) or 1

    @property
    def overflowing(self) -> list[Encoding]:
        """The windows truncation cut off, each a full encoding (fresh copies, as Hugging Face's)."""
        core = self._core
        if core is not None:
            return [Encoding._from_core(o) for o in core.overflowing]
        assert self._overflowing is not None
        return [o._clone() for o in self._overflowing]

    def __len__(self) -> int:
        core = self._core
        return len(core) if core is not None else len(self._list("ids"))

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self)}, attributes=[{_REPR_ATTRIBUTES}])"

    # -- copying and pickling --------------------------------------------------------------------
    def __copy__(self) -> Encoding:
        return self._clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> Encoding:
        return self._clone()

    def __getstate__(self) -> dict[str, Any]:
        # Plain lists (the core object is not picklable), as Hugging Face pickles its content.
        return {
            "lists": {name: self._list(name) for name in _LISTS},
            "ranges": dict(self._sequence_ranges()),
            "overflowing": [o.__getstate__() for o in self._windows()],
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._core = None
        self._lists = {name: list(state["lists"][name]) for name in _LISTS}
        self._lists["offsets"] = [tuple(o) for o in self._lists["offsets"]]
        self._ranges = {int(k): (v[0], v[1]) for k, v in state["ranges"].items()}
        windows = []
        for window_state in state["overflowing"]:
            window = object.__new__(Encoding)
            window.__setstate__(window_state)
            windows.append(window)
        self._overflowing = windows

    # -- accessors -----------------------------------------------------------------------------
    def _token_sequence(self, token: int) -> int | None:
        # Hugging Face tests `token > len`, not `>=`: one past the end still has a sequence
        # (0) when no range is recorded.
        if token > len(self):
            return None
        ranges = self._sequence_ranges()
        if not ranges:
            return 0
        for sequence, (start, stop) in ranges.items():
            if start <= token < stop:
                return sequence
        return None

    def token_to_sequence(self, token_index: int) -> int | None:
        """The input (0 or 1) the token at `token_index` belongs to; None for a special token
        outside every sequence, or an index past the end.

        >>> enc = tokenizer.encode("first", "second")
        >>> enc.tokens
        ['[CLS]', 'first', '[SEP]', 'second', '[SEP]']
        >>> enc.token_to_sequence(1), enc.token_to_sequence(0), enc.token_to_sequence(3)
        (0, None, 1)
        """
        return self._token_sequence(_usize(token_index))

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The `(start, end)` character offsets of a token in the input it came from (ask
        `token_to_sequence` which); None for a token outside every sequence (a special token
        of a post-processed input) or past the end.

        >>> tokenizer.encode("Hello world").token_to_chars(2)   # [CLS] hello world [SEP]
        (6, 11)
        """
        token = _usize(token_index)
        if self._token_sequence(token) is None:
            return None
        offsets = self._list("offsets")
        return offsets[token] if token < len(offsets) else None

    def token_to_word(self, token_index: int) -> int | None:
        """The index, within its input, of the word a token belongs to; None for special
        tokens, padding and indices past the end.

        >>> tokenizer.encode("Hello world").token_to_word(2)   # [CLS] hello world [SEP]
        1
        """
        token = _usize(token_index)
        if self._token_sequence(token) is None:
            return None
        words = self._list("word_ids")
        return words[token] if token < len(words) else None

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The index of the first token whose offsets contain character `char_pos` of input
        `sequence_index`; None for characters no token covers (whitespace between words, past
        the end). Tokens with empty offsets (special tokens, padding) contain no character.

        >>> tokenizer.encode("Hello world").char_to_token(7)   # [CLS] hello world [SEP]
        2
        """
        pos = _usize(char_pos)
        start, stop = self._range(_usize(sequence_index))
        offsets = self._list("offsets")
        if start > stop or stop > len(offsets):
            return None
        for token, (first, end) in enumerate(offsets[start:stop] if start or stop < len(offsets) else offsets, start):
            if first <= pos < end:
                return token
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The index of the word that contains character `char_pos` of input `sequence_index`.

        >>> tokenizer.encode("Hello world").char_to_word(7)
        1
        """
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The tokens `(first, last + 1)` of word `word_index` of input `sequence_index`.

        As Hugging Face, the scan stops at the first token of a later word, so a word whose
        tokens come after a later word's (word ids out of order) is not found past it.

        >>> enc = tokenizer.encode("Hello tokenization world")
        >>> enc.tokens
        ['[CLS]', 'hello', 'token', '##ization', 'world', '[SEP]']
        >>> enc.word_to_tokens(1)
        (2, 4)
        """
        word = _u32(word_index)
        start, stop = self._range(_usize(sequence_index))
        words = self._list("word_ids")
        if start > stop or stop > len(words):
            return None
        first = last = -1
        for token, w in enumerate(words[start:stop] if start or stop < len(words) else words, start):
            if w is None:
                continue
            if w > word:
                break
            if w == word:
                if first < 0:
                    first = token
                last = token
        return None if first < 0 else (first, last + 1)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The character span `(start, end)` of word `word_index` of input `sequence_index`:
        from its first token's start to its last token's end.

        >>> tokenizer.encode("Hello world").word_to_chars(1)
        (6, 11)
        """
        tokens = self.word_to_tokens(word_index, sequence_index)
        if tokens is None:
            return None
        offsets = self._list("offsets")
        return (offsets[tokens[0]][0], offsets[tokens[1] - 1][1])

    # -- in-place operations ---------------------------------------------------------------------
    def set_sequence_id(self, sequence_id: int) -> None:
        """Records every token as belonging to input `sequence_id` (added to, or replacing, the
        ranges already recorded: on a pair, `set_sequence_id(0)` leaves sequence 1's range too).

        >>> enc = Encoding()
        >>> enc.set_sequence_id(1)
        >>> enc.n_sequences
        1
        """
        sequence = _usize(sequence_id)
        self._own()
        assert self._ranges is not None
        self._ranges[sequence] = (0, len(self))

    def pad(
        self,
        length: int,
        *,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        **unknown: object,
    ) -> None:
        """Pads to `length` tokens (nothing if already that long), and every overflowing window
        too. Padding has attention 0, special-token mask 1, no word and offsets `(0, 0)`; on the
        left it moves the sequence ranges along. The options are keyword-only, and unknown ones
        are reported and ignored, as Hugging Face's.

        >>> enc = Encoding()
        >>> enc.pad(2, pad_id=7)
        >>> enc.ids, enc.attention_mask
        ([7, 7], [0, 0])
        """
        length = _usize(length)
        if _str(direction) not in ("left", "right"):
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`")
        pad_id, pad_type_id, pad_token = _u32(pad_id), _u32(pad_type_id), _str(pad_token)
        for key in unknown:
            print(f"Ignored unknown kwarg option {key}")
        self._pad(length, direction == "left", pad_id, pad_type_id, pad_token)

    def _pad(self, length: int, left: bool, pad_id: int, pad_type_id: int, pad_token: str) -> None:
        lists = self._own()
        assert self._overflowing is not None and self._ranges is not None
        # Hugging Face pads the windows first, and each on its own merits.
        for window in self._overflowing:
            window._pad(length, left, pad_id, pad_type_id, pad_token)
        n = length - len(lists["ids"])
        if n <= 0:
            return
        fills: dict[str, Any] = {
            "ids": pad_id,
            "type_ids": pad_type_id,
            "tokens": pad_token,
            "word_ids": None,
            "offsets": (0, 0),
            "special_tokens_mask": 1,
            "attention_mask": 0,
        }
        for name, fill in fills.items():
            if left:
                lists[name] = [fill] * n + lists[name]
            else:
                lists[name].extend([fill] * n)
        if left:
            self._ranges = {s: (start + n, stop + n) for s, (start, stop) in self._ranges.items()}

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keeps `max_length` tokens (from the start, or with `direction="left"` from the end);
        the rest becomes overflowing windows of `max_length` tokens, each overlapping the one
        before by `stride` tokens. Existing windows are dropped and the sequence ranges are lost
        (the result counts as one sequence), as Hugging Face's. `max_length=0` moves the whole
        encoding into a single overflowing window.

        >>> enc = Encoding()
        >>> enc.pad(5)
        >>> enc.truncate(2, stride=1)
        >>> len(enc), [len(o) for o in enc.overflowing]
        (2, [2, 2, 2])
        """
        max_length, stride = _usize(max_length), _usize(stride)
        if _str(direction) not in ("left", "right"):
            raise ValueError(f"Invalid truncation direction value : {direction}")
        n = len(self)
        if max_length >= n:
            return
        if max_length == 0:
            whole = self._clone()
            self._core = None
            self._lists = {name: [] for name in _LISTS}
            self._ranges = {}
            self._overflowing = [whole]
            return
        if stride >= max_length:
            # Hugging Face panics here (a PanicException, which `except Exception` misses); the
            # same message as a ValueError.
            raise ValueError(
                f"`stride` must be strictly less than `max_len={max_length}` (note that `max_len` may be shorter "
                "than the max length of the original model, as it subtracts the number of special characters"
            )
        step = max_length - stride
        windows: list[tuple[int, int]] = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                windows.append((start, stop))
                if stop == n:
                    break
        else:
            for last in range(n - 1, -1, -step):
                start = max(last + 1 - max_length, 0)
                windows.append((start, last + 1))
                if start == 0:
                    break
        lists = {name: self._list(name) for name in _LISTS}
        pieces = []
        for start, stop in windows:
            piece = object.__new__(Encoding)
            piece._core = None
            piece._lists = {name: values[start:stop] for name, values in lists.items()}
            piece._ranges = {}
            piece._overflowing = []
            pieces.append(piece)
        first = pieces[0]
        self._core = None
        self._lists = first._lists
        self._ranges = {}
        self._overflowing = pieces[1:]

    @staticmethod
    def merge(encodings: Sequence[Encoding], growing_offsets: bool = True) -> Encoding:
        """Joins encodings into a new one, one after another. Sequence ranges move along; with
        `growing_offsets` each encoding's offsets are shifted past the previous one's last end.
        Overflowing windows combine as Hugging Face's: each window of the first with the whole
        second and with each of its windows, then the whole first with each window of the second.

        >>> a, b = Encoding(), Encoding()
        >>> a.pad(1, pad_id=1)
        >>> b.pad(2, pad_id=2)
        >>> Encoding.merge([a, b]).ids
        [1, 2, 2]
        """
        if isinstance(encodings, str):
            raise TypeError("Can't extract `str` to `Vec`")
        if not isinstance(encodings, Sequence):
            raise _not_instance(encodings, "Sequence")
        parts = list(encodings)
        for part in parts:
            if not isinstance(part, Encoding):
                raise _not_instance(part, "Encoding")
        if not isinstance(growing_offsets, bool):
            raise _not_instance(growing_offsets, "bool")
        merged = Encoding()
        for part in parts:
            merged._merge_with(part, growing_offsets)
        return merged

    def _merge_with(self, other: Encoding, growing_offsets: bool) -> None:
        """Appends `other` (left unchanged) to this encoding, Rust's `merge_with`."""
        lists = self._own()
        assert self._overflowing is not None and self._ranges is not None
        theirs = other._windows()
        windows = []
        for mine in self._overflowing:
            joined = mine._clone()
            joined._merge_with(other, growing_offsets)
            windows.append(joined)
            for their in theirs:
                joined = mine._clone()
                joined._merge_with(their, growing_offsets)
                windows.append(joined)
        for their in theirs:
            joined = self._clone()
            joined._merge_with(their, growing_offsets)
            windows.append(joined)

        base = len(lists["ids"])
        for sequence, (start, stop) in other._sequence_ranges().items():
            self._ranges[sequence] = (start + base, stop + base)
        for name in _LISTS:
            if name != "offsets":
                lists[name].extend(other._list(name))
        offsets = lists["offsets"]
        shift = offsets[-1][1] if growing_offsets and offsets else 0
        offsets.extend([(start + shift, stop + shift) for start, stop in other._list("offsets")])
        self._overflowing = windows
