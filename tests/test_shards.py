"""Token shards: the layout read back with numpy equals `encode`, resuming never duplicates, and
nothing half-written is taken as complete."""

from __future__ import annotations

import errno
import json
from array import array

import numpy as np
import pytest

import tokenmill
from tokenmill import ConfigError, CorpusError, FormatError
from tokenmill.shards import TokenShards, encode_corpus, packed_rows

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def tok(stdlib_text):
    return tokenmill.train_bpe(iter([stdlib_text[:300_000]]), vocab_size=600, special_tokens=[EOT])


@pytest.fixture(scope="module")
def cl100k():
    from vocab_files import vocabulary_path

    return tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base")


@pytest.fixture(scope="module")
def docs(stdlib_text):
    # Documents of varied sizes, one empty, one holding special-token text.
    sizes = [0, 1, 17, 500, 3000, 120, 9000, 64, 2, 700] * 6
    out, at = [], 0
    for n in sizes:
        out.append(stdlib_text[at : at + n])
        at += n
    out[5] = "before <|endoftext|> after"
    return out


@pytest.fixture()
def files(tmp_path, docs):
    """The documents in three Parquet files and one JSON Lines file, in order."""
    paths = []
    for i in range(3):
        p = tmp_path / f"in{i}.parquet"
        pq.write_table(pa.table({"text": docs[i * 15 : (i + 1) * 15]}), p)
        paths.append(p)
    p = tmp_path / "in3.jsonl"
    p.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs[45:]), encoding="utf-8")
    return paths + [p]


def _expected(tok, docs, eot):
    return [tok.encode_ordinary(d) + [eot] for d in docs]


def _read_all(out):
    shards = TokenShards(out)
    return [shards.document(i, j).tolist() for i in range(len(shards)) for j in range(len(shards.starts(i)) - 1)]


def _snapshot(out):
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_the_layout_read_with_numpy_gives_encode_ordinary_and_an_end_of_document_id(tok, files, docs, tmp_path):
    out = tmp_path / "out"
    m = encode_corpus(files, tok, out, text_field="text", show_progress=False)
    eot = tok.special_tokens[EOT]
    assert m["complete"] and m["dtype"] == "<u2" and m["end_of_document"] == eot
    assert m["documents"] == len(docs) == sum(s["documents"] for s in m["shards"])
    expected = _expected(tok, docs, eot)
    assert m["tokens"] == sum(map(len, expected))
    assert sorted(p.name for p in out.iterdir()) == [
        "00000.bin", "00000.idx", "00001.bin", "00001.idx", "00002.bin", "00002.idx",
        "00003.bin", "00003.idx", "manifest.json",
    ]  # fmt: skip
    # Raw numpy reading, as the module docstring says, with no tokenmill code.
    ids = np.concatenate([np.memmap(out / f"0000{i}.bin", dtype="<u2", mode="r") for i in range(4)])
    assert ids.tolist() == [t for e in expected for t in e]
    starts = np.fromfile(out / "00000.idx", dtype="<u8")
    assert starts[0] == 0 and len(starts) == 16
    assert np.diff(starts).tolist() == [len(e) for e in expected[:15]]
    assert _read_all(out) == expected
    assert json.loads((out / "manifest.json").read_text()) == m


def test_uint32_when_the_vocabulary_passes_65536_and_allowed_special(cl100k, tmp_path):
    texts = ["hello <|endoftext|> world", "", "Ünïcödé"]
    m = encode_corpus(iter(texts), cl100k, tmp_path / "a", show_progress=False)
    assert m["dtype"] == "<u4" and m["n_vocab"] == cl100k.n_vocab > 65536
    assert np.memmap(tmp_path / "a" / "00000.bin", dtype="<u4", mode="r").tolist() == [
        t for d in texts for t in cl100k.encode_ordinary(d) + [100257]
    ]
    encode_corpus(iter(texts), cl100k, tmp_path / "b", allowed_special="all", show_progress=False)
    first = TokenShards(tmp_path / "b").document(0, 0).tolist()
    assert first == cl100k.encode(texts[0], allowed_special="all") + [100257]


