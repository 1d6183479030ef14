"""`tokenmill.tokenizers.decoders`: so far `DecodeStream`, Hugging Face's streaming decoder — ids
fed one at a time, the text each completes returned (None while a character is incomplete).

>>> from tokenmill.tokenizers import Tokenizer
>>> stream = DecodeStream(skip_special_tokens=True)
>>> tok = Tokenizer.from_file("tokenizer.json")                        # doctest: +SKIP
>>> [stream.step(tok, i) for i in tok.encode("héllo").ids]             # doctest: +SKIP
[None, 'h', 'éllo', None]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokenmill import _core

if TYPE_CHECKING:
    from tokenmill.streaming import DecodeStream as _Stream
    from tokenmill.tokenizers.tokenizer import Tokenizer


class DecodeStream:
    """Decodes ids as they arrive, with the tokenizer's decoder: `step(tokenizer, id)` returns
    the text that id completes, or None when it completes none (yet). Joined, the steps are
    `tokenizer.decode(ids, skip_special_tokens)`."""

    def __init__(self, skip_special_tokens: bool = False) -> None:
        self.skip_special_tokens = skip_special_tokens
        self._stream: _Stream | None = None
        self._tokenizer: Tokenizer | None = None
        # Text complete so far but held back, as tokenizers holds it while a character after it
        # is still incomplete.
        self._held = ""

    def step(self, tokenizer: Tokenizer, id: int | list[int]) -> str | None:
        if self._tokenizer is None:
            self._tokenizer = tokenizer
            self._stream = tokenizer._tok.decode_stream(skip_special_tokens=self.skip_special_tokens)
        elif tokenizer is not self._tokenizer:
            raise _core.ConfigError("a DecodeStream follows one tokenizer; make a new one for another")
        stream = self._stream
        assert stream is not None
        self._held += stream.feed(id) if isinstance(id, list) else stream.step(id)
        if stream.incomplete() or not self._held:
            return None
        text, self._held = self._held, ""
        return text
