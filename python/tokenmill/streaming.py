"""Decoding ids as they arrive (a server sending generated text): text is emitted as soon as it
forms whole characters, and everything emitted, joined, equals `decode` of all the ids."""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tokenmill import _checks, _core

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


class DecodeStream:
    """Feed ids one at a time (or a few); get back the text that is complete so far.

    The core decodes a short window of recent ids whole and emits what it adds, so every
    decoder (byte-level, WordPiece's spaces between words, SentencePiece's `▁` and byte pieces,
    an end-of-word suffix's space) streams exactly as `decode` decodes.

    >>> from tokenmill import train_bpe
    >>> tok = train_bpe(["hello world"] * 3, vocab_size=300)
    >>> stream = tok.decode_stream()
    >>> ids = tok.encode("héllo wörld")
    >>> "".join(stream.step(i) for i in ids) + stream.finish() == tok.decode(ids)
    True
    """

    __slots__ = ("_core", "_decoder")

    def __init__(self, tok: Tokenizer, *, skip_special_tokens: bool = False, errors: str = "replace") -> None:
        self._core = _core.DecodeStream(tok._core, _checks.flag("skip_special_tokens", skip_special_tokens))
        # Python's incremental UTF-8 decoder keeps an incomplete character for the next call and
        # treats invalid bytes exactly as decoding the whole at once would (`errors`).
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=_checks.decode_errors(errors))

    def incomplete(self) -> bool:
        """Whether the ids so far end inside a character (its first bytes are held back)."""
        return bool(self._decoder.getstate()[0])

    def step(self, id: int) -> str:
        """Adds one id; returns the text it completes (often "", sometimes several characters)."""
        return self.feed([id])

    def feed(self, ids: Iterable[int]) -> str:
        """Adds ids; returns the text they complete."""
        from tokenmill._checks import bad_ids

        ids = list(ids)
        try:
            data = self._core.step(ids)
        except (OverflowError, TypeError):
            raise bad_ids(ids) from None
        return self._decoder.decode(data)

    def finish(self) -> str:
        """Ends the stream: bytes of a character that never completed come out as `errors` says;
        a held suffix space is dropped, as `decode` drops it. The stream can then start again."""
        return self._decoder.decode(self._core.finish(), final=True)
