"""A plain, slow reading of SentencePiece's precompiled character map and of its normalizer:
the oracles the Rust side (`src/pipeline/precompiled_charsmap.rs`, `src/pipeline/normalize_sentencepiece.rs`) is
tested against.

`charsmap_rules` expands a map into every rule it holds (source → replacement), as the Python
reader did before the map was walked as it is; `normalize_reference` applies rules as
sentencepiece's `normalizer.cc` does.

>>> from tokenmill.formats.sentencepiece import build_charsmap
>>> charsmap_rules(build_charsmap({"Ａ": "A", "ﬁ": "fi"}))
{'ﬁ': 'fi', 'Ａ': 'A'}
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable, Mapping

from tokenmill import _core

# Darts-clone's unit layout: see src/pipeline/precompiled_charsmap.rs.
_LEAF_FLAG, _VALUE_FLAG = 1 << 8, 1 << 31


def _unit_offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _split_charsmap(blob: bytes) -> tuple[tuple[int, ...], bytes]:
    def fail(what: str) -> _core.FormatError:
        return _core.FormatError(f"precompiled_charsmap: {what}")

    if len(blob) <= 4:
        raise fail(f"{len(blob)} bytes is too short")
    (trie_size,) = struct.unpack_from("<I", blob)
    if trie_size % 4 or trie_size == 0 or 4 + trie_size >= len(blob):
        raise fail(f"trie size {trie_size} does not fit a blob of {len(blob)} bytes")
    return struct.unpack_from(f"<{trie_size // 4}I", blob, 4), blob[4 + trie_size :]


def charsmap_rules(blob: bytes) -> dict[str, str]:
    """Every rule (source → normalized) in a `precompiled_charsmap`.

    >>> from tokenmill.formats.sentencepiece import build_charsmap
    >>> charsmap_rules(build_charsmap({"Ａ": "A", "ﬁ": "fi"}))
    {'ﬁ': 'fi', 'Ａ': 'A'}
    """
    if not blob:  # no map: sentencepiece leaves the text as it is
        return {}
    units, strings = _split_charsmap(blob)
    # A unit labelled `c` at position `p` is the child, by byte c, of the node whose base is
    # `p ^ c`. Indexing units by that base lists each node's children at once instead of probing
    # 256 positions per node. (Unused units carry labels that point at no node's base.)
    children: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for pos, unit in enumerate(units):
        label = unit & 0xFF
        if not unit & _VALUE_FLAG and label:
            children[pos ^ label].append((label, pos))

    # The keys below each base, found depth first with memory: in Darts-clone's automaton many
    # transitions share a base (nmt_nfkc's 225,000 keys have 19,000 bases), so each is listed once.
    # A base being listed (grey) that turns up again below itself means the trie loops.
    below: dict[int, tuple[list[bytes], list[int]]] = {}  # base -> (keys, string offsets)
    grey: set[int] = set()
    root_base = _unit_offset(units[0])
    stack = [root_base]
    while stack:
        base = stack[-1]
        if base in below:
            stack.pop()
            continue
        waiting = [pos ^ _unit_offset(units[pos]) for _, pos in children.get(base, ())]
        waiting = [b for b in waiting if b not in below]
        if waiting and base not in grey:
            grey.add(base)
            for b in waiting:
                if b in grey:
                    raise _core.FormatError(f"precompiled_charsmap: the trie loops back to base {b}")
            stack.extend(waiting)
            continue
        grey.discard(base)
        stack.pop()
        keys: list[bytes] = []
        values: list[int] = []
        for label, pos in children.get(base, ()):
            child, head = pos ^ _unit_offset(units[pos]), bytes([label])
            if units[pos] & _LEAF_FLAG:
                if child >= len(units):
                    raise _core.FormatError(f"precompiled_charsmap: unit {pos} has its value outside the trie")
                keys.append(head)
                values.append(units[child] & ~_VALUE_FLAG)
            tails, tail_values = below[child]
            keys += [head + tail for tail in tails]
            values += tail_values
        below[base] = keys, values

    keys, values = below[root_base]
    texts = {at: _charsmap_string(strings, at) for at in set(values)}
    try:
        return {key.decode("utf-8"): texts[at] for key, at in sorted(zip(keys, values, strict=True))}
    except UnicodeDecodeError as e:
        raise _core.FormatError(f"precompiled_charsmap: a key {e.object!r} is not UTF-8") from None


def _charsmap_text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _core.FormatError(f"precompiled_charsmap: {what} {raw!r} is not UTF-8") from None


def _charsmap_string(strings: bytes, at: int) -> str:
    end = strings.find(b"\0", at)
    if at >= len(strings) or end < 0:
        raise _core.FormatError(f"precompiled_charsmap: no NUL-terminated string at offset {at}")
    return _charsmap_text(strings[at:end], "normalized string")


# --- The normalizer, as sentencepiece's normalizer.cc applies it, kept plain to serve as an oracle.


def normalize_reference(
    text: str | bytes,
    rules: Mapping[str, str],
    *,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool = False,
    user_defined_symbols: Iterable[str] = (),
) -> str:
    """`text` normalized as `SentencePieceProcessor.normalize` does, given the `rules` of the
    model's map (`charsmap_rules`), its NormalizerSpec flags, and its user-defined symbols, which
    pass through unnormalized. Bytes may hold invalid UTF-8: each bad byte becomes U+FFFD. The
    longest-match search is quadratic in the text's length: this is an oracle for short texts.

    >>> normalize_reference("  Ａb  c ", {"Ａ": "A"}, add_dummy_prefix=True,
    ...                     remove_extra_whitespaces=True, escape_whitespaces=True)
    '▁Ab▁c'
    """
    # sentencepiece matches bytes, but rule keys are whole characters, so matching characters is
    # the same; a byte that starts no valid UTF-8 sequence becomes one lone surrogate here.
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    symbols = set(user_defined_symbols)

    def next_piece(i: int) -> tuple[str, int]:
        """The normalized form of the longest match at `text[i]`, and the characters it consumes."""
        for n in range(len(text) - i, 0, -1):
            if text[i : i + n] in symbols:  # looked up before the rules, and never normalized
                return text[i : i + n], n
        for n in range(len(text) - i, 0, -1):
            if text[i : i + n] in rules:
                return rules[text[i : i + n]], n
        return ("\ufffd" if "\udc80" <= text[i] <= "\udcff" else text[i]), 1

    space = "\u2581" if escape_whitespaces else " "
    i = 0
    if remove_extra_whitespaces:  # leading pieces that normalize to exactly one space go
        while i < len(text):
            piece, n = next_piece(i)
            if piece != " ":
                break
            i += n
    if i == len(text):  # nothing left, so not even a dummy prefix
        return ""
    out = space if add_dummy_prefix and not treat_whitespace_as_suffix else ""
    # With remove_extra_whitespaces, the spaces that start a piece go when the text so far ends in
    # a space, or is empty (the dummy prefix counts as one). Spaces inside a piece stay.
    prev_space = remove_extra_whitespaces
    while i < len(text):
        piece, n = next_piece(i)
        i += n
        if prev_space:
            piece = piece.lstrip(" ")
        if piece:
            out += piece.replace(" ", space)
            prev_space = piece.endswith(" ")
        if not remove_extra_whitespaces:
            prev_space = False
    if remove_extra_whitespaces:  # trailing spaces go, and so do ▁s that were in the text itself
        while out.endswith(space):
            out = out[: -len(space)]
    if add_dummy_prefix and treat_whitespace_as_suffix:
        out += space
    return out
