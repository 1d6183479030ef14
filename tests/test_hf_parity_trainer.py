"""`tokenmill.tokenizers.trainers.ParityBpeTrainer` (parity-aware BPE) gives the merges and the
vocabulary `tokenizers`' own gives, in every mode: lengths on the training text, on development
sets, against target ratios; the base and window variants; global merges; the settings it shares
with BpeTrainer. And it behaves as tokenizers' class: attributes, pickling, errors."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
import tokenizers

from tokenmill import tokenizers as tt


def _languages(multilingual_text: str, stdlib_text: str) -> list[list[str]]:
    """Three "languages": Python's sources, and the multilingual sample's lines split in two by
    script (Latin letters or not)."""
    lines = [line for line in multilingual_text.splitlines() if line.strip()]
    latin = [line for line in lines if sum(c.isascii() for c in line) > len(line) / 2]
    other = [line for line in lines if line not in latin]
    return [stdlib_text[:60_000].splitlines(), latin, other]


def _trained(
    module: Any, pre: str | None, train: list[list[str]], call: dict[str, Any], settings: dict[str, Any]
) -> Any:
    tok = module.Tokenizer(module.models.BPE())
    if pre is not None:
        tok.pre_tokenizer = getattr(module.pre_tokenizers, pre)()
    trainer = module.trainers.ParityBpeTrainer(show_progress=False, **settings)
    trainer.train_from_iterator(tok, train, **call)
    return json.loads(tok.to_str())["model"]


CASES: dict[str, tuple[str | None, dict[str, Any], dict[str, Any]]] = {
    "base": ("Whitespace", {}, {"num_merges": 600}),
    "window": ("Whitespace", {}, {"num_merges": 600, "variant": "window", "window_size": 20, "alpha": 1.5}),
    "byte-level": ("ByteLevel", {}, {"num_merges": 500, "initial_alphabet": "byte-level"}),
    "development sets": ("ByteLevel", {"dev": True}, {"num_merges": 400}),
    "ratio": ("Whitespace", {"ratio": [1.0, 1.2, 0.8]}, {"num_merges": 400, "variant": "window"}),
    "global merges": ("Whitespace", {}, {"num_merges": 400, "global_merges": 100, "special_tokens": ["<s>"]}),
    "total symbols": ("Whitespace", {}, {"num_merges": 700, "total_symbols": True, "min_frequency": 3}),
    "token length": ("Whitespace", {}, {"num_merges": 300, "max_token_length": 5}),
    "whole texts": (None, {}, {"num_merges": 200}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_merges_and_vocabulary_are_tokenizers_own(name: str, multilingual_text: str, stdlib_text: str) -> None:
    pre, call, settings = CASES[name]
    train = _languages(multilingual_text, stdlib_text)
    results = []
    for module in (tokenizers, tt):
        kwargs = dict(settings)
        if kwargs.get("initial_alphabet") == "byte-level":
            kwargs["initial_alphabet"] = module.pre_tokenizers.ByteLevel.alphabet()
        arguments = {}
        if call.get("dev"):
            arguments["dev_iterators"] = [lines[-300:] for lines in train]
        if "ratio" in call:
            arguments["ratio"] = call["ratio"]
        results.append(_trained(module, pre, train, arguments, kwargs))
    expected, got = results
    assert got["merges"] == expected["merges"]
    assert got["vocab"] == expected["vocab"]
    assert len(got["merges"]) > 0


def test_the_trainer_behaves_as_tokenizers_class() -> None:
    for module in (tokenizers, tt):
        trainer = module.trainers.ParityBpeTrainer(num_merges=123, variant="window", window_size=42, alpha=1.5)
        assert (trainer.num_merges, trainer.variant, trainer.window_size, trainer.alpha) == (123, "window", 42, 1.5)
        with pytest.raises(AttributeError):
            trainer.variant = "base"
        restored = pickle.loads(pickle.dumps(trainer))
        assert (restored.num_merges, restored.variant, restored.window_size) == (123, "window", 42)
        with pytest.raises(ValueError, match="Unknown variant"):
            module.trainers.ParityBpeTrainer(variant="other")
        with pytest.raises(ValueError):
            module.trainers.ParityBpeTrainer(initial_alphabet=["ab"])
    ours = tt.trainers.ParityBpeTrainer(ratio=[1.0, 2.0], special_tokens=["<s>"])
    theirs = tokenizers.trainers.ParityBpeTrainer(ratio=[1.0, 2.0], special_tokens=["<s>"])
    assert ours.__getstate__() == theirs.__getstate__()
    assert repr(ours) == repr(theirs)


def test_errors_are_tokenizers_own() -> None:
    for module in (tokenizers, tt):
        tok = module.Tokenizer(module.models.BPE())
        trainer = module.trainers.ParityBpeTrainer(num_merges=10, show_progress=False)
        with pytest.raises(ValueError, match="must not be empty"):
            trainer.train_from_iterator(tok, [])
        with pytest.raises(ValueError, match="must match"):
            trainer.train_from_iterator(tok, [["a b"], ["c d"]], dev_iterators=[["a"]])
        with pytest.raises(RuntimeError, match="ratio length"):
            trainer.train_from_iterator(tok, [["a b"], ["c d"]], ratio=[1.0])
        with pytest.raises(RuntimeError, match=r"ratio\[1\] must be a positive"):
            trainer.train_from_iterator(tok, [["a b"], ["c d"]], ratio=[1.0, -1.0])
        window = module.trainers.ParityBpeTrainer(variant="window", window_size=0, show_progress=False)
        with pytest.raises(RuntimeError, match="window_size"):
            window.train_from_iterator(tok, [["a b"], ["c d"]])


def test_where_tokenizers_never_ends_training_stops() -> None:
    # The window keeps choosing a language with no pairs left: tokenizers loops forever there.
    tok = tt.Tokenizer(tt.models.BPE())
    tok.pre_tokenizer = tt.pre_tokenizers.Whitespace()
    trainer = tt.trainers.ParityBpeTrainer(
        num_merges=50, variant="window", window_size=2, alpha=0.5, show_progress=False
    )
    trainer.train_from_iterator(tok, [["ab ab"], ["cdcdcd cdcdcd"]])
    merges = json.loads(tok.to_str())["model"]["merges"]
    assert 0 < len(merges) < 50
    assert tok.encode("ab cdcdcd").tokens == ["ab", "cdcdcd"]
