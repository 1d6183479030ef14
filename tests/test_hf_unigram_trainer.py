"""`tokenmill.tokenizers.trainers.UnigramTrainer` trains the vocabulary `tokenizers`' own
`UnigramTrainer` trains: the same pieces with the same scores, on words cut by each shape of
pre-tokenizer, with its settings changed, from files and from iterators.

tokenizers walks its words and its set of characters in hash order, which changes from run to
run: the last bits of its sums move (scores agree to 1e-9 here), and characters the model lost
get the lowest score plus 1e-4 steps in that order (compared here as a set of scores)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import tokenizers

import tokenmill
from tokenmill import tokenizers as tt

SHAPES: dict[str, dict[str, Any]] = {
    "whitespace": {"pre": "Whitespace", "vocab_size": 1500},
    "metaspace": {"pre": "Metaspace", "vocab_size": 3000, "special_tokens": ["<pad>", "<unk>"]},
    "whole-lines": {"pre": None, "vocab_size": 800, "unk_token": "[UNK]", "special_tokens": ["[PAD]", "[SEP]"]},
    "byte-level": {"pre": "ByteLevel", "vocab_size": 1200, "initial_alphabet": True, "unk_token": None},
    "settings": {
        "pre": "Whitespace",
        "vocab_size": 1000,
        "shrinking_factor": 0.5,
        "max_piece_length": 6,
        "n_sub_iterations": 3,
        "initial_alphabet": ["ä", "ß", "€"],
    },
    "multilingual": {"pre": "Whitespace", "vocab_size": 2500, "text": "multilingual"},
}


def _trained(module: Any, shape: dict[str, Any], lines: list[str], files: list[str] | None) -> Any:
    tok = module.Tokenizer(module.models.Unigram())
    tok.normalizer = module.normalizers.NFKC()
    if shape["pre"] is not None:
        tok.pre_tokenizer = getattr(module.pre_tokenizers, shape["pre"])()
    alphabet = shape.get("initial_alphabet")
    trainer = module.trainers.UnigramTrainer(
        vocab_size=shape["vocab_size"],
        show_progress=False,
        special_tokens=shape.get("special_tokens", ["<unk>"]),
        unk_token=shape.get("unk_token", "<unk>"),
        initial_alphabet=module.pre_tokenizers.ByteLevel.alphabet() if alphabet is True else alphabet or [],
        shrinking_factor=shape.get("shrinking_factor", 0.75),
        max_piece_length=shape.get("max_piece_length", 16),
        n_sub_iterations=shape.get("n_sub_iterations", 2),
    )
    if files is None:
        tok.train_from_iterator(lines, trainer=trainer)
    else:
        tok.train(files, trainer=trainer)
    return tok


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_vocabulary_is_tokenizers_own(name: str, stdlib_text: str, multilingual_text: str, tmp_path: Path) -> None:
    shape = SHAPES[name]
    text = multilingual_text if shape.get("text") == "multilingual" else stdlib_text[:150_000]
    lines = text.splitlines()
    files = None
    if shape["pre"] is None:  # from a file: each line keeps its line break, as a word of its own
        path = tmp_path / "corpus.txt"
        path.write_text("\n".join(lines[:1500]) + "\n", encoding="utf-8")
        files = [str(path)]
    theirs = _trained(tokenizers, shape, lines, files)
    ours = _trained(tt, shape, lines, files)
    expected, got = json.loads(theirs.model.__getstate__()), json.loads(ours.model.__getstate__())
    assert got["unk_id"] == expected["unk_id"]
    want, have = dict(map(tuple, expected["vocab"])), dict(map(tuple, got["vocab"]))
    assert have.keys() == want.keys()
    assert len(got["vocab"]) == len(expected["vocab"])
    # The head (unknown and special tokens) in tokenizers' order.
    n_head = len(shape.get("special_tokens", ["<unk>"])) + (
        shape.get("unk_token", "<unk>") not in (None, *shape.get("special_tokens", ["<unk>"]))
    )
    assert [p for p, _ in got["vocab"][:n_head]] == [p for p, _ in expected["vocab"][:n_head]]
    apart = {p for p in want if abs(want[p] - have[p]) > 1e-9}
    # Only characters the model lost, whose 1e-4 steps tokenizers hands out in hash order.
    assert all(len(p) == 1 for p in apart), sorted(apart)[:10]
    assert sorted(round(want[p], 9) for p in apart) == sorted(round(have[p], 9) for p in apart)
    # Encoding real text: the cuts agree but where those characters' scores decide (ids follow
    # the order, which near-ties can swap).
    sample = lines[-400:]
    same = sum(theirs.encode(line).tokens == ours.encode(line).tokens for line in sample)
    assert same >= 0.99 * len(sample)


def test_the_tutorial_byte_level_unigram_trains_and_encodes() -> None:
    # tokenizers' tutorial: NFKC, ByteLevel, every byte in the alphabet, no unknown token.
    data = ["Beautiful is better than ugly.Explicit is better than implicit.Readability counts."]
    encoded = []
    for module in (tokenizers, tt):
        tok = module.Tokenizer(module.models.Unigram())
        tok.normalizer = module.normalizers.NFKC()
        tok.pre_tokenizer = module.pre_tokenizers.ByteLevel()
        tok.decoder = module.decoders.ByteLevel()
        trainer = module.trainers.UnigramTrainer(
            vocab_size=20000,
            initial_alphabet=module.pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<PAD>", "<BOS>", "<EOS>"],
            show_progress=False,
        )
        tok.train_from_iterator(data, trainer=trainer)
        enc = tok.encode("Beautiful is better than ügly")
        encoded.append((enc.tokens, enc.offsets, tok.decode(enc.ids), tok.get_vocab_size()))
    assert encoded[0] == encoded[1]


def test_word_counts_come_from_the_tokenizers_own_pipeline() -> None:
    # Lowercased and cut at whitespace: "The" and "the" are one word, and no piece holds a space.
    vocabs = []
    for module in (tokenizers, tt):
        tok = module.Tokenizer(module.models.Unigram())
        tok.normalizer = module.normalizers.Lowercase()
        tok.pre_tokenizer = module.pre_tokenizers.WhitespaceSplit()
        trainer = module.trainers.UnigramTrainer(
            vocab_size=60, unk_token="<unk>", special_tokens=["<unk>"], show_progress=False
        )
        tok.train_from_iterator(["The the THE cat", "the hat that the cat sat"] * 20, trainer=trainer)
        vocabs.append(set(tok.get_vocab()))
        assert Counter(tok.encode("the cat THE").tokens) == Counter(tok.encode("the cat the").tokens)
    assert vocabs[0] == vocabs[1]
    assert not any(" " in p or p != p.lower() for p in vocabs[1] - {"<unk>"})


def test_too_small_a_vocabulary_is_refused() -> None:
    tok = tt.Tokenizer(tt.models.Unigram())
    trainer = tt.trainers.UnigramTrainer(vocab_size=5, unk_token="<unk>", show_progress=False)
    with pytest.raises(tokenmill.ConfigError, match="not large enough"):
        tok.train_from_iterator(["abcdefghijklmnop"], trainer=trainer)
