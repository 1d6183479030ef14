"""`tokenmill.tokenizers.trainers`: Hugging Face's trainer settings, run by tokenmill's trainers
through `Tokenizer.train` / `train_from_iterator` on the words the tokenizer's own normalizer and
pre-tokenizer cut.

`BpeTrainer` and `WordLevelTrainer` give the vocabulary `tokenizers` gives (the same merges, in
the same order), except where tokenizers itself is not deterministic or the algorithms differ:
`end_of_word_suffix` and `continuing_subword_prefix` (tokenmill marks words as tokenizers does and
gives its vocabulary, but tokenizers numbers the marked characters in hash order, so the order of
merges with equal counts varies from run to run there), `limit_alphabet` without marks
(tokenizers drops the characters left out and joins their neighbours, tokenmill splits the word
there) and `max_token_length` (tokenizers' limit is one character shorter than it says for most
lengths).
`UnigramTrainer` runs tokenizers' own Unigram algorithm and `ParityBpeTrainer` its parity-aware
BPE (both in Rust). `WordPieceTrainer` runs tokenmill's WordPiece trainer, whose merges are scored
count(ab)/(count(a)·count(b)) as WordPiece defines it (tokenizers' own is frequency BPE with a
`##` prefix, so its vocabularies differ).

>>> BpeTrainer(vocab_size=300, special_tokens=["<pad>"]).special_tokens
[AddedToken("<pad>", rstrip=False, lstrip=False, single_word=False, normalized=False, special=True)]
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tokenmill import _checks
from tokenmill.tokenizers.added_token import AddedToken


def _specials(tokens: Any) -> list[AddedToken]:
    out = []
    for t in tokens or []:
        if isinstance(t, AddedToken):
            t.special = True
            out.append(t)
        elif isinstance(t, str):
            out.append(AddedToken(t, special=True))
        else:
            raise TypeError(f"special tokens are str or AddedToken, not {type(t).__name__}")
    return out


def _alphabet(chars: Any) -> list[str]:
    out = []
    for c in chars or []:
        if not isinstance(c, str) or not c:
            raise TypeError(f"initial_alphabet holds characters, not {c!r}")
        out.append(c[0])  # as tokenizers: the first character of each string
    return out


class Trainer:
    """The base of every trainer: its settings, as attributes."""

    _options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **settings: Any) -> None:
        for name, value in settings.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "special_tokens":
            value = _specials(value)
        elif name == "initial_alphabet":
            value = _alphabet(value)
        elif name in ("vocab_size", "min_frequency"):
            _checks.count(name, value)
        elif name not in self._options:
            raise AttributeError(f"{type(self).__name__} has no setting {name!r}")
        object.__setattr__(self, name, value)

    # The settings in the order tokenizers writes them, with the fields it adds (the progress
    # bar's style, the words counted so far), so that `__getstate__` is its JSON.
    _state: ClassVar[tuple[str, ...]] = ()
    _extra: ClassVar[dict[str, Any]] = {"words": {}}

    def _settings(self) -> dict[str, Any]:
        state: dict[str, Any] = {}
        for name in self._state:
            if name in self._extra:
                state[name] = self._extra[name]
            elif name == "special_tokens":
                state[name] = [t.__getstate__() for t in self.special_tokens]
            else:
                state[name] = getattr(self, name)
        return state

    def __getstate__(self) -> bytes:
        return json.dumps({type(self).__name__: self._settings()}, ensure_ascii=False, separators=(",", ":")).encode()

    def __setstate__(self, state: str | bytes) -> None:
        (settings,) = json.loads(state).values()
        settings = settings.get("bpe_trainer", settings)  # WordPieceTrainer nests its BPE trainer's
        for name, value in settings.items():
            if name == "special_tokens":
                value = [AddedToken(**t) for t in value]
            if name in self._options:
                setattr(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._options)})"


_BPE_STATE = (
    "min_frequency",
    "vocab_size",
    "show_progress",
    "progress_format",
    "special_tokens",
    "limit_alphabet",
    "initial_alphabet",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "max_token_length",
    "words",
)


class BpeTrainer(Trainer):
    """Byte-pair encoding: merges the most frequent pair until `vocab_size` tokens (special
    tokens first, then the alphabet, then the merges)."""

    _state = _BPE_STATE
    _extra: ClassVar[dict[str, Any]] = {"progress_format": "Indicatif", "words": {}}

    _options = (
        "vocab_size",
        "min_frequency",
        "show_progress",
        "special_tokens",
        "limit_alphabet",
        "initial_alphabet",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "max_token_length",
    )

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: list[str | AddedToken] | None = None,
        limit_alphabet: int | None = None,
        initial_alphabet: list[str] | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
    ) -> None:
        super().__init__(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            show_progress=show_progress,
            special_tokens=special_tokens,
            limit_alphabet=limit_alphabet,
            initial_alphabet=initial_alphabet,
            continuing_subword_prefix=continuing_subword_prefix,
            end_of_word_suffix=end_of_word_suffix,
            max_token_length=max_token_length,
        )


class WordPieceTrainer(Trainer):
    """WordPiece: tokenmill's trainer (merges scored count(ab)/(count(a)·count(b)))."""

    _state = _BPE_STATE
    _extra: ClassVar[dict[str, Any]] = {"progress_format": "Indicatif", "words": {}, "max_token_length": None}

    def __getstate__(self) -> bytes:
        state = {"WordPieceTrainer": {"bpe_trainer": self._settings()}}
        return json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode()

    _options = (
        "vocab_size",
        "min_frequency",
        "show_progress",
        "special_tokens",
        "limit_alphabet",
        "initial_alphabet",
        "continuing_subword_prefix",
        "end_of_word_suffix",
    )

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: list[str | AddedToken] | None = None,
        limit_alphabet: int | None = None,
        initial_alphabet: list[str] | None = None,
        continuing_subword_prefix: str = "##",
        end_of_word_suffix: str | None = None,
    ) -> None:
        super().__init__(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            show_progress=show_progress,
            special_tokens=special_tokens,
            limit_alphabet=limit_alphabet,
            initial_alphabet=initial_alphabet,
            continuing_subword_prefix=continuing_subword_prefix,
            end_of_word_suffix=end_of_word_suffix,
        )


