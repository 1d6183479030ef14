"""`Tokenizer.train` / `train_from_iterator` of `tokenmill.tokenizers`: the words the tokenizer's
own normalizer and pre-tokenizer cut are counted, tokenmill's trainer for the trainer's kind runs
on them, and the result becomes the tokenizer's model node (its other settings kept) with the
trainer's special tokens added, as `tokenizers` adds them.

>>> from tokenmill.tokenizers import Tokenizer, models, pre_tokenizers, trainers
>>> tok = Tokenizer(models.BPE(unk_token="[UNK]"))
>>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
>>> tok.train_from_iterator(["low lower lowest"] * 5, trainers.BpeTrainer(vocab_size=20, special_tokens=["[UNK]"]))
>>> tok.encode("lowest").tokens
['lowest']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from tokenmill import _core
from tokenmill.tokenizers import trainers as _trainers
from tokenmill.tokenizers.models import Model
from tokenmill.tokenizers.normalizers import Normalizer
from tokenmill.tokenizers.pre_tokenizers import PreTokenizer, _spell

_KINDS = {
    _trainers.BpeTrainer: "BPE",
    _trainers.WordPieceTrainer: "WordPiece",
    _trainers.WordLevelTrainer: "WordLevel",
    _trainers.UnigramTrainer: "Unigram",
}


def texts_of(iterator: Iterable[Any]) -> Iterator[str]:
    """The texts of an iterator of texts or of batches (lists) of texts."""
    for item in iterator:
        if isinstance(item, str):
            yield item
        elif isinstance(item, (list, tuple)):
            for text in item:
                if not isinstance(text, str):
                    raise TypeError(f"training texts are str, not {type(text).__name__}")
                yield text
        else:
            raise TypeError(f"training texts are str (or lists of str), not {type(item).__name__}")


def lines_of(files: Iterable[str]) -> Iterator[str]:
    """Each line of each file, as tokenizers reads training files (the newline kept)."""
    if isinstance(files, str):
        raise TypeError("files is a list of paths")
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                yield from f
        except OSError as e:
            raise _core.CorpusError(f"{path}: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise _core.CorpusError(f"{path}: not UTF-8 at byte {e.start}") from None


def _words(texts: Iterable[str], normalizer: Normalizer | None, pre: PreTokenizer | None) -> Counter[str]:
    """The pieces the tokenizer's normalizer and pre-tokenizer cut `texts` into, counted: a
    batch of lines at a time through Rust (`normalize_batch_with`, `PreTokenizer._count`), or
    text by text in Python where a custom component must run (as tokenizers feeds its trainer)."""
    counts: Counter[str] = Counter()
    batch: list[str] = []

    custom = normalizer is not None and normalizer._is_custom()
    spec = None if normalizer is None or custom else normalizer._spec()
    fused = None if pre is None or custom else pre._counting_spec()

    def add(batch: list[str]) -> None:
        if custom:
            assert normalizer is not None
            batch = [normalizer.normalize_str(t) for t in batch]
        elif fused is not None:
            # Normalized, cut and counted in Rust, no Python string per piece.
            split, prefix_space, spell = fused
            found = _core.count_pieces_with(spec, split, prefix_space, batch)
            counts.update({_spell(w) if spell else w: n for w, n in found})
            return
        if spec is not None:
            batch = _core.normalize_batch_with(spec, batch)
        if pre is None:
            counts.update(t for t in batch if t)
        else:
            counts.update(pre._count(batch))

    for text in texts:
        batch.append(text)
        if len(batch) == _BATCH:
            add(batch)
            batch = []
    if batch:
        add(batch)
    return counts


# Lines per round trip into Rust while counting: enough to pay for the call, few enough that a
# batch's pieces stay small next to the counts.
_BATCH = 4096


def train(tokenizer: Any, texts: Iterable[str], trainer: _trainers.Trainer | None) -> None:
    """Trains `tokenizer`'s model on `texts` with `trainer` (the model's default one if None)."""
    model = tokenizer._document()["model"]
    if trainer is None:
        trainer = tokenizer.model.get_trainer()
    kind = _KINDS.get(type(trainer))
    if kind is None:
        raise TypeError(f"a trainer from tokenmill.tokenizers.trainers, not {type(trainer).__name__}")
    if kind != model.get("type"):
        raise _core.ConfigError(
            f"{type(trainer).__name__} can only train a {kind} model, not a {model.get('type')} one"
        )
    specials = [t.content for t in trainer.special_tokens]
    counts = _words(texts, tokenizer.normalizer, tokenizer.pre_tokenizer)
    if kind == "Unigram":
        node = _unigram(counts, trainer, specials)
    else:
        node = {"BPE": _bpe, "WordPiece": _wordpiece, "WordLevel": _wordlevel}[kind](counts, model, trainer, specials)
    tokenizer.model = Model._wrap(node)
    tokenizer.add_special_tokens(list(trainer.special_tokens))


def _progress(trainer: Any) -> bool | None:
    """tokenmill's progress setting for a trainer's `show_progress`: shown where tokenizers shows
    its bars (on a terminal or in a notebook), or never."""
    return None if trainer.show_progress else False


def _strings(core: Any) -> dict[str, int]:
    return {core.token_string(i): i for i in range(core.n_vocab) if core.token_kind(i) != "unused"}


def _bpe(counts: Counter[str], model: dict[str, Any], trainer: Any, specials: list[str]) -> dict[str, Any]:
    from tokenmill.training import train_bpe

    tok = train_bpe(
        dict(counts),
        vocab_size=trainer.vocab_size,
        byte_level=False,
        end_of_word_suffix=trainer.end_of_word_suffix,
        special_tokens=specials,
        min_frequency=trainer.min_frequency,
        max_token_length=trainer.max_token_length,
        limit_alphabet=trainer.limit_alphabet,
        initial_alphabet=trainer.initial_alphabet,
        show_progress=_progress(trainer),
        tie_break="ids",  # tokenizers' order: the result is its vocabulary and merges
        continuing_subword_prefix=trainer.continuing_subword_prefix or None,
        join_suffix=bool(trainer.end_of_word_suffix),  # tokenizers joins it to the last character
    )
    node = dict(model)
    node["vocab"] = _strings(tok._core)
    node["merges"] = [[a.decode("utf-8"), b.decode("utf-8")] for a, b in tok.merges]
    node["end_of_word_suffix"] = trainer.end_of_word_suffix
    node["continuing_subword_prefix"] = trainer.continuing_subword_prefix
    return node


def _wordlevel(counts: Counter[str], model: dict[str, Any], trainer: Any, specials: list[str]) -> dict[str, Any]:
    vocab: dict[str, int] = {}
    for token in specials:
        vocab.setdefault(token, len(vocab))
    for word, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if len(vocab) >= trainer.vocab_size:
            break
        if n >= trainer.min_frequency:
            vocab.setdefault(word, len(vocab))
    return dict(model, vocab=vocab)


def _wordpiece(counts: Counter[str], model: dict[str, Any], trainer: Any, specials: list[str]) -> dict[str, Any]:
    from tokenmill.training_wordpiece import train_wordpiece

    unk = model.get("unk_token", "[UNK]")
    tok = train_wordpiece(
        dict(counts),
        vocab_size=trainer.vocab_size,
        continuing_subword_prefix=trainer.continuing_subword_prefix,
        special_tokens=specials if unk in specials else [unk, *specials],
        unk_token=unk,
        min_frequency=trainer.min_frequency,
        limit_alphabet=trainer.limit_alphabet,
        show_progress=_progress(trainer),
    )
    return dict(model, vocab=_strings(tok._core), continuing_subword_prefix=trainer.continuing_subword_prefix)


def _unigram(counts: Counter[str], trainer: Any, specials: list[str]) -> dict[str, Any]:
    """tokenizers' Unigram trainer (in Rust) on the counted words: its vocabulary and layout (the
    unknown piece first when it is not a special token, then the special tokens, then the pieces
    by score); without `unk_token`, no unknown piece at all (encoding text that needs one is then
    an error, as in tokenizers)."""
    from tokenmill.progress import Progress, shrinking

    with Progress("training", None, "", _progress(trainer)) as bar:
        report = shrinking(bar)
        pieces, unk_id = _core.train_unigram_huggingface(
            sorted(counts.items()),
            vocab_size=trainer.vocab_size,
            special_tokens=specials,
            unk_token=trainer.unk_token,
            shrinking_factor=trainer.shrinking_factor,
            max_piece_length=trainer.max_piece_length,
            n_sub_iterations=trainer.n_sub_iterations,
            initial_alphabet=list(trainer.initial_alphabet or []),
            seed_size=1_000_000,
            progress=report,
        )
    return {"type": "Unigram", "unk_id": unk_id, "vocab": [list(p) for p in pieces], "byte_fallback": False}
