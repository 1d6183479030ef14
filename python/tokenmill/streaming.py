"""Decoding ids as they arrive (a server sending generated text): text is emitted as soon as it
forms whole characters, and everything emitted, joined, equals `decode` of all the ids."""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tokenmill import _checks

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


class DecodeStream:
    """Feed ids one at a time (or a few); get back the text that is complete so far.

    A byte-level token can end inside a character, so its bytes wait for the rest; the space an
    end-of-word suffix stands for waits for the next token (`decode` drops it at the very end).

    >>> stream = tok.decode_stream()                                               # doctest: +SKIP
    >>> "".join(stream.step(i) for i in ids) + stream.finish() == tok.decode(ids)   # doctest: +SKIP
    True
    """

    __slots__ = ("_tok", "_skip", "_decoder", "_held")

    def __init__(self, tok: Tokenizer, *, skip_special_tokens: bool = False, errors: str = "replace") -> None:
        self._tok = tok
        self._skip = _checks.flag("skip_special_tokens", skip_special_tokens)
        # Python's incremental UTF-8 decoder keeps an incomplete character for the next call and
        # replaces invalid bytes exactly as decoding the whole at once would.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=_checks.decode_errors(errors))
        self._held = b""

    def step(self, id: int) -> str:
        """Adds one id; returns the text it completes (often "", sometimes several characters)."""
        return self.feed([id])

    def feed(self, ids: Iterable[int]) -> str:
        """Adds ids; returns the text they complete."""
        from tokenmill.tokenizer import _bad_ids

        ids = list(ids)
        core = self._tok._core
        try:
            if self._skip:
                ids = [i for i in ids if not core.is_special(i)]
            if not ids:
                return ""
            parts = core.decode_parts(ids, False)
            trimmed = b"".join(core.decode_parts(ids[-1:], True))
        except (OverflowError, TypeError):
            raise _bad_ids(ids) from None
        whole = b"".join(parts)
        # What the last token contributes only if more follows (a suffix's space) waits.
        hold = len(parts[-1]) - len(trimmed)
        data = self._held + (whole[: len(whole) - hold] if hold else whole)
        self._held = whole[len(whole) - hold :] if hold else b""
        return self._decoder.decode(data)

    def finish(self) -> str:
        """Ends the stream: bytes of a character that never completed come out as `errors` says;
        a held suffix space is dropped, as `decode` drops it."""
        self._held = b""
        return self._decoder.decode(b"", final=True)
