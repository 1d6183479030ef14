"""`SentencePieceTrainer` on tokenmill's Unigram trainer (and a word count for WORD models):
sentencepiece's flags (as one ``--name=value`` string or as keyword arguments), its inputs
(files, a sentence iterator), its Python-side options (`normalizer`, `pretokenizer`) and outputs
(``<model_prefix>.model`` and ``.vocab``, or a `model_writer`).

>>> SentencePieceTrainer.train(input="corpus.txt", model_prefix="m", vocab_size=100)
>>> from tokenmill.sentencepiece import SentencePieceProcessor
>>> sp = SentencePieceProcessor(model_file="m.model")
>>> sp.get_piece_size(), sp.encode("hello world", out_type=str)
(100, ['▁', 'h', 'ell', 'o', '▁world'])

The model is tokenmill's (`train_unigram`), written as a `.model` file that sentencepiece
loads; its pieces are not sentencepiece's own (the two trainers differ in detail).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from tokenmill.formats import sentencepiece as spm_format

# Flags sentencepiece's trainer takes that do not change what tokenmill trains: how much of the
# corpus to sample (tokenmill counts it all), threads, logging and self-tests.
_IGNORED = {
    "input_format",
    "input_sentence_size",
    "shuffle_input_sentence",
    "num_threads",
    "self_test_sample_size",
    "mining_sentence_size",
    "training_sentence_size",
    "max_sentence_length",
    "minloglevel",
    "train_extremely_large_corpus",
    "vocabulary_output_piece_score",
    "accept_language",
    "random_seed",
    "enable_differential_privacy",
}
_FLAGS = {
    "input",
    "model_prefix",
    "model_type",
    "vocab_size",
    "character_coverage",
    "seed_sentencepiece_size",
    "shrinking_factor",
    "num_sub_iterations",
    "max_sentencepiece_length",
    "split_by_unicode_script",
    "split_by_number",
    "split_by_whitespace",
    "split_digits",
    "treat_whitespace_as_suffix",
    "control_symbols",
    "user_defined_symbols",
    "byte_fallback",
    "normalization_rule_name",
    "add_dummy_prefix",
    "remove_extra_whitespaces",
    "unk_id",
    "bos_id",
    "eos_id",
    "pad_id",
    "unk_piece",
    "bos_piece",
    "eos_piece",
    "pad_piece",
    "unk_surface",
    "use_all_vocab",
    "hard_vocab_limit",
    "escape_whitespaces",
    "pretokenization_delimiter",
} | _IGNORED
_TRUE = {"true", "1", "yes", "t"}
# The flags a `normalizer=` object's spec holds, which may not be given beside it.
_NORMALIZER_FLAGS = (
    "normalization_rule_name",
    "normalization_rule_tsv",
    "add_dummy_prefix",
    "remove_extra_whitespaces",
    "escape_whitespaces",
)
# sentencepiece's rule names as tokenmill normalizers (the whitespace rules come after).
_RULES = {
    "nmt_nfkc": "nfkc",
    "nfkc": "nfkc",
    "identity": "none",
    "nmt_nfkc_cf": "nfkc+lowercase",
    "nfkc_cf": "nfkc+lowercase",
}


def _parse(arg: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    for item in (arg or "").split():
        name, _, value = item.lstrip("-").partition("=")
        flags[name] = value
    for name, value in kwargs.items():
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        flags[name] = value
    unknown = sorted(set(flags) - _FLAGS)
    if unknown:
        raise ValueError(f'unknown field name "{unknown[0]}" in TrainerSpec or NormalizerSpec.')
    return flags


def _bool(flags: dict[str, Any], name: str, default: bool) -> bool:
    value = flags.get(name, default)
    return value if isinstance(value, bool) else str(value).lower() in _TRUE


def _list(flags: dict[str, Any], name: str) -> list[str]:
    value = flags.get(name, "")
    return [v for v in str(value).split(",") if v] if value != "" else []


class SentencePieceTrainer:
    """Trains a Unigram or WORD model from files or a sentence iterator, written as a `.model`
    file."""

    @staticmethod
    def Train(arg: str | None = None, logstream: object = None, **kwargs: Any) -> None:
        """Trains with sentencepiece's flags; `sentence_iterator` (lines as `str` or `bytes`)
        can replace `input`, `model_writer` (anything with `write(bytes)`) `model_prefix`;
        `normalizer` (a `SentencePieceNormalizer`) gives the model its normalizer;
        `pretokenizer` (text → parts) cuts each normalized sentence where no piece may cross,
        the parts joining back to the sentence unless `allow_inconsistent_pretokenization`."""
        iterator = kwargs.pop("sentence_iterator", None)
        iterator = kwargs.pop("sentence_reader", iterator)
        writer = kwargs.pop("model_writer", None)
        words = _Words(
            kwargs.pop("normalizer", None),
            kwargs.pop("pretokenizer", None),
            bool(kwargs.pop("allow_inconsistent_pretokenization", False)),
        )
        flags = _parse(arg, kwargs)
        model_type = str(flags.get("model_type", "unigram")).lower()
        if model_type not in ("unigram", "word"):
            raise RuntimeError(
                f"model_type={flags['model_type']} is not trained by tokenmill.sentencepiece (Unigram and WORD "
                "are); tokenmill.train_bpe trains BPE"
            )
        words.check(flags, model_type)
        prefix = flags.get("model_prefix")
        if not prefix and writer is None:
            raise RuntimeError("TrainerSpec.model_prefix must not be empty.")
        data = _train(flags, iterator, words, model_type)
        if writer is not None:
            writer.write(data)
        if prefix and writer is None:
            from tokenmill._files import write_atomically

            write_atomically(f"{prefix}.model", data)
            vocab = "".join(f"{p.piece}\t{p.score:g}\n" for p in spm_format.read_model(data).pieces)
            write_atomically(f"{prefix}.vocab", vocab.encode("utf-8"))

    train = Train


class _Words:
    """The Python-side options that make the trainer read each sentence itself."""

    def __init__(self, normalizer: Any, pretokenizer: Any, allow_inconsistent: bool) -> None:
        self.normalizer, self.pretokenizer, self.allow_inconsistent = normalizer, pretokenizer, allow_inconsistent

    def check(self, flags: dict[str, Any], model_type: str) -> None:
        if self.normalizer is not None:
            given = [name for name in _NORMALIZER_FLAGS if name in flags]
            if given:
                raise ValueError(f"Cannot specify both a normalizer and normalizer-specific argument: {given[0]}")
        if self.pretokenizer is not None or flags.get("pretokenization_delimiter"):
            if model_type != "unigram":
                raise RuntimeError("PretokenizerForTraining is only supported in UNIGRAM or BPE mode.")
            if self.pretokenizer is not None and flags.get("pretokenization_delimiter"):
                raise RuntimeError("pretokenizer callback and pretokenization_delimiter cannot be set simultaneously.")
            if self.pretokenizer is not None and not callable(self.pretokenizer):
                raise TypeError("pretokenizer must be callable: text -> list of parts")

    def needed(self, flags: dict[str, Any], spec: spm_format.NormalizerSpec) -> bool:
        """Whether Python must read the sentences (Rust's counting has the named rules and
        sentencepiece's default whitespace handling only)."""
        default_flags = spec.add_dummy_prefix and spec.remove_extra_whitespaces
        return (
            self.normalizer is not None
            or self.pretokenizer is not None
            or bool(flags.get("pretokenization_delimiter"))
            or not default_flags
        )


def _corpus(flags: dict[str, Any], iterator: Iterable[Any] | None) -> Any:
    if iterator is not None:
        return (line.decode("utf-8", errors="replace") if isinstance(line, bytes) else str(line) for line in iterator)
    inputs = _list(flags, "input")
    if not inputs:
        raise RuntimeError("TrainerSpec.input must not be empty.")
    return [os.fspath(p) for p in inputs]


def _sentences(corpus: Any) -> Iterator[str]:
    """The corpus line by line (files are read as UTF-8 text, one sentence a line)."""
    if not isinstance(corpus, list):
        yield from (line.rstrip("\r\n") for line in corpus)
        return
    for path in corpus:
        with open(path, encoding="utf-8", errors="replace") as f:
            yield from (line.rstrip("\r\n") for line in f)


_Meta = list[tuple[str, spm_format.PieceType]]


def _meta_pieces(flags: dict[str, Any]) -> tuple[_Meta, dict[str, str], dict[str, int]]:
    """The reserved pieces in id order: `<unk>`, `<s>`, `</s>`, `<pad>` where enabled, at their
    ids (a user-defined symbol of the same name takes the place, as USER_DEFINED), then the
    control symbols, then the user-defined symbols; with the names and ids of the four."""
    names = {
        k: str(flags.get(f"{k}_piece", default))
        for k, default in (("unk", "<unk>"), ("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>"))
    }
    ids = {k: int(flags.get(f"{k}_id", default)) for k, default in (("unk", 0), ("bos", 1), ("eos", 2), ("pad", -1))}
    enabled = sorted((i, k) for k, i in ids.items() if i >= 0)
    if ids["unk"] < 0 or [i for i, _ in enabled] != list(range(len(enabled))):
        raise RuntimeError("tokenmill.sentencepiece puts unk_id and the enabled bos_id, eos_id, pad_id at ids 0, 1, 2…")
    if len({names[k] for _, k in enabled}) != len(enabled):
        raise RuntimeError("unk_piece, bos_piece, eos_piece and pad_piece must differ")
    user_defined = _list(flags, "user_defined_symbols")
    kinds = spm_format.PieceType
    meta: _Meta = [
        (names[k], kinds.UNKNOWN if k == "unk" else kinds.USER_DEFINED if names[k] in user_defined else kinds.CONTROL)
        for _, k in enabled
    ]
    for symbols, kind in ((_list(flags, "control_symbols"), kinds.CONTROL), (user_defined, kinds.USER_DEFINED)):
        taken = {name for name, _ in meta}
        meta += [(name, kind) for name in dict.fromkeys(symbols) if name not in taken]
    return meta, names, ids


def _normalizer_spec(flags: dict[str, Any], words: _Words) -> spm_format.NormalizerSpec:
    """The model's normalizer: the `normalizer` object's, or the named rules with the flags."""
    from tokenmill.sentencepiece.normalizer import named_rules_spec

    if words.normalizer is not None:
        return spm_format.read_normalizer_spec(words.normalizer.serialized_normalizer_spec())
    rule = flags.get("normalization_rule_name", "nmt_nfkc")
    if rule not in _RULES:
        raise RuntimeError(f"No precompiled charsmap is found: {rule}")
    spec = named_rules_spec(rule)
    for name in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
        setattr(spec, name, _bool(flags, name, True))
    spec.explicit |= {"add_dummy_prefix", "remove_extra_whitespaces"}  # as sentencepiece's trainer writes them
    if "escape_whitespaces" in flags:
        spec.explicit.add("escape_whitespaces")
    return spec


def _train(flags: dict[str, Any], iterator: Iterable[Any] | None, words: _Words, model_type: str) -> bytes:
    from tokenmill.sentencepiece import trainer_words

    meta, names, ids = _meta_pieces(flags)
    spec = _normalizer_spec(flags, words)
    corpus = _corpus(flags, iterator)
    symbols = [name for name, kind in meta if kind == spm_format.PieceType.USER_DEFINED]
    counts = None
    if words.needed(flags, spec):
        counts = trainer_words.count_words(
            _sentences(corpus),
            spec,
            words.pretokenizer,
            words.allow_inconsistent,
            str(flags.get("pretokenization_delimiter", "")),
            symbols,
        )
    if model_type == "word":
        model = _word_model(flags, meta, corpus, counts)
    else:
        source = corpus if counts is None else trainer_words.as_word_counts(counts, symbols)
        model = _unigram_model(flags, meta, source, counts is None)
    model.normalizer_spec = spec
    _fill_trainer_spec(model, flags, names, ids, model_type)
    return spm_format.model_bytes(model)


def _unigram_model(flags: dict[str, Any], meta: _Meta, corpus: Any, normalize: bool) -> spm_format.SentencePieceModel:
    """A Unigram model from `train_unigram` (normalizing with the named rules when `normalize`,
    else on words already normalized), its reserved pieces in sentencepiece's order."""
    import json

    from tokenmill.formats.sentencepiece_tokenizer import model_of
    from tokenmill.training_unigram import train_unigram

    kinds = spm_format.PieceType
    rule = flags.get("normalization_rule_name", "nmt_nfkc")
    tok = train_unigram(
        corpus,
        vocab_size=int(flags.get("vocab_size", 8000)),
        character_coverage=float(flags.get("character_coverage", 0.9995)),
        max_piece_length=int(flags.get("max_sentencepiece_length", 16)),
        special_tokens=[name for name, kind in meta if kind == kinds.USER_DEFINED],
        unk_token=next(name for name, kind in meta if kind == kinds.UNKNOWN),
        control_tokens=[name for name, kind in meta if kind == kinds.CONTROL],
        byte_fallback=_bool(flags, "byte_fallback", False),
        normalizer=_RULES[rule] if normalize else "none",
        split_digits=_bool(flags, "split_digits", False),
        seed_size=int(flags.get("seed_sentencepiece_size", 1_000_000)),
        shrinking_factor=float(flags.get("shrinking_factor", 0.75)),
        em_iterations=int(flags.get("num_sub_iterations", 2)),
        show_progress=False,
    )
    doc = json.loads(tok._core.to_json())
    doc["normalizer"] = "none"
    doc["sentencepiece_normalizer"] = {
        "rules": [],
        "add_dummy_prefix": True,
        "remove_extra_whitespaces": True,
        "escape_whitespaces": True,
    }
    model = model_of(doc)
    reserved = {name for name, _ in meta}
    rest = [p for p in model.pieces if p.piece not in reserved]
    model.pieces = [_reserved_piece(name, kind) for name, kind in meta] + rest
    return model


def _reserved_piece(name: str, kind: spm_format.PieceType) -> spm_format.Piece:
    piece = spm_format.Piece(name, 0.0, kind)
    piece.explicit.add("type")
    return piece


def _word_model(flags: dict[str, Any], meta: _Meta, corpus: Any, counts: Any) -> spm_format.SentencePieceModel:
    """A WORD model: the reserved pieces, then the most frequent words."""
    from tokenmill.sentencepiece.word_model import word_pieces

    if counts is None:
        counts = _rust_word_counts(
            flags, corpus, [name for name, kind in meta if kind == spm_format.PieceType.USER_DEFINED]
        )
    room = int(flags.get("vocab_size", 8000)) - len(meta)
    if room < 0:
        raise RuntimeError(f"vocab_size {flags.get('vocab_size')} is smaller than the {len(meta)} reserved pieces")
    use_all = _bool(flags, "use_all_vocab", False)
    pieces = word_pieces(counts, None if use_all else room, {name for name, _ in meta})
    if not use_all and len(pieces) < room and _bool(flags, "hard_vocab_limit", True):
        raise RuntimeError(
            f"Vocabulary size too high ({room + len(meta)}). Please set it to a value <= {len(pieces) + len(meta)}."
        )
    return spm_format.SentencePieceModel(pieces=[_reserved_piece(n, k) for n, k in meta] + pieces)


def _rust_word_counts(flags: dict[str, Any], corpus: Any, symbols: list[str]) -> dict[str, int]:
    """Words counted by tokenmill's counter: the named rules, spaces as `▁`, cut before each
    and around the user-defined `symbols` (which are pieces already)."""
    from tokenmill import _core
    from tokenmill.corpus import count_into

    rule = _RULES[flags.get("normalization_rule_name", "nmt_nfkc")]
    spec = f"{rule}+sentencepiece" if rule != "none" else "sentencepiece"
    counter = _core.WordCounter("metaspace", spec, symbols, False)
    count_into(counter, corpus, False)
    return {w.decode("utf-8", "replace"): c for w, c in counter.most_common(counter.num_words)}


def _fill_trainer_spec(
    model: spm_format.SentencePieceModel, flags: dict[str, Any], names: dict[str, str], ids: dict[str, int], kind: str
) -> None:
    """The trainer spec sentencepiece writes: the model type and size, the reserved pieces'
    names and ids, the symbols."""
    spec = model.trainer_spec
    spec.model_type = spm_format.ModelType.WORD if kind == "word" else spm_format.ModelType.UNIGRAM
    spec.vocab_size = len(model.pieces)
    for k in ("unk", "bos", "eos", "pad"):
        setattr(spec, f"{k}_id", ids[k])
        setattr(spec, f"{k}_piece", names[k])
    kinds = spm_format.PieceType
    reserved = {names[k] for k in ("bos", "eos", "pad")}
    spec.control_symbols = [p.piece for p in model.pieces if p.type == kinds.CONTROL and p.piece not in reserved]
    spec.user_defined_symbols = _list(flags, "user_defined_symbols")
    spec.hard_vocab_limit = _bool(flags, "hard_vocab_limit", True)
    spec.explicit |= {"model_type", "vocab_size"}
