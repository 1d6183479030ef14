"""`tokenmill.tokenizers.decoders`: Hugging Face's decoders (token strings → text), each its
`tokenizer.json` node run by tokenmill's Rust decoder steps, and `DecodeStream`, the streaming
decoder — ids fed one at a time, the text each completes returned (None while a character is
incomplete).

>>> WordPiece().decode(["My", "na", "##me"])
'My name'

>>> from tokenmill.tokenizers import Tokenizer
>>> stream = DecodeStream(skip_special_tokens=True)
>>> tok = Tokenizer.from_file("tokenizer.json")   # bert-base-uncased: [CLS] ... [SEP]
>>> [stream.step(tok, i) for i in tok.encode("Hello tokenization world").ids]
[None, 'hello', ' token', 'ization', ' world', None]

A custom decoder (`Decoder.custom(obj)`) decodes in Python: `obj.decode_chain(tokens)` gives the
decoded pieces, joined (tokenizers' contract), or, lacking that method, `obj.decode(tokens)` the
text. It stands alone (not in a `Sequence`, which tokenizers refuses too) and cannot be saved.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from tokenmill import _core
from tokenmill.tokenizers._component import (
    CUSTOM,
    Component,
    call_custom,
    custom_node,
    has_custom,
    pattern_node,
    register_custom,
)
from tokenmill.tokenizers._component import Sequence as _Sequence

if TYPE_CHECKING:
    from tokenmill.streaming import DecodeStream as _Stream
    from tokenmill.tokenizers.tokenizer import Tokenizer


class DecodeStream:
    """Decodes ids as they arrive, with the tokenizer's decoder: `step(tokenizer, id)` returns
    the text that id completes, or None when it completes none (yet). Joined, the steps are
    `tokenizer.decode(ids, skip_special_tokens)`."""

    def __init__(self, ids: list[int] | None = None, skip_special_tokens: bool = False) -> None:
        if isinstance(ids, bool):  # DecodeStream(True): tokenizers' older positional form
            ids, skip_special_tokens = None, ids
        self.skip_special_tokens = skip_special_tokens
        # Every id decoded so far (those given when it was made included): a copy starts from them.
        self._prefix = list(ids or [])
        self._stream: _Stream | None = None
        self._tokenizer: Tokenizer | None = None
        # Text complete so far but held back, as tokenizers holds it while a character after it
        # is still incomplete.
        self._held = ""

    def __copy__(self) -> DecodeStream:
        """A stream in the same state that goes on on its own."""
        copied = DecodeStream(list(self._prefix), self.skip_special_tokens)
        copied._held = self._held
        return copied

    def step(self, tokenizer: Tokenizer, id: int | list[int]) -> str | None:
        if self._tokenizer is None:
            if tokenizer._custom_decoder() is not None:
                raise _core.ConfigError(
                    "a DecodeStream runs the tokenizer's decoder in Rust, and this one is a custom Python "
                    "decoder: decode the ids whole with tokenizer.decode"
                )
            self._tokenizer = tokenizer
            self._stream = tokenizer._tok.decode_stream(skip_special_tokens=self.skip_special_tokens)
            if self._prefix:
                self._stream.feed(self._prefix)  # their text was returned by an earlier stream
        elif tokenizer is not self._tokenizer:
            raise _core.ConfigError("a DecodeStream follows one tokenizer; make a new one for another")
        stream = self._stream
        assert stream is not None
        self._prefix.extend(id if isinstance(id, list) else [id])
        self._held += stream.feed(id) if isinstance(id, list) else stream.step(id)
        if stream.incomplete() or not self._held:
            return None
        text, self._held = self._held, ""
        return text


class Decoder(Component):
    """The base of every decoder: `decode(tokens)` gives the text of a list of token strings."""

    _family = "decoder"

    def _check(self) -> None:
        if not self._is_custom():
            self.decode([])

    def _steps(self) -> list[dict[str, Any]]:
        return [self._node]

    def decode(self, tokens: list[str]) -> str:
        """The text of the token strings.

        >>> Metaspace().decode(["▁My", "▁name"])
        'My name'
        """
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("decode takes a list of token strings")
        if self._node.get("type") == CUSTOM:
            return _custom_decode(self._node["object"], list(tokens))
        parts, pending = list(tokens), []
        # ByteLevel joins every token into one text (its bytes, as UTF-8); the steps around it
        # run in Rust, those after it on the joined text.
        for step in self._steps():
            if step.get("type") != "ByteLevel":
                pending.append(step)
                continue
            if pending:
                parts = [_run(pending, parts)]
                pending = []
            parts = [_from_byte_chars(parts)]
        return _run(pending, parts) if pending else "".join(parts)

    @staticmethod
    def custom(decoder: Any) -> Decoder:
        """A decoder whose `decoder.decode_chain(tokens)` gives the decoded piece of each token
        (joined into the text), or, without that method, whose `decoder.decode(tokens)` gives the
        text. It runs in Python; a tokenizer holding one cannot be saved.

        >>> class Dashes:
        ...     def decode_chain(self, tokens):
        ...         return [t.replace("_", " ") for t in tokens]
        >>> Decoder.custom(Dashes()).decode(["_a", "_b"])
        ' a b'
        """
        return Decoder._make(custom_node(decoder))  # type: ignore[no-any-return]


register_custom(Decoder)


def _custom_decode(obj: Any, tokens: list[str]) -> str:
    method = "decode_chain" if hasattr(obj, "decode_chain") or not hasattr(obj, "decode") else "decode"
    out = call_custom("decoder", obj, method, tokens)
    if method == "decode":
        if not isinstance(out, str):
            raise TypeError(f"a custom decoder's decode must return a str, not {type(out).__name__}")
        return out
    if isinstance(out, str) or not isinstance(out, (list, tuple)) or not all(isinstance(t, str) for t in out):
        raise TypeError("a custom decoder's decode_chain must return a list of str")
    return "".join(out)


def _run(steps: list[dict[str, Any]], tokens: list[str]) -> str:
    node = steps[0] if len(steps) == 1 else {"type": "Sequence", "decoders": steps}
    return _core.decode_tokens_with(json.dumps(node, ensure_ascii=False), tokens)


def _from_byte_chars(tokens: list[str]) -> str:
    """Each token's byte characters as its bytes (a token with another character: its UTF-8), all
    joined and decoded as UTF-8, U+FFFD for what is not."""
    from tokenmill.formats.huggingface import CHAR_TO_BYTE

    out = bytearray()
    for token in tokens:
        try:
            out += bytes(CHAR_TO_BYTE[c] for c in token)
        except KeyError:
            out += token.encode("utf-8")
    return out.decode("utf-8", "replace")


class BPEDecoder(Decoder):
    """Character-level BPE's: `suffix` ends a word (a space between words)."""

    _type = "BPEDecoder"
    _fields: ClassVar[dict[str, str]] = {"suffix": "suffix"}

    def __new__(cls, suffix: str = "</w>") -> BPEDecoder:
        return cls._make({"type": "BPEDecoder", "suffix": suffix})  # type: ignore[no-any-return]


