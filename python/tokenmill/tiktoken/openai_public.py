"""OpenAI's published encodings: where each vocabulary file lives, its pinned SHA-256, the
pre-tokenizer regex and the special tokens. The same definitions tiktoken uses, so ids agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokenmill.pretokenize_patterns import CL100K, GPT2, O200K
from tokenmill.tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_BLOB = "https://openaipublic.blob.core.windows.net"
R50K_URL, R50K_SHA256 = (
    f"{_BLOB}/encodings/r50k_base.tiktoken",
    ("306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
)
P50K_URL, P50K_SHA256 = (
    f"{_BLOB}/encodings/p50k_base.tiktoken",
    ("94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
)
CL100K_URL, CL100K_SHA256 = (
    f"{_BLOB}/encodings/cl100k_base.tiktoken",
    ("223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
)
O200K_URL, O200K_SHA256 = (
    f"{_BLOB}/encodings/o200k_base.tiktoken",
    ("446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
)
GPT2_VOCAB_BPE_URL, GPT2_VOCAB_BPE_SHA256 = (
    f"{_BLOB}/gpt-2/encodings/main/vocab.bpe",
    ("1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
)
GPT2_ENCODER_JSON_URL, GPT2_ENCODER_JSON_SHA256 = (
    f"{_BLOB}/gpt-2/encodings/main/encoder.json",
    ("196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"),
)


def gpt2() -> dict[str, Any]:
    ranks = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=GPT2_VOCAB_BPE_URL,
        encoder_json_file=GPT2_ENCODER_JSON_URL,
        vocab_bpe_hash=GPT2_VOCAB_BPE_SHA256,
        encoder_json_hash=GPT2_ENCODER_JSON_SHA256,
    )
    specials = {ENDOFTEXT: 50256}
    return {
        "name": "gpt2",
        "explicit_n_vocab": 50257,
        "pat_str": GPT2,
        "mergeable_ranks": ranks,
        "special_tokens": specials,
    }


def r50k_base() -> dict[str, Any]:
    ranks = load_tiktoken_bpe(R50K_URL, expected_hash=R50K_SHA256)
    specials = {ENDOFTEXT: 50256}
    return {
        "name": "r50k_base",
        "explicit_n_vocab": 50257,
        "pat_str": GPT2,
        "mergeable_ranks": ranks,
        "special_tokens": specials,
    }


def p50k_base() -> dict[str, Any]:
    ranks = load_tiktoken_bpe(P50K_URL, expected_hash=P50K_SHA256)
    specials = {ENDOFTEXT: 50256}
    return {
        "name": "p50k_base",
        "explicit_n_vocab": 50281,
        "pat_str": GPT2,
        "mergeable_ranks": ranks,
        "special_tokens": specials,
    }


def p50k_edit() -> dict[str, Any]:
    ranks = load_tiktoken_bpe(P50K_URL, expected_hash=P50K_SHA256)
    specials = {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}
    return {"name": "p50k_edit", "pat_str": GPT2, "mergeable_ranks": ranks, "special_tokens": specials}


def cl100k_base() -> dict[str, Any]:
    ranks = load_tiktoken_bpe(CL100K_URL, expected_hash=CL100K_SHA256)
    specials = {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276}
    return {"name": "cl100k_base", "pat_str": CL100K, "mergeable_ranks": ranks, "special_tokens": specials}


def o200k_base() -> dict[str, Any]:
    ranks = load_tiktoken_bpe(O200K_URL, expected_hash=O200K_SHA256)
    specials = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    return {"name": "o200k_base", "pat_str": O200K, "mergeable_ranks": ranks, "special_tokens": specials}


def o200k_harmony() -> dict[str, Any]:
    """o200k_base's vocabulary with the chat-format tokens of the gpt-oss models. Id 200018 has two
    spellings, `<|endofprompt|>` (from o200k_base, listed first, so decoding gives it) and
    `<|reserved_200018|>`; both are matched in text."""
    base = o200k_base()
    named = {
        "<|startoftext|>": 199998,
        ENDOFTEXT: 199999,
        "<|reserved_200000|>": 200000,
        "<|reserved_200001|>": 200001,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|reserved_200004|>": 200004,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|reserved_200009|>": 200009,
        "<|reserved_200010|>": 200010,
        "<|reserved_200011|>": 200011,
        "<|call|>": 200012,
    }
    reserved = {f"<|reserved_{i}|>": i for i in range(200013, 201088)}
    specials = {**base["special_tokens"], **named, **reserved}
    return {**base, "name": "o200k_harmony", "special_tokens": specials}


ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] = {
    "gpt2": gpt2,
    "r50k_base": r50k_base,
    "p50k_base": p50k_base,
    "p50k_edit": p50k_edit,
    "cl100k_base": cl100k_base,
    "o200k_base": o200k_base,
    "o200k_harmony": o200k_harmony,
}
