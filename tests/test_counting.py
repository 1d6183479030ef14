"""Counting as its own step: compressed and JSON Lines input, mergeable and savable WordCounts,
bounded memory, and smaller vocabularies from one training run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import tokenmill


@pytest.fixture()
def corpus_dir(tmp_path: Path, stdlib_text: str, multilingual_text: str) -> Path:
    text = stdlib_text[:200_000] + multilingual_text
    (tmp_path / "plain.txt").write_text(text[:100_000], encoding="utf-8")
    (tmp_path / "packed.txt.gz").write_bytes(gzip.compress(text[100_000:].encode("utf-8")))
    return tmp_path


def test_compressed_files_count_like_plain_text(corpus_dir: Path, stdlib_text: str, multilingual_text: str) -> None:
    text = stdlib_text[:200_000] + multilingual_text
    from_files = tokenmill.count_words(str(corpus_dir / "*"))
    from_text = tokenmill.count_words(iter([text[:100_000], text[100_000:]]))
    assert len(from_files) == len(from_text) and from_files.total == from_text.total
    assert from_files.most_common(20) == from_text.most_common(20)


def test_zstd_file(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    (tmp_path / "a.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(b"hello hello world"))
    counts = tokenmill.count_words(str(tmp_path / "a.txt.zst"))
    assert counts["hello"] == 1 and counts[" hello"] == 1 and counts[" world"] == 1


def test_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps({"id": i, "text": f"doc{i} ends"}) for i in range(5)) + "\n")
    counts = tokenmill.count_words(str(path), text_field="text")
    assert counts[" ends"] == 5 and counts["doc"] == 5 and counts["3"] == 1
    # Documents are separate: no word spans two lines.
    assert counts["ends"] == 0
    path.write_text('{"text": "fine"}\n{"body": "no text"}\n')
    with pytest.raises(tokenmill.FormatError, match=r"docs.jsonl: .*line 2: no string field \"text\""):
        tokenmill.count_words(str(path), text_field="text")
    path.write_text('{"text": "fine"}\nnot json\n')
    with pytest.raises(tokenmill.FormatError, match=r"docs.jsonl: .*line 2"):
        tokenmill.count_words(str(path), text_field="text")


def test_truncated_gzip_names_the_file(tmp_path: Path) -> None:
    good = gzip.compress(b"some text " * 1000)
    (tmp_path / "cut.txt.gz").write_bytes(good[: len(good) // 2])
    with pytest.raises(tokenmill.FormatError, match="cut.txt.gz: not a valid gzip file"):
        tokenmill.count_words(str(tmp_path / "cut.txt.gz"))


def test_word_counts_add_save_load(tmp_path: Path, stdlib_text: str) -> None:
    a = tokenmill.count_words([stdlib_text[:50_000]])
    b = tokenmill.count_words([stdlib_text[50_000:100_000]])
    both = tokenmill.count_words(iter([stdlib_text[:50_000], stdlib_text[50_000:100_000]]))
    summed = a + b
    assert summed.total == both.total and summed.most_common(50) == both.most_common(50)
    summed.save(tmp_path / "counts.bin")
    loaded = tokenmill.WordCounts.load(tmp_path / "counts.bin")
    assert loaded.most_common(100) == summed.most_common(100) and loaded.pattern == "cl100k"
    assert (tmp_path / "counts.bin").read_bytes()[:4] == b"TMWC"
    with pytest.raises(tokenmill.ConfigError, match="made differently"):
        _ = a + tokenmill.count_words([stdlib_text[:1000]], pattern="gpt2")
    (tmp_path / "bad.bin").write_bytes((tmp_path / "counts.bin").read_bytes()[:-3])
    with pytest.raises(tokenmill.FormatError, match="bad.bin"):
        tokenmill.WordCounts.load(tmp_path / "bad.bin")


def test_counts_past_two_to_the_32() -> None:
    big = 2**32 + 5
    counts = tokenmill.count_words({"word": big}) + tokenmill.count_words({"word": big})
    assert counts["word"] == 2 * big
    tok = tokenmill.train_bpe(counts, num_merges=3)
    assert tok.merges[0] in [(b"w", b"o"), (b"o", b"r"), (b"r", b"d")]


def test_training_on_counts_equals_training_on_text(stdlib_text: str) -> None:
    text = stdlib_text[:150_000]
    counts = tokenmill.count_words([text], pattern="o200k")
    assert (
        tokenmill.train_bpe(counts, vocab_size=500).merges
        == tokenmill.train_bpe([text], vocab_size=500, pattern="o200k").merges
    )


def test_max_memory_prunes_rarest_and_reports(stdlib_text: str) -> None:
    docs = [stdlib_text[i : i + 5000] for i in range(0, len(stdlib_text), 5000)]
    full = tokenmill.count_words(iter(docs))
    budget = full.memory_bytes // 4
    bounded = tokenmill.count_words(iter(docs), max_memory=budget)
    assert bounded.memory_bytes <= budget
    assert bounded.dropped_words > 0 and bounded.dropped_count > 0
    assert bounded.total + bounded.dropped_count == full.total
    assert bounded.most_common(5) == full.most_common(5)
    with pytest.raises(tokenmill.ConfigError, match="max_memory"):
        tokenmill.count_words(["x"], max_memory="lots")


@pytest.mark.parametrize("byte_level", [True, False])
def test_truncated_equals_training_smaller(stdlib_text: str, byte_level: bool) -> None:
    text = [stdlib_text[:150_000]]
    big = tokenmill.train_bpe(text, vocab_size=900, byte_level=byte_level, special_tokens=["<|eot|>"])
    small = tokenmill.train_bpe(text, vocab_size=600, byte_level=byte_level, special_tokens=["<|eot|>"])
    cut = big.truncated(600)
    assert cut.vocab_size == 600 and cut.merges == small.merges
    assert cut.encode(stdlib_text[150_000:160_000]) == small.encode(stdlib_text[150_000:160_000])
    with pytest.raises(tokenmill.ConfigError):
        big.truncated(10)


def test_truncated_tiktoken_vocabulary(stdlib_text: str) -> None:
    from vocab_files import tiktoken_encoding, vocabulary_path

    path = vocabulary_path("cl100k_base")
    cut = tokenmill.Tokenizer.from_tiktoken(path, pattern="cl100k_base").truncated(50_000)
    import tiktoken

    enc = tiktoken_encoding("cl100k_base", path)
    small = tiktoken.Encoding(
        "small",
        pat_str=enc._pat_str,
        mergeable_ranks={t: r for t, r in enc._mergeable_ranks.items() if r < 50_000 - 5},
        special_tokens=enc._special_tokens,
    )
    assert cut.encode_ordinary(stdlib_text[:50_000]) == small.encode_ordinary(stdlib_text[:50_000])


@pytest.mark.parametrize("byte_level", [True, False])
def test_continued_training_keeps_ids_and_equals_training_longer(stdlib_text: str, byte_level: bool) -> None:
    text = [stdlib_text[:120_000]]
    base = tokenmill.train_bpe(text, vocab_size=500, byte_level=byte_level, pattern="gpt2")
    continued = tokenmill.train_bpe(text, vocab_size=800, base=base)
    scratch = tokenmill.train_bpe(text, vocab_size=800, byte_level=byte_level, pattern="gpt2")
    assert continued.merges == scratch.merges
    assert continued.merges[: len(base.merges)] == base.merges
    for i in range(base.n_vocab):
        assert continued.decode_single_token_bytes(i) == base.decode_single_token_bytes(i)


def test_continued_training_on_new_text_adds_its_characters(multilingual_text: str, stdlib_text: str) -> None:
    base = tokenmill.train_bpe([stdlib_text[:50_000]], num_merges=50, byte_level=False, pattern="whitespace")
    more = tokenmill.train_bpe([multilingual_text], num_merges=30, base=base)
    assert len(more.merges) == 80 and more.merges[:50] == base.merges
    assert more.decode(more.encode("Москва")) == "Москва"
    # initial_alphabet adds characters the new text lacks too.
    with_extra = tokenmill.train_bpe([multilingual_text], num_merges=30, base=base, initial_alphabet="ꙮ")
    assert with_extra.merges == more.merges and with_extra.tokenize("ꙮ") == ["ꙮ"]
    with pytest.raises(tokenmill.OutOfVocabularyError):
        more.encode("ꙮ")
    with pytest.raises(tokenmill.ConfigError, match="merge list"):
        from vocab_files import vocabulary_path

        cl = tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k")
        tokenmill.train_bpe(["x"], vocab_size=100_300, base=cl)


def test_an_exception_in_a_progress_callback_stops_the_work(corpus_dir: Path) -> None:
    # The same path carries Ctrl-C: counting and training stop and raise what the callback raised.
    from tokenmill import _core

    class Stop(Exception):
        pass

    def stop(*_: int) -> None:
        raise Stop

    files = [str(p) for p in sorted(corpus_dir.iterdir())]
    counter = _core.WordCounter("cl100k", "none", [], True)
    with pytest.raises(Stop):
        counter.add_files(files, None, stop)
    counter.add_files(files)
    options = dict(byte_level=True, end_of_word_suffix=None, unk_token=None, special_tokens=[], min_frequency=1)
    with pytest.raises(Stop):
        _core.train_bpe(counter, vocab_size=600, num_merges=None, max_token_length=None, progress=stop, **options)


def test_trainers_read_json_lines_by_their_text_field_and_never_as_raw_json(tmp_path: Path) -> None:
    rows = [{"id": i, "text": f"lower lowest newer {i}"} for i in range(50)]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    texts = [r["text"] for r in rows]
    assert tokenmill.train_bpe(str(path), vocab_size=280, text_field="text").merges == (
        tokenmill.train_bpe(iter(texts), vocab_size=280).merges
    )
    wordpiece = tokenmill.train_wordpiece(str(path), vocab_size=120, text_field="text")
    assert wordpiece.token_byte_values() == tokenmill.train_wordpiece(iter(texts), vocab_size=120).token_byte_values()
    assert tokenmill.train_unigram(str(path), vocab_size=40, text_field="text").encode("lowest")
    for train in (tokenmill.train_bpe, tokenmill.train_wordpiece, tokenmill.train_unigram):
        with pytest.raises(tokenmill.CorpusError, match=r"docs.jsonl holds JSON Lines: pass text_field="):
            train(str(path), vocab_size=300)
    with pytest.raises(tokenmill.CorpusError, match="text_field"):
        tokenmill.count_words(str(path))
    with pytest.raises(tokenmill.ConfigError, match="text_field"):
        tokenmill.train_bpe(str(path), vocab_size=280, text_field=7)  # type: ignore[arg-type]