class ByteFallback(Decoder):
    """Tokens `<0xNN>` are bytes; their runs decode as UTF-8 (U+FFFD for each invalid byte)."""

    _type = "ByteFallback"

    def __new__(cls) -> ByteFallback:
        return cls._make({"type": "ByteFallback"})  # type: ignore[no-any-return]


class ByteLevel(Decoder):
    """GPT-2's byte characters back to bytes, decoded as UTF-8."""

    _type = "ByteLevel"

    def __new__(cls, **state: Any) -> ByteLevel:
        # The pre-tokenizer's settings, which a state read back passes and the decoder ignores.
        if set(state) - {"type", "add_prefix_space", "trim_offsets", "use_regex"}:
            raise TypeError(f"ByteLevel() got unexpected arguments {sorted(state)}")
        node = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
        return cls._make(node)  # type: ignore[no-any-return]


class CTC(Decoder):
    """Speech models' CTC output: repeats merged, `pad_token` dropped, `word_delimiter_token` a
    space, and with `cleanup` the spacing of punctuation tidied."""

    _type = "CTC"
    _fields: ClassVar[dict[str, str]] = {
        "pad_token": "pad_token",
        "word_delimiter_token": "word_delimiter_token",
        "cleanup": "cleanup",
    }

    def __new__(cls, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> CTC:
        node = {"type": "CTC", "pad_token": pad_token, "word_delimiter_token": word_delimiter_token, "cleanup": cleanup}
        return cls._make(node)  # type: ignore[no-any-return]


class Fuse(Decoder):
    """Joins the tokens into one string (for the steps after it)."""

    _type = "Fuse"

    def __new__(cls) -> Fuse:
        return cls._make({"type": "Fuse"})  # type: ignore[no-any-return]


class Metaspace(Decoder):
    """`replacement` back to spaces, the one put before the text removed (`prepend_scheme`)."""

    _type = "Metaspace"
    _fields: ClassVar[dict[str, str]] = {"replacement": "replacement", "split": "split"}

    def __new__(cls, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> Metaspace:
        from tokenmill.tokenizers.pre_tokenizers import Metaspace as _Pre

        _Pre(replacement, prepend_scheme, split)  # the same checks
        node = {"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split}
        return cls._make(node)  # type: ignore[no-any-return]

    @property
    def prepend_scheme(self) -> str:
        return str(self._node.get("prepend_scheme", "always"))

    @prepend_scheme.setter
    def prepend_scheme(self, value: str) -> None:
        if value not in ("always", "first", "never"):
            raise ValueError(f"{value} is an unknown variant, should be one of ['first', 'never', 'always']")
        self._node["prepend_scheme"] = value
        self._changed()


class Replace(Decoder):
    """Replaces `pattern` (a str, or a `tokenizers.Regex`) by `content` in each token."""

    _type = "Replace"

    def __new__(cls, pattern: Any, content: str) -> Replace:
        return cls._make({"type": "Replace", "pattern": pattern_node(pattern), "content": content})  # type: ignore[no-any-return]


class Strip(Decoder):
    """Removes up to `left` copies of `content` from the start of each token and `right` from its end."""

    _type = "Strip"
    _fields: ClassVar[dict[str, str]] = {"content": "content", "start": "start", "stop": "stop"}

    def __new__(cls, content: str = " ", left: int = 0, right: int = 0) -> Strip:
        return cls._make({"type": "Strip", "content": content, "start": left, "stop": right})  # type: ignore[no-any-return]


class WordPiece(Decoder):
    """WordPiece's: `prefix` joins a piece to the one before; `cleanup` tidies spaces before
    punctuation and in contractions."""

    _type = "WordPiece"
    _fields: ClassVar[dict[str, str]] = {"prefix": "prefix", "cleanup": "cleanup"}

    def __new__(cls, prefix: str = "##", cleanup: bool = True) -> WordPiece:
        return cls._make({"type": "WordPiece", "prefix": prefix, "cleanup": cleanup})  # type: ignore[no-any-return]


class Sequence(Decoder, _Sequence):
    """Decoders applied in order."""

    _type = "Sequence"
    _key = "decoders"

    def __new__(cls, decoders: list[Decoder]) -> Sequence:
        return cls._of(decoders)  # type: ignore[no-any-return]

    def _set_children(self, children: list[Component]) -> None:
        if any(has_custom(getattr(child, "_node", None)) for child in children):
            raise _core.ConfigError(
                "a custom decoder cannot be part of a decoders.Sequence (tokenizers cannot run one there either): "
                "set it alone as the tokenizer's decoder, and do the other steps in its decode_chain"
            )
        super()._set_children(children)

    def _steps(self) -> list[dict[str, Any]]:
        return [step for child in self.__dict__["_children"] for step in child._steps()]
