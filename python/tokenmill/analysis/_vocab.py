"""Per-id facts about a vocabulary that several analyses need: bytes, kind, and whether the token
is a byte token (a SentencePiece byte-fallback piece, or a byte-level token that is not whole
UTF-8 characters: a character the vocabulary spells byte by byte).

>>> table = token_table(tok)              # doctest: +SKIP
>>> table.kinds[0], table.token_bytes[0]   # doctest: +SKIP
('normal', b'!')
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenmill import _core
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
    n = tok.n_vocab
    token_bytes: list[bytes | None] = []
    kinds: list[str | None] = []
    byte_pieces: list[bool] = []
    byte_level = tok.byte_level
    for i in range(n):
        try:
            kind: str | None = tok.token_kind(i)
            raw: bytes | None = tok.decode_single_token_bytes(i)
        except _core.TokenIdError:
            kind, raw = None, None
        token_bytes.append(raw)
        kinds.append(kind)
        byte_pieces.append(
            kind == "byte" or (byte_level and kind == "normal" and raw is not None and not _whole_utf8(raw))
        )
    # WordPiece (and character-level BPE) keep their unknown token among the special tokens;
    # what matters here is that the model emits it for text it cannot spell.
    unk = tok.model_config().get("unk_token")
    unk_id = tok.token_to_id(unk) if isinstance(unk, str) else None
    if unk_id is not None and unk_id < n:
        kinds[unk_id] = "unknown"
    return TokenTable(token_bytes, kinds, byte_pieces)


def _whole_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
