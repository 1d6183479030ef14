"""sentencepiece's WORD models: training (the most frequent words, each scored by the log of its
share of all words) and encoding (each word of the normalized text, cut before each `▁`, is a
piece; runs of unknown words are one unknown piece).

>>> top_words({"▁a": 3, "▁b": 1, "▁c": 3}, 2)
[('▁a', 3), ('▁c', 3)]
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping

from tokenmill.formats import sentencepiece as spm_format


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]  # type: ignore[no-any-return]


def top_words(counts: Mapping[str, int], n: int | None) -> list[tuple[str, int]]:
    """The `n` most frequent words (all for None), ties by the words' order."""
    ranked = sorted(counts.items(), key=lambda wc: (-wc[1], wc[0].encode("utf-8")))
    return ranked if n is None else ranked[:n]


def word_pieces(counts: Mapping[str, int], room: int | None, taken: set[str]) -> list[spm_format.Piece]:
    """The pieces of a WORD model: the most frequent words not `taken` by meta pieces, as many
    as `room` (all for None), each scored log(count) − log(total) as sentencepiece computes it
    (in single precision)."""
    total = sum(counts.values())
    if total == 0:
        raise RuntimeError("no words to train a WORD model on")
    log_total = math.log(_f32(total))
    words = top_words({w: c for w, c in counts.items() if w not in taken}, room)
    return [spm_format.Piece(w, _f32(math.log(_f32(c)) - log_total)) for w, c in words]


def word_cut(normalized: str, known: Mapping[str, int], unk: int) -> list[tuple[int, int, int]]:
    """The WORD model's cut of a normalized text: (id, start, end) per word in bytes of
    `normalized`, a run of unknown words joined into one.

    >>> word_cut("▁a▁x▁y▁b", {"▁a": 3, "▁b": 4}, 0)
    [(3, 0, 4), (0, 4, 12), (4, 12, 16)]
    """
    out: list[tuple[int, int, int]] = []
    at = 0
    for word in re.split("(?=\u2581)", normalized):
        if not word:
            continue
        size = len(word.encode("utf-8"))
        i = known.get(word, unk)
        if i == unk and out and out[-1][0] == unk:
            out[-1] = (unk, out[-1][1], at + size)
        else:
            out.append((i, at, at + size))
        at += size
    return out
