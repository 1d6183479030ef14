"""Sampling models in `tokenmill.tokenizers` (BPE `dropout`, Unigram `alpha` and `nbest_size`)
draw a new cut on every encode, from the distribution `tokenizers` draws from: the frequencies of
each cut over many encodes are compared with tokenizers' own (no fixed seed can match, as
tokenizers seeds from the system)."""

from __future__ import annotations

import collections
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import tokenizers
from tokenizers import decoders, pre_tokenizers, trainers

import tokenmill
from tokenmill import tokenizers as tt

DRAWS = 12_000
# Total variation distance two samples of DRAWS from one distribution stay under (their
# difference's standard deviation is about 0.005 per frequent cut).
CLOSE = 0.04


def _frequencies(encode: Callable[[], list[str]]) -> collections.Counter[tuple[str, ...]]:
    return collections.Counter(tuple(encode()) for _ in range(DRAWS))


def _distance(a: collections.Counter[tuple[str, ...]], b: collections.Counter[tuple[str, ...]]) -> float:
    return sum(abs(a[k] - b[k]) for k in set(a) | set(b)) / 2 / DRAWS


VOCAB = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "abcab": 6, "ca": 7}
MERGES = [("a", "b"), ("b", "c"), ("ab", "c"), ("c", "a"), ("abc", "ab")]


@pytest.mark.parametrize("dropout", [0.1, 0.5])
def test_bpe_dropout_draws_as_tokenizers_draws(dropout: float) -> None:
    # Skipped merges come back after the next merge in tokenizers (not SentencePiece's rule).
    theirs = tokenizers.Tokenizer(tokenizers.models.BPE(VOCAB, MERGES, dropout=dropout))
    ours = tt.Tokenizer(tt.models.BPE(VOCAB, MERGES, dropout=dropout))
    expected = _frequencies(lambda: theirs.encode("abcabc").tokens)
    got = _frequencies(lambda: ours.encode("abcabc").tokens)
    assert len(got) > 3
    assert _distance(expected, got) < CLOSE


def test_bpe_dropout_of_one_and_zero() -> None:
    tok = tt.Tokenizer(tt.models.BPE(VOCAB, MERGES, dropout=1.0))
    assert tok.encode("abcabc").tokens == list("abcabc")
    tok.model.dropout = 0.0
    best = tokenizers.Tokenizer(tokenizers.models.BPE(VOCAB, MERGES))
    assert tok.encode("abcabc").tokens == best.encode("abcabc").tokens == ["abc", "abc"]
    with pytest.raises(tokenmill.ConfigError, match="dropout"):
        tt.models.BPE(VOCAB, MERGES, dropout=1.5)


def test_ignore_merges_keeps_words_whole_under_dropout() -> None:
    tok = tt.Tokenizer(tt.models.BPE(VOCAB, MERGES, dropout=1.0, ignore_merges=True))
    assert tok.encode("abcab").tokens == ["abcab"]
    assert tok.encode("bca").tokens == ["b", "c", "a"]


@pytest.fixture(scope="module")
def byte_level_bpe(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str) -> Path:
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(stdlib_text[:100_000].splitlines(), trainer=trainer)
    path = tmp_path_factory.mktemp("bpe") / "tokenizer.json"
    tok.save(str(path))
    return path


def test_dropout_encodings_stay_whole(byte_level_bpe: Path, stdlib_text: str) -> None:
    doc = json.loads(byte_level_bpe.read_text())
    doc["model"]["dropout"] = 0.3
    tok = tt.Tokenizer.from_str(json.dumps(doc))
    best = tt.Tokenizer.from_file(byte_level_bpe)
    lines = [line for line in stdlib_text.splitlines()[:200] if line.strip()]
    longer = 0
    for line in lines:
        enc = tok.encode(line)
        assert tok.decode(enc.ids) == line
        # Each token's offsets are where its bytes are (no token spills past its word).
        assert enc.offsets == sorted(enc.offsets)
        assert all(0 <= s <= e <= len(line) for s, e in enc.offsets)
        longer += len(enc.ids) > len(best.encode(line).ids)
    assert longer > len(lines) // 2  # dropout cuts more
    assert [len(e.ids) for e in tok.encode_batch(lines)] != [len(e.ids) for e in tok.encode_batch(lines)]
    assert json.loads(tok.to_str())["model"]["dropout"] == 0.3  # kept in the file, as tokenizers keeps it