def test_in_memory_corpora_are_cut_into_shards_of_n_documents(tok, docs, tmp_path):
    eot = tok.special_tokens[EOT]
    m = encode_corpus(iter(docs), tok, tmp_path / "s", documents_per_shard=7, show_progress=False)
    assert [s["documents"] for s in m["shards"]] == [7] * 8 + [4]
    assert m["shards"][1]["source"] == "documents 7..14"
    assert _read_all(tmp_path / "s") == _expected(tok, docs, eot)
    # An Arrow table and dicts give the same shards as the strings.
    table = pa.table({"text": docs})
    encode_corpus(table, tok, tmp_path / "t", documents_per_shard=7, show_progress=False)
    encode_corpus(({"text": d} for d in docs), tok, tmp_path / "d", documents_per_shard=7, show_progress=False)
    assert _snapshot(tmp_path / "t") == _snapshot(tmp_path / "s") == _snapshot(tmp_path / "d")


def test_packed_rows_hand_checked():
    # Documents of 3, 7 and 2 tokens in rows of 4: [d0 d0 d0 d1] [d1 d1 d1 d1] [d1 d1 d2 d2]
    cu, rows = packed_rows(array("Q", [0, 3, 10, 12]), 4)
    assert list(rows) == [0, 3, 5, 8]
    assert [list(cu[rows[r] : rows[r + 1]]) for r in range(3)] == [[0, 3, 4], [0, 4], [0, 2, 4]]
    cu, rows = packed_rows(array("Q", [0, 5]), 4)  # one row, one token left over
    assert (list(cu), list(rows)) == ([0, 4], [0, 2])


def test_packed_sequences_on_disk(tok, docs, tmp_path):
    m = encode_corpus(iter(docs), tok, tmp_path, sequence_length=64, show_progress=False)
    shard = m["shards"][0]
    assert shard["rows"] == m["tokens"] // 64 and shard["unpacked_tokens"] == m["tokens"] % 64
    shards = TokenShards(tmp_path)
    eot = tok.special_tokens[EOT]
    all_ids = shards.tokens(0)
    for r, (row, cu) in enumerate(shards.packed(0)):
        assert row.tolist() == all_ids[r * 64 : (r + 1) * 64].tolist()
        assert cu[0] == 0 and cu[-1] == 64 and cu.dtype == np.int32
        # The inner boundaries are exactly the places after an end-of-document id.
        assert cu[1:-1].tolist() == [k + 1 for k in range(63) if row[k] == eot]
    assert r + 1 == shard["rows"]


def test_an_interrupted_run_resumes_without_duplicates(tok, files, tmp_path, monkeypatch):
    whole = tmp_path / "whole"
    encode_corpus(files, tok, whole, text_field="text", show_progress=False)
    out = tmp_path / "out"
    import tokenmill.shards as shards

    real = shards.encode_part
    calls = []

    def stop_at_third(part, *args, **kwargs):
        calls.append(part.index)
        if part.index == 2:
            raise KeyboardInterrupt
        return real(part, *args, **kwargs)

    monkeypatch.setattr(shards, "encode_part", stop_at_third)
    with pytest.raises(KeyboardInterrupt):
        encode_corpus(files, tok, out, text_field="text", show_progress=False)
    m = json.loads((out / "manifest.json").read_text())
    assert not m["complete"] and [s["index"] for s in m["shards"]] == [0, 1]
    calls.clear()
    monkeypatch.setattr(shards, "encode_part", lambda part, *a, **k: calls.append(part.index) or real(part, *a, **k))
    encode_corpus(files, tok, out, text_field="text", show_progress=False)
    assert calls == [2, 3]  # the complete shards were kept, not encoded again
    assert _snapshot(out) == _snapshot(whole)


def test_a_shard_the_manifest_lists_but_that_is_damaged_is_encoded_again(tok, files, tmp_path):
    out = tmp_path / "out"
    encode_corpus(files, tok, out, text_field="text", show_progress=False)
    whole = _snapshot(out)
    with open(out / "00001.bin", "r+b") as f:
        f.truncate(10)
    (out / "00002.idx").unlink()
    encode_corpus(files, tok, out, text_field="text", show_progress=False)
    assert _snapshot(out) == whole


