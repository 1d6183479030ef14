"""`tokenmill count` (here and on the Ray cluster), `tokenmill train x.counts` and
`tokenmill encode-corpus`."""

from __future__ import annotations

import json

import pytest

import tokenmill
from tokenmill.cli import main
from tokenmill.shards import TokenShards

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture()
def parquet_files(tmp_path, stdlib_text):
    files = []
    for i in range(3):
        rows = [stdlib_text[j : j + 1500] for j in range(i * 60_000, (i + 1) * 60_000, 1500)]
        files.append(tmp_path / f"s{i}.parquet")
        pq.write_table(pa.table({"text": rows}), files[-1])
    return files


def test_count_then_train_from_the_counts_then_encode_the_corpus(tmp_path, parquet_files, capsys):
    glob = str(tmp_path / "*.parquet")
    assert main(["count", glob, "-o", str(tmp_path / "c.counts"), "--no-progress"]) == 0
    counts = tokenmill.WordCounts.load(tmp_path / "c.counts")
    assert counts == tokenmill.count_words(parquet_files)
    assert "unique words" in capsys.readouterr().out
    tok_file = tmp_path / "tok.json"
    args = ["train", str(tmp_path / "c.counts"), "--vocab-size", "400", "--special-token", "<|endoftext|>"]
    assert main([*args, "-o", str(tok_file), "--no-progress"]) == 0
    tok = tokenmill.Tokenizer.load(tok_file)
    assert tok.merges == tokenmill.train_bpe(counts, vocab_size=400, special_tokens=["<|endoftext|>"]).merges
    out = tmp_path / "tokens"
    assert main(["encode-corpus", "-t", str(tok_file), glob, "-o", str(out), "--no-progress"]) == 0
    assert "tokens/s" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and len(manifest["shards"]) == 3
    first = pq.read_table(parquet_files[0])["text"][0].as_py()
    assert TokenShards(out).document(0, 0).tolist() == tok.encode_ordinary(first) + [tok.eot_token]


def test_corpus_commands_report_errors_in_one_line(tmp_path, capsys, parquet_files):
    bad = tmp_path / "bad.parquet"
    bad.write_text("x", encoding="utf-8")
    assert main(["count", str(bad), "-o", str(tmp_path / "c.counts")]) == 2
    assert "bad.parquet: not a Parquet file" in capsys.readouterr().err
    assert main(["count", str(parquet_files[0]), "--text-field", "body", "-o", str(tmp_path / "c.counts")]) == 2
    assert "no column 'body'" in capsys.readouterr().err
    assert main(["count", "-o", str(tmp_path / "c.counts")]) == 2
    assert "give the corpus" in capsys.readouterr().err
    counts = tmp_path / "c.counts"
    tokenmill.count_words(parquet_files[0]).save(counts)
    assert main(["train", str(counts), str(parquet_files[0]), "-o", str(tmp_path / "t.json")]) == 2
    assert "either .counts files or text files" in capsys.readouterr().err


def test_count_on_the_ray_cluster(ray_cluster, tmp_path, parquet_files, capsys):
    glob = str(tmp_path / "*.parquet")
    # --ray takes an optional address: given one, and not (the glob is then the corpus).
    assert main(["count", "--ray", ray_cluster.address, glob, "-o", str(tmp_path / "a.counts"), "--no-progress"]) == 0
    assert main(["count", "--ray", glob, "-o", str(tmp_path / "b.counts"), "--no-progress"]) == 0
    assert "on Ray" in capsys.readouterr().out
    local = tokenmill.count_words(parquet_files)
    assert tokenmill.WordCounts.load(tmp_path / "a.counts") == local == tokenmill.WordCounts.load(tmp_path / "b.counts")
    out = tmp_path / "tokens"
    tok = tokenmill.train_bpe(local, vocab_size=300, special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "tok.json")
    args = ["encode-corpus", "--ray", ray_cluster.address, glob, "-t", str(tmp_path / "tok.json"), "-o", str(out)]
    assert main([*args, "--no-progress"]) == 0
    assert json.loads((out / "manifest.json").read_text())["documents"] == 120


def test_encode_corpus_cuts_text_files_at_a_separator_given_with_escapes(tmp_path):
    tok = tokenmill.train_bpe(["one two three four"] * 5, vocab_size=300, special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "tok.json")
    (tmp_path / "docs.txt").write_text("one two\n\nthree\n\n\n\nfour\tfive", encoding="utf-8")
    out = tmp_path / "tokens"
    args = ["encode-corpus", "-t", str(tmp_path / "tok.json"), str(tmp_path / "docs.txt"), "-o", str(out)]
    assert main([*args, "--separator", r"\n\n", "--no-progress"]) == 0
    shards = TokenShards(out)
    docs = ["one two", "three", "four\tfive"]
    expected = [tok.encode_ordinary(d) + [tok.eot_token] for d in docs]
    assert [shards.document(0, j).tolist() for j in range(3)] == expected
