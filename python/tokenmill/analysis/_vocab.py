"""Per-id facts about a vocabulary that several analyses need: bytes, kind, and whether the token
is a byte token (a SentencePiece byte-fallback piece, or a byte-level token that is not whole
UTF-8 characters: a character the vocabulary spells byte by byte).

>>> table = token_table(tok)   # cl100k_base
>>> table.kinds[0], table.token_bytes[0]
('normal', b'!')
>>> table.kinds[100257], table.token_bytes[100257], table.kinds[100261]
('special', b'<|endoftext|>', None)
>>> sum(table.byte_pieces)   # tokens that are not whole UTF-8 characters
773
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenmill.tokenizer import Tokenizer


@dataclass
class TokenTable:
    token_bytes: list[bytes | None]
    """Each id's bytes (None where no token has that id)."""
    kinds: list[str | None]
    """Each id's kind: normal, special, control, unknown, byte, unused (None: no such id); the
    model's unknown token is ``unknown`` whatever its kind in the vocabulary."""
    byte_pieces: list[bool]
    """Whether each id is a byte token (see the module)."""


def token_table(tok: Tokenizer) -> TokenTable:
    token_bytes, kinds = tok._core.token_table()
    byte_level = tok.byte_level
    byte_pieces = [
        kind == "byte" or (byte_level and kind == "normal" and raw is not None and not _whole_utf8(raw))
        for raw, kind in zip(token_bytes, kinds, strict=True)
    ]
    return TokenTable(token_bytes, kinds, byte_pieces)


def _whole_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
