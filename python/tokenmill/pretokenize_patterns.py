"""The regexes behind the pre-tokenizer presets, for files that need a pattern spelled out, and
the reverse look-up from a regex to a preset. The patterns live in the Rust core
(`src/pipeline/pretokenize/mod.rs`): OpenAI's as tiktoken ships them, the open models' as their
`tokenizer.json` files spell them.

Llama 3 splits as cl100k except that trailing whitespace holding a newline is cut after the
newline; Qwen 2/2.5/3 as Llama 3 with one digit per piece; Mistral's tekken as o200k without
contractions and with one digit per piece.
"""

from __future__ import annotations

from tokenmill import _core

PRESET_PATTERNS: dict[str, str] = dict(_core.PRESET_PATTERNS)
GPT2 = PRESET_PATTERNS["gpt2"]
CL100K = PRESET_PATTERNS["cl100k"]
O200K = PRESET_PATTERNS["o200k"]
LLAMA3 = PRESET_PATTERNS["llama3"]
QWEN2 = PRESET_PATTERNS["qwen2"]
TEKKEN = PRESET_PATTERNS["tekken"]

# Splits applied in turn (each to the pieces of the one before): this prefix and a JSON list.
CHAIN_PREFIX = "chain:"
# Hugging Face's splitting pre-tokenizers as tokenizer.json spells them: this prefix and the JSON.
HF_PREFIX = "hf:"

# Oniguruma (Hugging Face's regex engine) reads `{1,3}+` as "one or more runs of 1-3", not as a
# possessive quantifier; nothing follows it in its alternative, so the plain form is equivalent.
CL100K_ONIGURUMA = CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
# The spelling to write into Hugging Face files.
ONIGURUMA_PATTERNS = {**PRESET_PATTERNS, "cl100k": CL100K_ONIGURUMA}


def preset_for_pattern(regex: str) -> str | None:
    """The preset that splits exactly as `regex` does, if `regex` is spelled as one we know.

    >>> preset_for_pattern(LLAMA3)
    'llama3'
    """
    return _core.preset_for_pattern(regex)