@pytest.fixture(scope="module")
def unigram(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str) -> Path:
    tok = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=1000, unk_token="<unk>", special_tokens=["<unk>"], show_progress=False)
    tok.train_from_iterator(stdlib_text[:200_000].splitlines(), trainer=trainer)
    path = tmp_path_factory.mktemp("unigram") / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.mark.parametrize(("alpha", "nbest_size"), [(0.5, None), (0.2, None), (0.5, 4)])
@pytest.mark.parametrize("text", ["xylophone", "the return value"])
def test_unigram_alpha_draws_as_tokenizers_draws(
    unigram: Path, alpha: float, nbest_size: int | None, text: str
) -> None:
    # tokenizers' forward sums scale the sum so far by alpha too, which SentencePiece's do not.
    frequencies = []
    for module in (tokenizers, tt):
        tok = module.Tokenizer.from_file(str(unigram))
        tok.model.alpha = alpha
        tok.model.nbest_size = nbest_size
        assert tok.model.alpha == alpha
        frequencies.append(_frequencies(lambda tok=tok: tok.encode(text).tokens))  # type: ignore[misc]
    assert len(frequencies[1]) > 1
    assert _distance(*frequencies) < CLOSE


def test_unigram_sampling_settings_stay_out_of_the_file(unigram: Path, tmp_path: Path) -> None:
    tok = tt.Tokenizer.from_file(unigram)
    model = tok.model
    model.alpha, model.nbest_size = 0.3, 2
    assert (tok.model.alpha, tok.model.nbest_size) == (0.3, 2)
    assert "alpha" not in json.loads(tok.to_str())["model"]
    tok.save(tmp_path / "t.json")
    assert tt.Tokenizer.from_file(tmp_path / "t.json").model.alpha is None
    model.alpha = 0.0  # the best cut again
    best = tt.Tokenizer.from_file(unigram)
    assert {tuple(tok.encode("xylophone").ids) for _ in range(50)} == {tuple(best.encode("xylophone").ids)}
    with pytest.raises(tokenmill.ConfigError, match="alpha"):
        model.alpha = -1.0


def test_unigram_sampling_without_an_unknown_piece_refuses_text_as_tokenizers_does() -> None:
    vocab = [("a", -1.0), ("b", -2.0), ("ab", -1.5)]
    theirs = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, None, alpha=0.5))
    ours = tt.Tokenizer(tt.models.Unigram(vocab, None, alpha=0.5))
    with pytest.raises(Exception, match="unk"):
        theirs.encode("ab")
    with pytest.raises(tokenmill.TokenmillError, match="unk"):
        ours.encode("ab")
    assert ours.encode("").ids == theirs.encode("").ids == []


def test_a_files_dropout_survives_saving_pickling_and_export(byte_level_bpe: Path, tmp_path: Path) -> None:
    import pickle

    doc = json.loads(byte_level_bpe.read_text())
    doc["model"]["dropout"] = 1.0  # every merge skipped: each byte its own token
    path = tmp_path / "dropout.json"
    path.write_text(json.dumps(doc))
    tok = tokenmill.Tokenizer.from_huggingface(path)
    tok.save(tmp_path / "own.json")
    tok.to_huggingface(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["model"]["dropout"] == 1.0
    text = "the return value"
    theirs = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
    for again in (
        tok,
        tokenmill.Tokenizer.load(tmp_path / "own.json"),
        pickle.loads(pickle.dumps(tok)),
        tokenmill.Tokenizer.from_huggingface(tmp_path / "again.json"),
    ):
        assert again.encode(text) == theirs
        assert len(theirs) == len(text.encode())
