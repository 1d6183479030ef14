"""tiktoken's `.tiktoken` files: one `<base64 token> <rank>` per line; a token's rank is its id."""

from __future__ import annotations

import base64
import binascii
import gzip
import os
from collections.abc import Mapping
from pathlib import Path

from tokenmill import _core
from tokenmill._files import write_atomically

# Special tokens of OpenAI's published encodings, used when `special_tokens` is not given.
OPENAI_SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    "gpt2": {"<|endoftext|>": 50256},
    "r50k_base": {"<|endoftext|>": 50256},
    "p50k_base": {"<|endoftext|>": 50256},
    "p50k_edit": {"<|endoftext|>": 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283},
    "cl100k": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
OPENAI_SPECIAL_TOKENS["cl100k_base"] = OPENAI_SPECIAL_TOKENS["cl100k"]
OPENAI_SPECIAL_TOKENS["o200k_base"] = OPENAI_SPECIAL_TOKENS["o200k"]


def read_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Parses a `.tiktoken` file (or `.tiktoken.gz`); errors name the file and line."""
    p = Path(path)
    try:
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
    except FileNotFoundError:
        raise _core.CorpusError(f"{p}: no such file") from None
    except (OSError, EOFError) as e:
        raise _core.FormatError(f"{p}: not a valid tiktoken file: {e}") from None
    return parse_ranks(raw, str(p))


def parse_ranks(raw: bytes, p: str) -> dict[bytes, int]:
    """Parses the contents of a `.tiktoken` file; `p` names its source in errors."""
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            raise _core.FormatError(f"{p}:{lineno}: not a valid tiktoken file: expected '<base64 token> <rank>'")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except (binascii.Error, ValueError):
            raise _core.FormatError(f"{p}:{lineno}: not a valid tiktoken file: bad base64 {fields[0][:40]!r}") from None
        rank = int(fields[1])
        if token in ranks:
            raise _core.FormatError(f"{p}:{lineno}: not a valid tiktoken file: token {token!r} appears twice")
        if rank in seen_ranks:
            raise _core.FormatError(
                f"{p}:{lineno}: not a valid tiktoken file: rank {rank} already used on line {seen_ranks[rank]}"
            )
        ranks[token] = rank
        seen_ranks[rank] = lineno
    if not ranks:
        raise _core.FormatError(f"{p}: not a valid tiktoken file: no tokens")
    return ranks


def token_pairs(ranks: Mapping[bytes, int]) -> list[tuple[int, bytes]]:
    """`(rank, token)` pairs; checks that ranks are unique ints that fit an id (0 to 2³²−2)."""
    if not ranks:
        raise _core.FormatError("<ranks>: not a valid tiktoken vocabulary: no tokens")
    pairs = []
    seen: dict[int, bytes] = {}
    for token, rank in ranks.items():
        if not isinstance(token, bytes) or isinstance(rank, bool) or not isinstance(rank, int):
            raise _core.ConfigError(f"ranks must map bytes to int; got {token!r}: {rank!r}")
        if not 0 <= rank < 2**32 - 1:
            raise _core.ConfigError(f"rank {rank} of {token!r} is not an id (0 to {2**32 - 2})")
        if rank in seen:
            raise _core.ConfigError(f"rank {rank} is given to both {seen[rank]!r} and {token!r}")
        seen[rank] = token
        pairs.append((rank, token))
    return pairs


def write_ranks(path: str | os.PathLike[str], tokens: list[tuple[int, bytes]]) -> None:
    """Writes `(rank, token)` pairs as a `.tiktoken` file, atomically."""
    write_atomically(path, b"".join(base64.b64encode(t) + b" " + str(r).encode() + b"\n" for r, t in sorted(tokens)))
