"""The Tokenizer API: files, pickling, batches, special tokens, vocabulary access."""

from __future__ import annotations

import pickle
import sys
import threading
from pathlib import Path

import pytest

import tokenmill


@pytest.fixture(scope="module")
def tok(stdlib_text: str) -> tokenmill.Tokenizer:
    return tokenmill.train_bpe([stdlib_text[:300_000]], vocab_size=1000, special_tokens=["<|endoftext|>", "<|pad|>"])


def test_save_load_round_trip(tmp_path: Path, tok: tokenmill.Tokenizer, multilingual_text: str) -> None:
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = tokenmill.Tokenizer.load(path)
    assert loaded.merges == tok.merges
    assert loaded.special_tokens == tok.special_tokens
    assert loaded.pattern == tok.pattern
    assert loaded.encode(multilingual_text) == tok.encode(multilingual_text)
    assert not [p for p in tmp_path.iterdir() if p.name != "tok.json"], "no temporary files left behind"


def test_vocab_listing_is_readable(tmp_path: Path, tok: tokenmill.Tokenizer) -> None:
    path = tmp_path / "vocab.txt"
    tok.save_vocab(path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# id")
    assert lines[1] == '0\t"<|endoftext|>"\t(special)'
    left, right = tok.merges[0]
    merged_id = tok.token_to_id(left + right)
    assert f"{merged_id}\t" in path.read_text()
    assert len(lines) == tok.vocab_size + 1


def test_pickle_and_threads(tok: tokenmill.Tokenizer, stdlib_text: str) -> None:
    clone = pickle.loads(pickle.dumps(tok))
    text = stdlib_text[300_000:340_000]
    expected = tok.encode(text)
    assert clone.encode(text) == expected
    results: list[list[int]] = []
    threads = [threading.Thread(target=lambda: results.append(tok.encode(text))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_encode_batch_equals_encode(tok: tokenmill.Tokenizer, stdlib_text: str) -> None:
    texts = [stdlib_text[i : i + 4000] for i in range(0, 200_000, 4000)] + ["", "<|pad|>"]
    expected = [tok.encode(t, allowed_special="all") for t in texts]
    for n in (None, 1, 2, 3):
        assert tok.encode_batch(texts, num_threads=n, allowed_special="all") == expected
    assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]


def test_id_lists_hold_one_reference_per_item(tok: tokenmill.Tokenizer, stdlib_text: str) -> None:
    # Lists of ids share one int object per id, each item one reference: counts must rise by the
    # number of items while lists live and fall back when they die (too few references would
    # free an int still in use; too many would leak).
    text = stdlib_text[:20_000]
    ids = tok.encode(text)
    # A token above CPython's cached small ints: its object is the one the tokenizer made.
    common = max((i for i in set(ids) if i > 256), key=ids.count)
    obj = next(i for i in ids if i == common)
    before = sys.getrefcount(obj)
    lists = [tok.encode(text) for _ in range(3)] + tok.encode_batch([text] * 3, num_threads=2)
    assert all(lst == ids for lst in lists)
    assert sys.getrefcount(obj) == before + 6 * ids.count(common)
    del lists
    assert sys.getrefcount(obj) == before


def test_encode_batch_refuses_a_named_string_in_any_text(tok: tokenmill.Tokenizer) -> None:
    """A string `disallowed_special` names that is not a special token may not appear in any
    text of a batch (the arguments are checked once per batch, the texts each)."""
    texts = ["plain text", "more text", "then FORBIDDEN here", "last"]
    for n in (1, 2):
        with pytest.raises(tokenmill.DisallowedSpecialError, match="'FORBIDDEN', which disallowed_special names"):
            tok.encode_batch(texts, num_threads=n, disallowed_special={"FORBIDDEN"})
        clean = texts[:2] + texts[3:]
        assert tok.encode_batch(clean, num_threads=n, disallowed_special={"FORBIDDEN"}) == [
            tok.encode(t, disallowed_special={"FORBIDDEN"}) for t in clean
        ]
    with pytest.raises(tokenmill.ConfigError, match="allowed_special"):
        tok.encode_batch([], allowed_special="some")


def test_special_tokens(tok: tokenmill.Tokenizer) -> None:
    assert tok.special_tokens == {"<|endoftext|>": 0, "<|pad|>": 1}
    text = "a<|endoftext|>b<|pad|>"
    assert tok.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=()).count(0) == 1
    assert 1 not in tok.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    with pytest.raises(tokenmill.DisallowedSpecialError):
        tok.encode(text, allowed_special={"<|endoftext|>"})
    ids = tok.encode(text, allowed_special="all")
    assert ids[1] == 0 and ids[-1] == 1
    assert 0 not in tok.encode_ordinary(text)
    assert tok.decode(ids) == text


def test_vocabulary_access(tok: tokenmill.Tokenizer) -> None:
    assert tok.vocab_size == 1000 == tok.n_vocab
    for i in range(tok.n_vocab):
        token = tok.decode_single_token_bytes(i)
        assert tok.token_to_id(token) == i
    assert tok.id_to_token(0) == "<|endoftext|>"
    assert tok.token_to_id("def") is not None
    assert tok.token_to_id("surely-not-a-token") is None
    assert tok.tokenize("def f():") == [tok.id_to_token(i) for i in tok.encode("def f():")]
    assert tok.pre_tokenize("def f():") == ["def", " f", "():"]
    assert "byte-level" in repr(tok)


def test_lone_surrogates_become_replacement_characters(tok: tokenmill.Tokenizer) -> None:
    assert tok.decode(tok.encode("a\ud800b")) == "a\ufffdb"
    assert tok.encode_batch(["\udfff"]) == [tok.encode("\ufffd")]


def test_normalizer_applies_before_splitting() -> None:
    tok = tokenmill.train_bpe(["Ｈｅｌｌｏ HELLO hello"] * 10, vocab_size=270, normalizer="nfkc+lowercase")
    assert tok.normalizer == "nfkc+lowercase"
    assert tok.encode("ＨＥＬＬＯ") == tok.encode("hello")


def test_word_count_mapping_skips_pre_tokenization() -> None:
    tok = tokenmill.train_bpe({"hello world": 10, "x": 1}, num_merges=12)
    # " w" is inside one word of the mapping, so it can be merged even though cl100k would split there.
    assert (b"o", b" ") in tok.merges or (b" ", b"w") in tok.merges


def test_progress_reports_to_a_bar(capsys: pytest.CaptureFixture[str], stdlib_text: str) -> None:
    import sys

    tqdm_module = sys.modules.pop("tqdm.auto", None)
    sys.modules["tqdm.auto"] = None  # type: ignore[assignment]  # force the built-in bar
    try:
        tokenmill.train_bpe(iter([stdlib_text[:100_000]]), vocab_size=400, show_progress=True)
    finally:
        del sys.modules["tqdm.auto"]
        if tqdm_module is not None:
            sys.modules["tqdm.auto"] = tqdm_module
    err = capsys.readouterr().err
    assert "counting" in err and "merging" in err and "144/144" in err


def test_tokenizers_sharing_a_thread_keep_their_own_ids(stdlib_text: str, multilingual_text: str) -> None:
    # Encoders cache pieces per thread; two tokenizers used in turn must never see each other's ids.
    sample = stdlib_text[:20_000] + multilingual_text
    a = tokenmill.train_bpe([stdlib_text[:200_000]], vocab_size=600, pattern="cl100k")
    b = tokenmill.train_bpe([multilingual_text * 3], vocab_size=400, pattern="cl100k")
    expected_a, expected_b = a.encode_ordinary(sample), b.encode_ordinary(sample)
    assert expected_a != expected_b
    for _ in range(3):
        assert b.encode_ordinary(sample) == expected_b
        assert a.encode_ordinary(sample) == expected_a
    assert a.decode(expected_a) == sample and b.decode(expected_b) == sample


def test_import_leaves_wordpiece_and_unigram_trainers_until_used() -> None:
    """`import tokenmill` does not load the WordPiece and Unigram trainers (and their file
    formats); naming them loads them, and `from tokenmill import ...` works as before."""
    import subprocess
    import sys

    script = (
        "import sys, tokenmill\n"
        "lazy = ['tokenmill.training_wordpiece', 'tokenmill.training_unigram', 'tokenmill.formats.wordpiece']\n"
        "print([m for m in lazy if m in sys.modules])\n"
        "from tokenmill import train_wordpiece\n"
        "print(callable(train_wordpiece), callable(tokenmill.train_unigram), 'train_unigram' in dir(tokenmill))\n"
        "print(sorted(m for m in lazy if m in sys.modules))\n"
        "try:\n    tokenmill.no_such_name\nexcept AttributeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [
        "[]",
        "True True True",
        "['tokenmill.formats.wordpiece', 'tokenmill.training_unigram', 'tokenmill.training_wordpiece']",
        "module 'tokenmill' has no attribute 'no_such_name'",
    ]


def test_decode_takes_any_sequence_of_ids_and_a_list_as_it_is() -> None:
    import numpy as np

    tok = tokenmill.train_bpe(iter(["hello world, héllo"]), vocab_size=270)
    ids = tok.encode("hello world, héllo")
    text = tok.decode(ids)
    assert text == "hello world, héllo"
    assert tok.decode(tuple(ids)) == tok.decode(iter(ids)) == tok.decode(np.array(ids, dtype=np.uint32)) == text
    assert tok.decode_bytes(ids) == tok.decode_bytes(i for i in ids) == text.encode()
    with pytest.raises(tokenmill.TokenIdError):
        tok.decode([*ids, 10**6])
