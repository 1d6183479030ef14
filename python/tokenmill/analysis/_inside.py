"""How often each token's text occurred *inside* longer tokens the encoder emitted instead: the
audit's "only inside longer tokens" reason (a token the vocabulary needs as a step or a part, but
that text rarely produces by itself). What counts as inside depends on the model:

- **BPE**: the parts a token was merged from, through every level of the merges that built it
  (``" the"`` made from ``" t"`` + ``"he"`` hands its occurrences to those two and on down,
  never to ``"the"``, which no merge put in it).
- **WordPiece**: an occurrence of the token's text, in the token's own form, strictly within a
  longer token. A word-start token (``un``) lies at the start of a word, so it is inside the
  longer word-start tokens it begins (``unt``, ``until``: greedy longest-match takes the longer
  one where both fit); a continuation (``##ti``) is inside a longer token
  wherever its text follows the word's first character: at any place but the start of a
  word-start token (``until``: ``##n``, ``##nt``, ``##ti``, ``##il``, ...) and anywhere in a
  longer continuation (``##til``: ``##t``, ``##ti``, ``##il``...).
- **Unigram** (SentencePiece): an occurrence of the piece as a substring of a longer piece.
  ``▁`` marks a word start and normally only begins a piece, so ``▁un`` is inside ``▁until`` (as
  its start) and ``un`` is inside ``▁until`` (after the ``▁``), ``until`` and ``bun``.

Each place counts once per occurrence of the longer token in the corpus (``##a`` is inside
``banana`` three times per ``banana``), as BPE counts ``a`` twice in ``aa``. For WordPiece and
Unigram the work grows with the total length of the tokens, not with pairs of tokens or the
substrings of each (see `_add_suffixes`): about 2.5 s for 250,000 pieces of 8 characters.

With ``until`` seen 5 times and ``##til`` twice: ``un`` 5, ``##n`` 5, ``##ti`` 5 + 2, ``##til`` 5.

>>> _wordpiece({0: "un", 1: "until", 2: "##n", 3: "##ti", 4: "##til"}, "##", [0, 5, 0, 0, 2])
[5, 0, 5, 7, 5]
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from collections.abc import Callable

from tokenmill.analysis._vocab import TokenTable
from tokenmill.tokenizer import Tokenizer


def inside_counts(tok: Tokenizer, table: TokenTable, counts: list[int]) -> list[int]:
    """Occurrences of each id inside longer tokens (see the module); zero for ids that are not
    ordinary tokens, and for every id of a model that is none of the three."""
    if tok.model_type == "bpe":
        return _bpe(tok, table, counts)
    texts = {
        i: raw.decode("utf-8", "surrogateescape")
        for i, raw in enumerate(table.token_bytes)
        if raw and table.kinds[i] == "normal"
    }
    if tok.model_type == "wordpiece":
        prefix = tok.model_config().get("continuing_subword_prefix") or "##"
        return _wordpiece(texts, prefix, counts)
    if tok.model_type == "unigram":
        return _substrings(texts, counts)
    return [0] * len(counts)


def _bpe(tok: Tokenizer, table: TokenTable, counts: list[int]) -> list[int]:
    """Trained vocabularies carry their merges; for rank-only ones (tiktoken) a token's parts
    are the two-way split whose later part came earliest, which is the merge that made it."""
    inside = [0] * len(counts)
    ids = {raw: i for i, raw in enumerate(table.token_bytes) if raw is not None and table.kinds[i] == "normal"}
    parts: dict[int, tuple[int, int]] = {}
    if not tok._core.is_rank_based:
        for a, b in tok._core.merge_ids():
            made = ids.get((table.token_bytes[a] or b"") + (table.token_bytes[b] or b""))
            if made is not None:
                parts[made] = (a, b)
    else:
        for raw, i in ids.items():
            best: tuple[int, int] | None = None
            for cut in range(1, len(raw)):
                left, right = ids.get(raw[:cut]), ids.get(raw[cut:])
                if left is None or right is None or left > i or right > i:
                    continue
                if best is None or max(left, right) < max(best):
                    best = (left, right)
            if best is not None:
                parts[i] = best
    # Longest tokens first, so a token's total (its own count and what is inside it) is final
    # before it is handed to its parts.
    total = list(counts)
    for i in sorted(parts, key=lambda i: -len(table.token_bytes[i] or b"")):
        for part in parts[i]:
            inside[part] += total[i]
            total[part] += total[i]
    return inside


def _wordpiece(texts: dict[int, str], prefix: str, counts: list[int]) -> list[int]:
    """Word-start tokens by their text, continuations by their text after the prefix; a token
    that is the prefix alone is a word-start token."""
    starts: dict[str, int] = {}
    continues: dict[str, int] = {}
    for i, text in texts.items():
        if text.startswith(prefix) and len(text) > len(prefix):
            continues[text[len(prefix) :]] = i
        else:
            starts[text] = i
    # Where a continuation may begin: after the first character of a word-start token, anywhere
    # in a continuation.
    places: dict[str, int] = {}
    _add_suffixes(places, starts, counts, first=1)
    _add_suffixes(places, continues, counts, first=0)
    beginning = _sum_starting_with({body: counts[i] for body, i in starts.items() if counts[i]})
    following = _sum_starting_with(places)
    inside = [0] * len(counts)
    for body, i in starts.items():
        inside[i] = beginning(body) - counts[i]
    for body, i in continues.items():
        inside[i] = following(body) - counts[i]
    return inside


def _substrings(texts: dict[int, str], counts: list[int]) -> list[int]:
    pieces = {text: i for i, text in texts.items()}
    places: dict[str, int] = {}
    _add_suffixes(places, pieces, counts, first=0)
    containing = _sum_starting_with(places)
    inside = [0] * len(counts)
    for text, i in pieces.items():
        inside[i] = containing(text) - counts[i]
    return inside


# The occurrences of x inside a token T are the suffixes of T that start with x. So each token
# that occurred adds its count to each of its suffixes (len(T) entries, not len(T)² substrings),
# and the occurrences of x weighted by count are the sum over the suffixes that start with x: a
# contiguous run of them in sorted order, found by two binary searches over prefix sums.


def _add_suffixes(places: dict[str, int], tokens: dict[str, int], counts: list[int], *, first: int) -> None:
    """Adds each token's count to each of its suffixes that begins at `first` or later."""
    get = places.get
    for text, i in tokens.items():
        n = counts[i]
        if n:
            for suffix in _suffixes(len(text), first)(text):
                places[suffix] = get(suffix, 0) + n


def _sum_starting_with(weights: dict[str, int]) -> Callable[[str], int]:
    """A function giving the sum of `weights` over the keys that start with its argument."""
    keys = sorted(weights)
    sums = [0, *itertools.accumulate(map(weights.__getitem__, keys))]

    def total(text: str) -> int:
        # Keys that start with `text` sort from `text` up to `text` + the last code point
        # (which no token text goes on with).
        return sums[bisect.bisect_left(keys, text + "\U0010ffff")] - sums[bisect.bisect_left(keys, text)]

    return total


@functools.cache
def _suffixes(length: int, first: int) -> Callable[[str], tuple[str, ...]]:
    """A function giving a string's suffixes that begin at `first` or later; slicing through
    `operator.itemgetter` keeps the work per suffix in C."""
    cuts = [slice(begin, None) for begin in range(first, length)]
    if not cuts:
        return lambda text: ()
    if len(cuts) == 1:
        return lambda text: (text[cuts[0]],)
    return operator.itemgetter(*cuts)  # type: ignore[return-value]
