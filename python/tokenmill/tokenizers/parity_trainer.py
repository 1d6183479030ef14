"""`trainers.ParityBpeTrainer`: parity-aware BPE, as Hugging Face tokenizers 0.23 has it. One
corpus per language; each merge is chosen for the language that compresses worst so far (on its
own text, on a development set, or against a target `ratio`), and applied to all of them, so
that no language pays for another's compression. Trained in Rust (`models/bpe/parity.rs`); the
merges and vocabulary are tokenizers' own.

>>> import json
>>> from tokenmill.tokenizers import Tokenizer, models, pre_tokenizers
>>> tok = Tokenizer(models.BPE())
>>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
>>> trainer = ParityBpeTrainer(num_merges=4, show_progress=False)
>>> trainer.train_from_iterator(tok, [["aabb aabb"], ["ccdd"]])
>>> json.loads(tok.model.__getstate__())["merges"]  # the longer language is served until even
[['b', 'b'], ['a', 'bb'], ['a', 'abb'], ['d', 'd']]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from tokenmill import _checks, _core
from tokenmill.tokenizers.added_token import AddedToken

_SETTINGS = (
    "num_merges",
    "variant",
    "min_frequency",
    "global_merges",
    "window_size",
    "alpha",
    "total_symbols",
    "show_progress",
    "ratio",
    "special_tokens",
    "limit_alphabet",
    "initial_alphabet",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "max_token_length",
)


class ParityBpeTrainer:
    """Parity-aware BPE. `variant` "base" serves the worst-compressed language at each merge;
    "window" passes over a language served more than `alpha` / languages of the last
    `window_size` merges. The first `global_merges` merges take the most frequent pair over all
    languages. `num_merges` merges are made (with `total_symbols`, the vocabulary's size
    instead). Train with `train_from_iterator(tokenizer, [texts of each language], ...)`."""

    def __init__(
        self,
        num_merges: int = 32000,
        variant: str = "base",
        min_frequency: int = 0,
        ratio: Sequence[float] | None = None,
        global_merges: int = 0,
        window_size: int = 100,
        alpha: float = 2.0,
        total_symbols: bool = False,
        special_tokens: list[str | AddedToken] | None = None,
        show_progress: bool = True,
        limit_alphabet: int | None = None,
        initial_alphabet: list[str] | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
    ) -> None:
        if variant not in ("base", "window"):
            raise ValueError(f"Unknown variant '{variant}'. Use 'base' or 'window'.")
        object.__setattr__(self, "_variant", variant)
        object.__setattr__(self, "_ratio", None if ratio is None else [float(r) for r in ratio])
        self.num_merges = num_merges
        self.min_frequency = min_frequency
        self.global_merges = global_merges
        self.window_size = window_size
        self.alpha = alpha
        self.total_symbols = total_symbols
        self.special_tokens = special_tokens or []
        self.show_progress = show_progress
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = initial_alphabet or []
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.max_token_length = max_token_length

    @property
    def variant(self) -> str:
        """ "base" or "window" (fixed when made)."""
        return self._variant  # type: ignore[no-any-return]

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "variant":
            raise AttributeError("attribute 'variant' of 'ParityBpeTrainer' objects is not writable")
        if name in ("num_merges", "min_frequency", "global_merges", "window_size"):
            _checks.count(name, value)
        elif name in ("limit_alphabet", "max_token_length"):
            if value is not None:
                _checks.count(name, value)
        elif name == "alpha":
            value = float(value)
        elif name in ("total_symbols", "show_progress"):
            value = bool(value)
        elif name == "special_tokens":
            value = [_special(t) for t in value or []]
        elif name == "initial_alphabet":
            value = [_character(c) for c in value or []]
        elif name not in ("continuing_subword_prefix", "end_of_word_suffix"):
            raise AttributeError(f"'ParityBpeTrainer' object has no attribute {name!r}")
        object.__setattr__(self, name, value)

    def __getstate__(self) -> dict[str, Any]:
        # A dict, as tokenizers pickles this trainer (special tokens by their text).
        state: dict[str, Any] = {}
        for name in _SETTINGS:
            if name == "ratio":
                state[name] = self._ratio
            elif name == "special_tokens":
                state[name] = [t.content for t in self.special_tokens]
            else:
                state[name] = getattr(self, name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        variant = state["variant"]
        if variant not in ("base", "window"):
            raise ValueError(f"Unknown variant '{variant}'. Use 'base' or 'window'.")
        object.__setattr__(self, "_variant", variant)
        object.__setattr__(self, "_ratio", state.get("ratio"))
        for name in _SETTINGS:
            if name in ("variant", "ratio"):
                continue
            value = state.get(name)
            if name == "initial_alphabet":
                value = [c[0] for c in value or [] if c]
            if value is None and name in ("special_tokens",):
                value = []
            setattr(self, name, value)

    def __repr__(self) -> str:
        alpha = repr(self.alpha)
        alpha = alpha[:-2] if alpha.endswith(".0") else alpha
        return (
            f'ParityBpeTrainer(num_merges={self.num_merges}, variant="{self.variant}", '
            f"min_frequency={self.min_frequency}, global_merges={self.global_merges}, "
            f"window_size={self.window_size}, alpha={alpha}, total_symbols={str(self.total_symbols).lower()})"
        )

    def train_from_iterator(
        self,
        tokenizer: Any,
        train_iterators: Sequence[Iterable[Any]],
        dev_iterators: Sequence[Iterable[Any]] | None = None,
        ratio: Sequence[float] | None = None,
    ) -> None:
        """Trains `tokenizer`'s model, made a new BPE, on one iterable of texts per language
        (its normalizer and pre-tokenizer cut the words). With `dev_iterators` (one per
        language) lengths are measured there, and any `ratio` is ignored, as in tokenizers."""
        from tokenmill.progress import Progress
        from tokenmill.tokenizers.models import Model
        from tokenmill.tokenizers.training import texts_of

        if isinstance(train_iterators, str) or not train_iterators:
            raise ValueError("train_iterators must not be empty")
        n = len(train_iterators)
        if dev_iterators is not None and len(dev_iterators) != n:
            raise ValueError(f"dev_iterators length ({len(dev_iterators)}) must match train_iterators length ({n})")
        has_dev = dev_iterators is not None and len(dev_iterators) > 0
        used_ratio = None if has_dev else (ratio if ratio is not None else self._ratio)
        if used_ratio is not None:
            used_ratio = [float(r) for r in used_ratio]
            if len(used_ratio) != n:
                raise RuntimeError(
                    f"Training error: ratio length ({len(used_ratio)}) does not match number of languages ({n})"
                )
            bad = next((i for i, r in enumerate(used_ratio) if not (math.isfinite(r) and r > 0)), None)
            if bad is not None:
                raise RuntimeError(
                    f"Training error: ratio[{bad}] must be a positive finite number (got {used_ratio[bad]})"
                )

        def words(texts: Iterable[Any]) -> list[tuple[str, int]]:
            return sorted(_words(texts_of(texts), tokenizer.normalizer, tokenizer.pre_tokenizer).items())

        train = [words(texts) for texts in train_iterators]
        dev = [words(texts) for texts in dev_iterators] if has_dev and dev_iterators is not None else None
        with Progress("merges", None, "", None if self.show_progress else False) as bar:
            try:
                tokens, merges = _core.train_parity_bpe(
                    train,
                    dev,
                    num_merges=self.num_merges,
                    variant=self.variant,
                    min_frequency=self.min_frequency,
                    ratio=used_ratio,
                    global_merges=self.global_merges,
                    window_size=self.window_size,
                    alpha=self.alpha,
                    total_symbols=self.total_symbols,
                    special_tokens=[t.content for t in self.special_tokens],
                    limit_alphabet=self.limit_alphabet,
                    initial_alphabet=list(self.initial_alphabet),
                    continuing_subword_prefix=self.continuing_subword_prefix,
                    end_of_word_suffix=self.end_of_word_suffix,
                    max_token_length=self.max_token_length,
                    progress=lambda done, total: bar.set(done, total),
                )
            except _core.ConfigError as e:
                raise RuntimeError(f"Training error: {e}") from None
        node = {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(tokens)},
            "merges": [list(m) for m in merges],
        }
        tokenizer.model = Model._wrap(node)
        tokenizer.add_special_tokens(list(self.special_tokens))


def _words(texts: Iterable[str], normalizer: Any, pre_tokenizer: Any) -> Counter[str]:
    """The words of a language, as tokenizers counts them for this trainer: normalized and
    pre-tokenized (empty pieces dropped), or without a pre-tokenizer each whole text trimmed."""
    from tokenmill.tokenizers.training import _words as counted

    if pre_tokenizer is not None:
        return counted(texts, normalizer, pre_tokenizer)
    from tokenmill.tokenizers.normalized_string import _is_space

    counts: Counter[str] = Counter()
    for text in texts:
        if normalizer is not None:
            text = normalizer.normalize_str(text)
        start, end = 0, len(text)  # trimmed of Unicode White_Space, as Rust trims
        while start < end and _is_space(text[start]):
            start += 1
        while end > start and _is_space(text[end - 1]):
            end -= 1
        if end > start:
            counts[text[start:end]] += 1
    return counts


def _special(token: Any) -> AddedToken:
    if isinstance(token, str):
        return AddedToken(token, special=True)
    if isinstance(token, AddedToken):
        token.special = True
        return token
    raise TypeError("special_tokens must be a List[Union[str, AddedToken]]")


def _character(c: Any) -> str:
    if not isinstance(c, str) or len(c) != 1:
        raise ValueError("expected a string of length 1")
    return c
