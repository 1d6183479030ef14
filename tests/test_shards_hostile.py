"""Token-shard directories damaged or edited by hand: `TokenShards` checks every manifest field
against the files it describes before reading, so each damage is a `FormatError` naming the
file and the field — never a crash (a `dtype` of `"O"` once was a segmentation fault), a bare
exception, or ids read wrongly (`"<u2"` over 4-byte ids, a `.bin` cut short)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bounded import bounded, expect_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import ConfigError, CorpusError, FormatError
from tokenmill.shards import TokenShards, encode_corpus

LENGTH = 16


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[int]]]:
    """A directory of two shards with packed rows, and every document's ids."""
    tok = tokenmill.train_bpe(
        iter(["the quick brown fox jumps over the lazy dog " * 50]), vocab_size=300, special_tokens=["<|endoftext|>"]
    )
    docs = [f"document {i}: " + "the fox " * i for i in range(40)]
    out = tmp_path_factory.mktemp("made") / "shards"
    encode_corpus(iter(docs), tok, out, sequence_length=LENGTH, documents_per_shard=25, show_progress=False)
    shards = TokenShards(out)
    ids = [shards.document(i, j).tolist() for i in range(len(shards)) for j in range(len(shards.starts(i)) - 1)]
    return out, ids


def read_everything(out: Path) -> list[list[int]]:
    shards = TokenShards(out)
    ids = []
    for i in range(len(shards)):
        ids += [shards.document(i, j).tolist() for j in range(len(shards.starts(i)) - 1)]
        for row, cu in shards.packed(i):
            assert len(row) == LENGTH and cu[0] == 0 and cu[-1] == LENGTH
    return ids