def test_a_full_disk_leaves_no_partial_shard(tok, files, tmp_path, monkeypatch):
    out = tmp_path / "out"
    import tokenmill.shards as shards

    real_write = shards.ShardWriter.write
    written = []

    def fill_up(self, data):
        if self.path.name == "00001.bin":
            raise shards._write_error(self.path, OSError(errno.ENOSPC, "No space left on device"))
        written.append(self.path.name)
        real_write(self, data)

    monkeypatch.setattr(shards.ShardWriter, "write", fill_up)
    with pytest.raises(CorpusError, match=r"00001\.bin: No space left on device; the shard was not completed"):
        encode_corpus(files, tok, out, text_field="text", show_progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["00000.bin", "00000.idx", "manifest.json"]
    assert [s["index"] for s in json.loads((out / "manifest.json").read_text())["shards"]] == [0]


def test_a_real_write_error_removes_the_temporary_file(tok, tmp_path, monkeypatch):
    import tokenmill.shards as shards

    class FullFile:
        closed = False

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            self.closed = True

    real_init = shards.ShardWriter.__init__

    def init(self, path):
        real_init(self, path)
        self.file.close()
        self.file = FullFile()

    monkeypatch.setattr(shards.ShardWriter, "__init__", init)
    with pytest.raises(CorpusError, match="No space left on device; the shard was not completed"):
        encode_corpus(iter(["some text"]), tok, tmp_path, show_progress=False)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_other_settings_in_the_same_directory_are_refused(tok, cl100k, tmp_path):
    encode_corpus(iter(["a b c"]), tok, tmp_path, show_progress=False)
    with pytest.raises(ConfigError, match="holds shards made with another tokenizer_sha256, n_vocab, dtype"):
        encode_corpus(iter(["a b c"]), cl100k, tmp_path, show_progress=False)
    with pytest.raises(ConfigError, match="another sequence_length"):
        encode_corpus(iter(["a b c"]), tok, tmp_path, sequence_length=8, show_progress=False)
    (tmp_path / "notes.bin").write_bytes(b"the user's own file")
    m = encode_corpus(iter(["a b c"]), cl100k, tmp_path, overwrite=True, show_progress=False)
    assert m["dtype"] == "<u4" and sorted(p.name for p in tmp_path.iterdir()) == [
        "00000.bin", "00000.idx", "manifest.json", "notes.bin",
    ]  # fmt: skip


def test_bad_input_is_said_plainly(tok, tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.parquet: not a Parquet file"):
        encode_corpus([bad], tok, tmp_path / "o1", show_progress=False)
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"body": ["x"]}), good)
    with pytest.raises(FormatError, match=r"good\.parquet: no column 'text' \(columns: 'body'\)"):
        encode_corpus([good], tok, tmp_path / "o2", show_progress=False)
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"text": "ok"}\n{"body": "x"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r'a\.jsonl: .*JSON Lines.*line 2: no string field "text"'):
        encode_corpus([lines], tok, tmp_path / "o3", text_field="text", show_progress=False)
    no_eot = tokenmill.train_bpe({"ab": 3}, num_merges=1, byte_level=False)
    with pytest.raises(ConfigError, match="no <|endoftext|> token: give end_of_document="):
        encode_corpus(iter(["ab"]), no_eot, tmp_path / "o4")
    m = encode_corpus(iter(["ab", "b"]), no_eot, tmp_path / "o5", end_of_document="a", show_progress=False)
    assert _read_all(tmp_path / "o5") == [[no_eot.token_to_id("ab"), m["end_of_document"]], [1, 0]]
    with pytest.raises(ConfigError, match="end_of_document 'zz' is not a token"):
        encode_corpus(iter(["ab"]), no_eot, tmp_path / "o6", end_of_document="zz")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="exists and is not a directory"):
        encode_corpus(iter(["ab"]), tok, tmp_path / "file")


def test_a_hugging_face_dataset_gives_the_shards_of_its_strings(tok, docs, tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"text": docs, "n": list(range(len(docs)))})
    encode_corpus(ds, tok, tmp_path / "ds", documents_per_shard=25, show_progress=False)
    encode_corpus(iter(docs), tok, tmp_path / "s", documents_per_shard=25, show_progress=False)
    assert _snapshot(tmp_path / "ds") == _snapshot(tmp_path / "s")
