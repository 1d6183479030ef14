"""The regexes behind the pre-tokenizer presets (as tiktoken ships them), for files that need
a pattern spelled out, and the reverse look-up from a regex to a preset."""

from __future__ import annotations

GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# GPT-2's original spelling, used by Hugging Face's ByteLevel pre-tokenizer; it splits the same
# way as GPT2 above (the possessive form is tiktoken's faster rewrite).
GPT2_ORIGINAL = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Oniguruma (Hugging Face's regex engine) reads `{1,3}+` as "one or more runs of 1-3", not as a
# possessive quantifier; nothing follows it in its alternative, so the plain form is equivalent.
CL100K_ONIGURUMA = CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")

PRESET_PATTERNS = {"gpt2": GPT2, "cl100k": CL100K, "o200k": O200K}
# The spelling to write into Hugging Face files.
ONIGURUMA_PATTERNS = {"gpt2": GPT2, "cl100k": CL100K_ONIGURUMA, "o200k": O200K}
_BY_PATTERN = {GPT2: "gpt2", GPT2_ORIGINAL: "gpt2", CL100K: "cl100k", CL100K_ONIGURUMA: "cl100k", O200K: "o200k"}


def preset_for_pattern(regex: str) -> str | None:
    """The preset that splits exactly as `regex` does, if `regex` is one we know."""
    return _BY_PATTERN.get(regex)