def copy(made: tuple[Path, Any], tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(made[0], out)
    return out


def edit_manifest(out: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = out / "manifest.json"
    manifest = json.loads(path.read_text("utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest), "utf-8")


def test_an_intact_directory_reads_back(made: tuple[Path, list[list[int]]]) -> None:
    out, ids = made
    assert read_everything(out) == ids
    assert len(TokenShards(out)) == 2


def cut_file(suffix: str, keep: int) -> Callable[[Path], None]:
    def cut(out: Path) -> None:
        f = out / f"00000{suffix}"
        f.write_bytes(f.read_bytes()[:keep])

    return cut


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "object dtype": (lambda o: edit_manifest(o, lambda m: m.update(dtype="O")), "dtype must be"),
    "wider dtype than written": (lambda o: edit_manifest(o, lambda m: m.update(dtype="<u4")), r"00000\.bin: .* bytes"),
    "narrow dtype for a large vocabulary": (
        lambda o: edit_manifest(o, lambda m: m.update(n_vocab=100_000)),
        "cannot hold the ids",
    ),
    "ids beyond n_vocab": (lambda o: edit_manifest(o, lambda m: m.update(n_vocab=5)), "not below n_vocab"),
    "bin cut short": (cut_file(".bin", 10), r"00000\.bin: 10 bytes"),
    "idx cut short": (cut_file(".idx", 20), r"00000\.idx: 20 bytes"),
    "cu cut short": (cut_file(".cu.bin", 4), r"00000\.cu\.bin: 4 bytes"),
    "shard missing": (lambda o: (o / "00001.bin").unlink(), r"00001\.bin: cannot be read"),
    "a directory for a shard": (
        lambda o: ((o / "00001.bin").unlink(), (o / "00001.bin").mkdir()),
        r"00001\.bin: not a regular file",
    ),
    "shards not a list": (lambda o: edit_manifest(o, lambda m: m.update(shards={"a": 1})), "shards must be a list"),
    "negative token count": (
        lambda o: edit_manifest(o, lambda m: m["shards"][0].update(tokens=-3)),
        r"shards\[0\]\.tokens must be",
    ),
    "index given twice": (
        lambda o: edit_manifest(o, lambda m: m["shards"][1].update(index=m["shards"][0]["index"])),
        "listed twice",
    ),
    "rows without sequence_length": (
        lambda o: edit_manifest(o, lambda m: m.update(sequence_length=None)),
        "rows is given without sequence_length",
    ),
    "starts out of order": (
        lambda o: (o / "00000.idx").write_bytes((o / "00000.idx").read_bytes()[::-1]),
        "document starts must rise",
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_each_damage_is_a_format_error_naming_where(made: tuple[Path, Any], tmp_path: Path, damage: str) -> None:
    out = copy(made, tmp_path)
    do, message = DAMAGE[damage]
    do(out)
    with pytest.raises(FormatError, match=message):
        read_everything(out)


def test_indices_out_of_range_say_so(made: tuple[Path, Any]) -> None:
    shards = TokenShards(made[0])
    with pytest.raises(IndexError, match="shard 2 out of range"):
        shards.tokens(2)
    with pytest.raises(IndexError, match="document 99 out of range"):
        shards.document(0, 99)
    assert shards.document(-1, -1).tolist() == made[1][-1]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
FIELDS = ["n_vocab", "dtype", "sequence_length", "shards", "end_of_document", "tokens"]
ENTRY_FIELDS = ["index", "documents", "tokens", "rows", "cu_seqlens"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    where=st.one_of(
        st.sampled_from(FIELDS).map(lambda f: (None, f)), st.tuples(st.integers(0, 1), st.sampled_from(ENTRY_FIELDS))
    ),
    value=JSON,
)
def test_any_value_in_any_field_reads_right_or_fails_cleanly(
    made: tuple[Path, list[list[int]]], tmp_path: Path, where: tuple[int | None, str], value: Any
) -> None:
    out = tmp_path / "any"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(made[0], out)
    shard, field = where
    edit_manifest(out, lambda m: (m if shard is None else m["shards"][shard]).update({field: value}))
    expect_clean(bounded(_reads_what_was_written, out, made[1]), (FormatError, ConfigError, CorpusError), where)


def _reads_what_was_written(out: Path, written: list[list[int]]) -> None:
    """Run in a bounded child: whatever is accepted reads the ids that were written (or, with
    shards edited away, fewer)."""
    ids = read_everything(out)
    assert ids == written[: len(ids)] or ids == written[-len(ids) :]


def test_resuming_over_a_damaged_manifest_is_a_format_error(made: tuple[Path, Any], tmp_path: Path) -> None:
    out = copy(made, tmp_path)
    edit_manifest(out, lambda m: m["shards"].append("not an entry"))
    tok = tokenmill.train_bpe(iter(["the quick brown fox"]), vocab_size=270, special_tokens=["<|endoftext|>"])
    with pytest.raises(FormatError, match=r"shards\[2\] must be an object"):
        encode_corpus(iter(["a"]), tok, out, show_progress=False)


def test_a_killed_runs_temporary_files_are_removed_on_resume(made: tuple[Path, Any], tmp_path: Path) -> None:
    """Temporary files of a writer that is gone (SIGKILL), untouched for a while, are removed
    when the next run starts — those of shards kept on resume and of the manifest included; a
    recent one (perhaps a live writer on another machine) and other files stay."""
    import os
    import subprocess
    import sys
    import time

    out = copy(made, tmp_path)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    gone, old = child.pid, time.time() - 3600
    stale = [out / f".00000.bin.{gone}.0badf00d.tmp", out / f".00001.cu.idx.{gone}.1badf00d.tmp"]
    stale.append(out / f".manifest.json.{gone}.2badf00d.tmp")
    kept = [out / f".00000.idx.{gone}.3badf00d.tmp", out / f".notes.txt.{gone}.4badf00d.tmp"]
    for p in stale + kept:
        p.write_bytes(b"partial")
    for p in stale + kept[1:]:
        os.utime(p, (old, old))
    tok = tokenmill.train_bpe(
        iter(["the quick brown fox jumps over the lazy dog " * 50]), vocab_size=300, special_tokens=["<|endoftext|>"]
    )
    docs = [f"document {i}: " + "the fox " * i for i in range(40)]
    encode_corpus(iter(docs), tok, out, sequence_length=LENGTH, documents_per_shard=25, show_progress=False)
    assert not any(p.exists() for p in stale) and all(p.exists() for p in kept)
    assert read_everything(out) == made[1]
