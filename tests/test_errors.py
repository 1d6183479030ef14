"""Every failure a user can cause raises a clear tokenmill error (a ValueError), never a panic."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tokenmill
from tokenmill import (
    ConfigError,
    CorpusError,
    DisallowedSpecialError,
    FormatError,
    OutOfVocabularyError,
    PatternError,
    TokenIdError,
    TokenmillError,
)


@pytest.fixture(scope="module")
def tok() -> tokenmill.Tokenizer:
    return tokenmill.train_bpe(["hello world " * 50], vocab_size=270, special_tokens=["<|eot|>"])


def test_errors_are_value_errors() -> None:
    for cls in (
        ConfigError,
        CorpusError,
        FormatError,
        PatternError,
        OutOfVocabularyError,
        TokenIdError,
        DisallowedSpecialError,
    ):
        assert issubclass(cls, TokenmillError) and issubclass(cls, ValueError)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="nope.txt: no such file"):
        tokenmill.train_bpe(str(tmp_path / "nope.txt"), vocab_size=300)
    good = tmp_path / "good.txt"
    good.write_text("some text")
    with pytest.raises(CorpusError, match="missing.txt"):
        tokenmill.train_bpe([str(good), str(tmp_path / "missing.txt")], vocab_size=300)
    with pytest.raises(CorpusError, match="no files match"):
        tokenmill.train_bpe(str(tmp_path / "*.nothing"), vocab_size=300)


def test_unreadable_path(tmp_path: Path) -> None:
    link = tmp_path / "dangling.txt"
    os.symlink(tmp_path / "gone", link)
    with pytest.raises(CorpusError, match="dangling.txt"):
        tokenmill.train_bpe(str(link), vocab_size=300)
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(CorpusError, match="afile"):
        tokenmill.train_bpe([str(afile / "inside.txt")], vocab_size=300)


def test_empty_corpus(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(CorpusError, match="empty corpus"):
        tokenmill.train_bpe(str(empty), vocab_size=300)
    with pytest.raises(CorpusError, match="empty corpus"):
        tokenmill.train_bpe(iter([]), vocab_size=300)
    with pytest.raises(CorpusError, match="empty corpus"):
        tokenmill.train_bpe({}, vocab_size=300)


def test_bad_parameters() -> None:
    with pytest.raises(ConfigError, match="smaller than the base alphabet"):
        tokenmill.train_bpe(["abc"], vocab_size=100)
    with pytest.raises(ConfigError, match="not both"):
        tokenmill.train_bpe(["abc"], vocab_size=300, num_merges=3)
    with pytest.raises(ConfigError, match="vocab_size or num_merges"):
        tokenmill.train_bpe(["abc"])
    with pytest.raises(ConfigError, match="vocab_size must be an int from 0 to"):
        tokenmill.train_bpe(["abc"], vocab_size=-5)
    with pytest.raises(ConfigError, match="character-level"):
        tokenmill.train_bpe(["abc"], vocab_size=300, end_of_word_suffix="</w>")
    with pytest.raises(ConfigError, match="max_token_length"):
        tokenmill.train_bpe(["abc"], vocab_size=300, max_token_length=0)
    with pytest.raises(ConfigError, match="limit_alphabet is for character-level"):
        tokenmill.train_bpe(["abc"], vocab_size=300, limit_alphabet=10)
    with pytest.raises(ConfigError, match="limit_alphabet must be at least 1"):
        tokenmill.train_bpe(["abc"], num_merges=1, byte_level=False, limit_alphabet=0)
    with pytest.raises(ConfigError, match="smaller than initial_alphabet"):
        tokenmill.train_bpe(["abc"], num_merges=1, byte_level=False, limit_alphabet=1, initial_alphabet="xy")
    with pytest.raises(ConfigError, match='single characters; got "ab"'):
        tokenmill.train_bpe(["abc"], vocab_size=300, initial_alphabet=["ab"])
    with pytest.raises(ConfigError, match="initial_alphabet must be"):
        tokenmill.train_bpe(["abc"], vocab_size=300, initial_alphabet=[1])
    base = tokenmill.train_bpe(["abc abd"], num_merges=1, byte_level=False)
    with pytest.raises(ConfigError, match="continued training keeps the base alphabet"):
        tokenmill.train_bpe(["abc"], num_merges=1, base=base, limit_alphabet=5)
    with pytest.raises(ConfigError, match="normalizer"):
        tokenmill.train_bpe(["abc"], vocab_size=300, normalizer="nfx")
    with pytest.raises(CorpusError, match="corpus item 1 is int"):
        tokenmill.train_bpe(iter(["a", 3]), vocab_size=300)
    with pytest.raises(CorpusError, match="non-negative int counts"):
        tokenmill.train_bpe({"a": -1}, vocab_size=300)


def test_bad_patterns() -> None:
    with pytest.raises(PatternError, match="unknown preset"):
        tokenmill.train_bpe(["abc"], vocab_size=300, pattern="cl100")
    with pytest.raises(PatternError, match="bad pattern"):
        tokenmill.split("(unclosed", "text")


def test_non_utf8_file(tmp_path: Path) -> None:
    f = tmp_path / "latin1.txt"
    f.write_bytes("caf\xe9 ol\xe9 ".encode("latin-1") * 20)
    tok = tokenmill.train_bpe(str(f), vocab_size=270)
    # Byte-level trains on the raw bytes: the UTF-8 runs around the bad bytes are learned.
    assert (b"c", b"af") in tok.merges and 256 < tok.vocab_size <= 270
    with pytest.raises(CorpusError, match=r"latin1.txt: invalid UTF-8 at byte offset 3"):
        tokenmill.train_bpe(str(f), vocab_size=300, byte_level=False)


def test_out_of_vocabulary_character() -> None:
    tok = tokenmill.train_bpe(["abc abc"], num_merges=2, byte_level=False)
    with pytest.raises(OutOfVocabularyError, match="'z'"):
        tok.encode("abz")
    with_unk = tokenmill.train_bpe(["abc abc"], num_merges=2, byte_level=False, unk_token="<unk>")
    unk = with_unk.token_to_id("<unk>")
    assert with_unk.encode("z") == [unk]


def test_decode_ids_out_of_range(tok: tokenmill.Tokenizer) -> None:
    with pytest.raises(TokenIdError, match="token id 99999 is out of range"):
        tok.decode([1, 99999])
    for bad in (-1, 2**32 - 1, 10**24, "7", 1.0):
        with pytest.raises(TokenIdError, match=r"is not an id|out of range"):
            tok.decode([1, bad])
        with pytest.raises(TokenIdError):
            tok.decode_single_token_bytes(bad)
        with pytest.raises(TokenIdError):
            tok.decode_with_offsets([bad])


def test_an_unused_id_inside_the_vocabulary_is_named_as_such() -> None:
    # Special tokens placed past a gap leave ids that hold no token.
    ranks = {bytes([b]): b for b in range(256)}
    tok = tokenmill.Tokenizer.from_tiktoken(ranks, pattern="gpt2", special_tokens={"<eot>": 260})
    with pytest.raises(TokenIdError, match="token id 258 holds no token: it is one of the unused ids"):
        tok.decode([0, 258])
    with pytest.raises(TokenIdError, match="token id 261 is out of range"):
        tok.decode([0, 261])


def test_decode_invalid_utf8_follows_errors(tok: tokenmill.Tokenizer) -> None:
    ids = tok.encode("é")
    assert len(ids) == 2  # two byte tokens
    assert tok.decode(ids[:1]) == "\ufffd"
    assert tok.decode(ids[:1], errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids[:1], errors="strict")


def test_disallowed_special(tok: tokenmill.Tokenizer) -> None:
    with pytest.raises(DisallowedSpecialError, match="<|eot|>"):
        tok.encode("a<|eot|>")
    assert tok.encode("a<|eot|>", disallowed_special=()) == tok.encode_ordinary("a<|eot|>")


def test_load_bad_files(tmp_path: Path, tok: tokenmill.Tokenizer) -> None:
    good = tmp_path / "tok.json"
    tok.save(good)
    text = good.read_text()
    truncated = tmp_path / "truncated.json"
    truncated.write_text(text[: len(text) // 2])
    with pytest.raises(FormatError, match="truncated.json: not a valid tokenmill tokenizer file"):
        tokenmill.Tokenizer.load(truncated)
    foreign = tmp_path / "tokenizer.json"
    foreign.write_text(json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}}))
    with pytest.raises(FormatError, match="another library"):
        tokenmill.Tokenizer.load(foreign)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**json.loads(text), "version": 99}))
    with pytest.raises(FormatError, match="version"):
        tokenmill.Tokenizer.load(newer)
    binary = tmp_path / "binary.bin"
    binary.write_bytes(b"\x00\xff\xfe garbage")
    with pytest.raises(CorpusError, match="binary.bin"):
        tokenmill.Tokenizer.load(binary)
    with pytest.raises(CorpusError, match="absent.json"):
        tokenmill.Tokenizer.load(tmp_path / "absent.json")


def test_save_to_bad_place(tmp_path: Path, tok: tokenmill.Tokenizer) -> None:
    with pytest.raises(CorpusError, match="no_dir"):
        tok.save(tmp_path / "no_dir" / "tok.json")
    assert not list(tmp_path.glob("**/.*tmp*"))


def test_errors_are_tokenmills_own_and_pickle() -> None:
    """Exceptions cross process boundaries (multiprocessing, Ray, datasets.map): each is
    `tokenmill.<Name>` and survives pickling with its message."""
    import pickle

    names = ["TokenmillError", "ConfigError", "CorpusError", "FormatError", "PatternError"]
    names += ["OutOfVocabularyError", "TokenIdError", "DisallowedSpecialError"]
    for cls in (getattr(tokenmill, name) for name in names):
        assert cls.__module__ == "tokenmill"
        again = pickle.loads(pickle.dumps(cls("what went wrong")))
        assert type(again) is cls and str(again) == "what went wrong"
    with pytest.raises(TokenIdError) as raised:
        tokenmill.train_bpe(["abc abc"], num_merges=1).decode([10**6])
    assert str(pickle.loads(pickle.dumps(raised.value))) == str(raised.value)