class WordLevelTrainer(Trainer):
    """One token per word: the special tokens, then the most frequent words (ties: in order of
    the words) with at least `min_frequency` occurrences, up to `vocab_size`."""

    _options = ("vocab_size", "min_frequency", "show_progress", "special_tokens")
    _state = ("min_frequency", "vocab_size", "show_progress", "special_tokens", "words")

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: list[str | AddedToken] | None = None,
    ) -> None:
        super().__init__(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            show_progress=show_progress,
            special_tokens=special_tokens,
        )


class UnigramTrainer(Trainer):
    """Unigram: tokenizers' own trainer (its seeds, EM and pruning, in Rust), so the vocabulary
    is the one tokenizers trains (up to the order of pieces whose scores tie to 1e-10: tokenizers
    itself walks words in a different order on each run).

    >>> from tokenmill.tokenizers import Tokenizer, models, trainers
    >>> tok = Tokenizer(models.Unigram())
    >>> trainer = UnigramTrainer(vocab_size=30, unk_token="<unk>", show_progress=False)
    >>> tok.train_from_iterator(["low lower lowest"] * 5, trainer)
    >>> tok.encode("lowest").tokens
    ['low', 'e', 's', 't']
    """

    _state = (
        "show_progress",
        "vocab_size",
        "n_sub_iterations",
        "shrinking_factor",
        "special_tokens",
        "initial_alphabet",
        "unk_token",
        "max_piece_length",
        "seed_size",
        "words",
    )
    _extra: ClassVar[dict[str, Any]] = {"seed_size": 1_000_000, "words": {}}

    _options = (
        "vocab_size",
        "show_progress",
        "special_tokens",
        "initial_alphabet",
        "shrinking_factor",
        "unk_token",
        "max_piece_length",
        "n_sub_iterations",
    )

    def __init__(
        self,
        vocab_size: int = 8000,
        show_progress: bool = True,
        special_tokens: list[str | AddedToken] | None = None,
        initial_alphabet: list[str] | None = None,
        shrinking_factor: float = 0.75,
        unk_token: str | None = None,
        max_piece_length: int = 16,
        n_sub_iterations: int = 2,
    ) -> None:
        super().__init__(
            vocab_size=vocab_size,
            show_progress=show_progress,
            special_tokens=special_tokens,
            initial_alphabet=initial_alphabet,
            shrinking_factor=shrinking_factor,
            unk_token=unk_token,
            max_piece_length=max_piece_length,
            n_sub_iterations=n_sub_iterations,
        )


from tokenmill.tokenizers.parity_trainer import ParityBpeTrainer  # noqa: E402 (a module of its own)

__all__ = ["BpeTrainer", "ParityBpeTrainer", "Trainer", "UnigramTrainer", "WordLevelTrainer", "WordPieceTrainer"]
