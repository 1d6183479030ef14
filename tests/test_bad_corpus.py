"""Bad corpora: each either trains correctly or raises a tokenmill error that names the file."""

from __future__ import annotations

import gzip
import os
import random
import re
import socket
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

import tokenmill
from tokenmill import CorpusError, FormatError
from tokenmill.cli import _read_sample

import reference_bpe


def first_bad_utf8(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start
    raise AssertionError("data is valid UTF-8")


def test_binary_file_trains_byte_level_and_names_file_and_offset_char_level(tmp_path: Path) -> None:
    data = b"plain start " + random.Random(0).randbytes(100_000) + b"\x00" * 1000
    blob = tmp_path / "blob.bin"
    blob.write_bytes(data)
    tok = tokenmill.train_bpe(str(blob), vocab_size=300)
    assert tok.vocab_size == 300
    text = data.decode("utf-8", errors="ignore")
    assert tok.decode(tok.encode_ordinary(text)) == text
    good = tmp_path / "good.txt"
    good.write_text("fine text " * 100)
    offset = first_bad_utf8(data)
    assert offset >= len(b"plain start ")
    with pytest.raises(CorpusError, match=rf"blob\.bin: invalid UTF-8 at byte offset {offset}$"):
        tokenmill.train_bpe([str(good), str(blob)], vocab_size=300, byte_level=False)


def test_binary_file_counts_in_memory_near_its_size(tmp_path: Path) -> None:
    # Random bytes break into millions of short valid runs; memory must follow the file's size
    # and the words found, not hold per-run lists (which once took about 20 times the file).
    path = tmp_path / "random.bin"
    path.write_bytes(random.Random(2).randbytes(20_000_000))
    script = (
        "import resource, sys, tokenmill\n"
        "tokenmill.count_words(['warm up'])\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "tokenmill.count_words(sys.argv[1])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    grown_bytes = int(result.stdout) * 1024
    assert grown_bytes < 10 * 20_000_000, f"counting a 20 MB binary file took {grown_bytes / 1e6:.0f} MB more"


def test_twenty_megabytes_without_a_newline(tmp_path: Path) -> None:
    rng = random.Random(1)
    lexicon = ["".join(rng.choices("abcdefghij", k=rng.randint(2, 8))) for _ in range(3000)]
    words = rng.choices(lexicon, k=3_300_000)
    path = tmp_path / "one_line.txt"
    path.write_text(" ".join(words))
    assert path.stat().st_size > 19_000_000
    # With no newline there is no safe cut, so one thread counts it all: slower, still linear.
    start = time.perf_counter()
    counts = tokenmill.count_words(str(path))
    assert time.perf_counter() - start < 60
    expected = Counter(" " + w for w in words[1:])
    expected[words[0]] += 1
    assert counts.total == len(words) and len(counts) == len(expected)
    assert all(counts[w] == n for w, n in expected.items())
    tok = tokenmill.train_bpe(counts, num_merges=40)
    assert tok.merges == reference_bpe.train({w.encode(): n for w, n in expected.items()}, num_merges=40)


def test_cli_sample_reads_only_what_it_needs(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 20_000_000)
    tracemalloc.start()
    try:
        sample = _read_sample([path], limit=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(sample) == 1 << 20
    assert peak < 4 << 20, f"read {peak} bytes for a 1 MiB sample"
    packed = tmp_path / "packed.txt.gz"
    packed.write_bytes(gzip.compress(b"hello " * 1000))
    assert _read_sample([packed], limit=12) == "hello hello "


@pytest.mark.parametrize("byte_level", [True, False])
def test_one_repeated_word_stops_early(tmp_path: Path, byte_level: bool) -> None:
    path = tmp_path / "abc.txt"
    path.write_text("abc " * 10**6)
    start = time.perf_counter()
    tok = tokenmill.train_bpe(str(path), vocab_size=1000, byte_level=byte_level)
    assert time.perf_counter() - start < 60
    # Words: "abc" once, " abc" 999,999 times, a final " ". Three merges and no pair is left.
    assert tok.merges == [(b"a", b"b"), (b"ab", b"c"), (b" ", b"abc")]
    assert tok.vocab_size == (256 if byte_level else 4) + 3
    assert tokenmill.train_bpe(str(path), num_merges=500, byte_level=byte_level).merges == tok.merges


def test_empty_files_among_good_ones_are_as_if_absent(tmp_path: Path, stdlib_text: str) -> None:
    good = [tmp_path / "a.txt", tmp_path / "b.txt"]
    good[0].write_text(stdlib_text[:30_000])
    good[1].write_text(stdlib_text[30_000:60_000])
    empty = [tmp_path / "empty.txt", tmp_path / "empty.txt.gz", tmp_path / "nothing.txt.gz", tmp_path / "empty.zst"]
    empty[0].write_bytes(b"")
    empty[1].write_bytes(b"")  # a zero-byte file, whatever its name, holds no text
    empty[2].write_bytes(gzip.compress(b""))
    empty[3].write_bytes(b"")
    files = [str(good[0]), *map(str, empty[:2]), str(good[1]), *map(str, empty[2:])]
    with_empty = tokenmill.train_bpe(files, num_merges=100)
    assert with_empty.merges == tokenmill.train_bpe(list(map(str, good)), num_merges=100).merges
    char_level = tokenmill.train_bpe(files, num_merges=20, byte_level=False)
    assert char_level.merges == tokenmill.train_bpe(list(map(str, good)), num_merges=20, byte_level=False).merges


def test_a_path_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("some text " * 50)
    # A socket exists but cannot be opened for reading, even by root.
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(CorpusError, match=r"s\.sock: "):
            tokenmill.train_bpe([str(good), str(sock_path)], vocab_size=300)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_named(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("some text " * 50)
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")
    locked.chmod(0)
    try:
        with pytest.raises(CorpusError, match=r"locked\.txt: Permission denied"):
            tokenmill.train_bpe([str(good), str(locked)], vocab_size=300)
    finally:
        locked.chmod(0o600)


def test_broken_compressed_files_are_named(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("some text " * 50)
    packed = gzip.compress(b"some text " * 1000)
    cases = {
        "cut.txt.gz": (packed[: len(packed) // 2], "gzip"),
        "no_trailer.txt.gz": (packed[:-4], "gzip"),
        "plain.txt.gz": (b"not compressed at all", "gzip"),
    }
    zstandard = pytest.importorskip("zstandard")
    packed_zst = zstandard.ZstdCompressor().compress(b"some text " * 1000)
    cases["cut.txt.zst"] = (packed_zst[:-3], "zstd")
    for name, (data, fmt) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(FormatError, match=rf"{re.escape(name)}: not a valid {fmt} file"):
            tokenmill.train_bpe([str(good), str(tmp_path / name)], vocab_size=300)
