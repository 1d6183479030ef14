"""Vocabulary files fetched from where tiktoken fetches them and cached where tiktoken caches them.

The cache is shared with tiktoken: the directory is ``$TIKTOKEN_CACHE_DIR``, else
``$DATA_GYM_CACHE_DIR``, else ``<temp dir>/data-gym-cache`` (an empty value turns caching off),
and a file's name there is the SHA-1 of its URL. So a file tiktoken downloaded once is read
here without the network, and the other way round. Contents are checked against the SHA-256
that the encoding pins before they are used or cached.

>>> ranks = load_tiktoken_bpe("cl100k_base.tiktoken")
>>> ranks[b"hello"], len(ranks)
(15339, 100256)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.request

from tokenmill import _core
from tokenmill._files import write_atomically
from tokenmill.formats import huggingface as hf
from tokenmill.formats import tiktoken as tt


class HashMismatchError(_core.FormatError):
    """A vocabulary file's SHA-256 is not the one its encoding pins (a `ValueError`, as in tiktoken)."""


def read_file(blobpath: str) -> bytes:
    """The bytes of a local path, an http(s) URL, or (with `blobfile` installed) a cloud path."""
    if "://" not in blobpath:
        with open(blobpath, "rb") as f:
            return f.read()
    if blobpath.startswith(("http://", "https://")):
        with urllib.request.urlopen(blobpath, timeout=60) as response:  # noqa: S310 (scheme checked above)
            return response.read()
    try:
        import blobfile
    except ImportError as e:
        raise ImportError(f"reading {blobpath} needs blobfile: pip install blobfile") from e
    return blobfile.read_bytes(blobpath)


def check_hash(data: bytes, expected_hash: str) -> bool:
    return hashlib.sha256(data).hexdigest() == expected_hash


def cache_dir() -> tuple[str, bool]:
    """The cache directory and whether the user chose it (then failing to write there is an error)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable], True
    return os.path.join(tempfile.gettempdir(), "data-gym-cache"), False


def cache_path(blobpath: str) -> str | None:
    """Where the copy of `blobpath` lives in the cache (None when caching is off)."""
    directory, _ = cache_dir()
    if directory == "":
        return None
    return os.path.join(directory, hashlib.sha1(blobpath.encode()).hexdigest())


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """`read_file` through the shared cache. A cached copy with the wrong hash is dropped and
    fetched again; fetched bytes with the wrong hash raise `HashMismatchError` and are not cached."""
    directory, chosen = cache_dir()
    path = cache_path(blobpath)
    if path is None:
        return _checked(read_file(blobpath), blobpath, expected_hash)
    # Only a regular file is a cached copy: a FIFO or device there would block or never end.
    if os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
        try:
            os.remove(path)
        except OSError:
            pass
    data = _checked(read_file(blobpath), blobpath, expected_hash)
    try:
        os.makedirs(directory, exist_ok=True)
        write_atomically(path, data)
    except (OSError, _core.TokenmillError):
        # A default cache we cannot write to (a shared /tmp, say) only costs a download next time.
        if chosen:
            raise
    return data


def _checked(data: bytes, blobpath: str, expected_hash: str | None) -> bytes:
    if expected_hash and not check_hash(data, expected_hash):
        raise HashMismatchError(
            f"{blobpath}: SHA-256 is {hashlib.sha256(data).hexdigest()}, expected {expected_hash}; "
            "the download is damaged or the file has changed, so it was not cached"
        )
    return data


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Token bytes → rank from a `.tiktoken` file (path or URL), through the cache."""
    return tt.parse_ranks(read_file_cached(tiktoken_bpe_file, expected_hash), tiktoken_bpe_file)


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Writes `bpe_ranks` as a `.tiktoken` file (atomically when it is a local path)."""
    if "://" in tiktoken_bpe_file:
        import blobfile

        with blobfile.BlobFile(tiktoken_bpe_file, "wb") as f:
            f.write(_tiktoken_text(bpe_ranks))
        return
    tt.write_ranks(tiktoken_bpe_file, [(rank, token) for token, rank in bpe_ranks.items()])


def _tiktoken_text(bpe_ranks: dict[bytes, int]) -> bytes:
    import base64

    lines = sorted((rank, token) for token, rank in bpe_ranks.items())
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in lines)


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """Ranks from GPT-2's original pair of files (`vocab.bpe` merges, `encoder.json` ids).

    The 256 single bytes come first, in the order of GPT-2's printable-characters table, then one
    token per merge line; `encoder.json` must give every token the same id, or the files do not
    belong together and a `FormatError` says which token differs.
    """
    merges_text = read_file_cached(vocab_bpe_file, vocab_bpe_hash).decode()
    # The first line is a version comment; the file ends with a newline.
    merges = [tuple(line.split()) for line in merges_text.split("\n")[1:-1]]

    def to_bytes(text: str) -> bytes:
        return hf.text_to_token(text, vocab_bpe_file)

    # GPT-2's byte table lists the printable bytes first, then the rest: that order is the rank.
    byte_order = sorted(range(256), key=lambda b: (ord(hf.BYTE_TO_CHAR[b]) >= 0x100, ord(hf.BYTE_TO_CHAR[b])))
    ranks = {bytes([b]): rank for rank, b in enumerate(byte_order)}
    for first, second in merges:
        ranks[to_bytes(first) + to_bytes(second)] = len(ranks)

    encoder = json.loads(read_file_cached(encoder_json_file, encoder_json_hash))
    ids = {hf.text_to_token(text, encoder_json_file): i for text, i in encoder.items()}
    for special in (b"<|endoftext|>", b"<|startoftext|>"):
        ids.pop(special, None)
    if clobber_one_byte_tokens:
        ranks.update((token, i) for token, i in ids.items() if len(token) == 1)
    if ranks != ids:
        differ = next((t for t in ranks.keys() | ids.keys() if ranks.get(t) != ids.get(t)), None)
        raise _core.FormatError(
            f"{encoder_json_file} does not match {vocab_bpe_file}: token {differ!r} has id "
            f"{ids.get(differ)} there but rank {ranks.get(differ)} from the merges"
        )
    return ranks
