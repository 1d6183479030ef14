"""`SentencePieceTrainer` on tokenmill's Unigram trainer: sentencepiece's flags (as one
``--name=value`` string or as keyword arguments), its inputs (files, a sentence iterator) and
outputs (``<model_prefix>.model`` and ``.vocab``, or a `model_writer`).

>>> SentencePieceTrainer.train(input="corpus.txt", model_prefix="m", vocab_size=8000)   # doctest: +SKIP

The model is tokenmill's (`train_unigram`), written as a `.model` file that sentencepiece
loads; its pieces are not sentencepiece's own (the two trainers differ in detail).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
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
    "hard_vocab_limit",
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
} | _IGNORED
_TRUE = {"true", "1", "yes", "t"}
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
    """Trains a Unigram model from files or a sentence iterator, written as a `.model` file."""

    @staticmethod
    def Train(arg: str | None = None, logstream: object = None, **kwargs: Any) -> None:
        """Trains with sentencepiece's flags; `sentence_iterator` (lines as `str` or `bytes`)
        can replace `input`, and `model_writer` (anything with `write(bytes)`) `model_prefix`."""
        iterator = kwargs.pop("sentence_iterator", None)
        writer = kwargs.pop("model_writer", None)
        flags = _parse(arg, kwargs)
        if flags.get("model_type", "unigram").lower() != "unigram":
            raise RuntimeError(
                f"model_type={flags['model_type']} is not trained by tokenmill.sentencepiece (Unigram is); "
                "tokenmill.train_bpe trains BPE"
            )
        prefix = flags.get("model_prefix")
        if not prefix and writer is None:
            raise RuntimeError("TrainerSpec.model_prefix must not be empty.")
        data = _train(flags, iterator)
        if writer is not None:
            writer.write(data)
        if prefix and writer is None:
            from tokenmill._files import write_atomically

            write_atomically(f"{prefix}.model", data)
            vocab = "".join(f"{p.piece}\t{p.score:g}\n" for p in spm_format.read_model(data).pieces)
            write_atomically(f"{prefix}.vocab", vocab.encode("utf-8"))

    train = Train


def _corpus(flags: dict[str, Any], iterator: Iterable[Any] | None) -> Any:
    if iterator is not None:
        return (line.decode("utf-8", errors="replace") if isinstance(line, bytes) else str(line) for line in iterator)
    inputs = _list(flags, "input")
    if not inputs:
        raise RuntimeError("TrainerSpec.input must not be empty.")
    return [os.fspath(p) for p in inputs]


def _train(flags: dict[str, Any], iterator: Iterable[Any] | None) -> bytes:
    from tokenmill.training_unigram import train_unigram

    rule = flags.get("normalization_rule_name", "nmt_nfkc")
    if rule not in _RULES:
        raise RuntimeError(f"No precompiled charsmap is found: {rule}")
    user_defined = _list(flags, "user_defined_symbols")
    names = {
        k: flags.get(f"{k}_piece", default)
        for k, default in (("unk", "<unk>"), ("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>"))
    }
    ids = {k: int(flags.get(f"{k}_id", default)) for k, default in (("unk", 0), ("bos", 1), ("eos", 2), ("pad", -1))}
    if ids["unk"] != 0 or any(ids[k] not in (-1, n) for n, k in enumerate(("bos", "eos"), 1)):
        raise RuntimeError("tokenmill.sentencepiece trains with unk_id=0 and <s>, </s> right after it")
    controls = [names[k] for k in ("bos", "eos") if ids[k] >= 0]
    if ids["pad"] >= 0:
        if ids["pad"] != len(controls) + 1:
            raise RuntimeError("tokenmill.sentencepiece puts pad_id right after the other meta pieces")
        controls.append(names["pad"])
    controls += _list(flags, "control_symbols")
    tok = train_unigram(
        _corpus(flags, iterator),
        vocab_size=int(flags.get("vocab_size", 8000)),
        character_coverage=float(flags.get("character_coverage", 0.9995)),
        max_piece_length=int(flags.get("max_sentencepiece_length", 16)),
        special_tokens=user_defined,
        unk_token=names["unk"],
        control_tokens=controls,
        byte_fallback=_bool(flags, "byte_fallback", False),
        normalizer=_RULES[rule],
        split_digits=_bool(flags, "split_digits", False),
        seed_size=int(flags.get("seed_sentencepiece_size", 1_000_000)),
        shrinking_factor=float(flags.get("shrinking_factor", 0.75)),
        em_iterations=int(flags.get("num_sub_iterations", 2)),
        show_progress=False,
    )
    return _model_file(tok, rule, set(user_defined))


def _model_file(tok: Any, rule: str, user_defined: set[str]) -> bytes:
    """The `.model` file of a tokenizer `train_unigram` made: its normalizer steps become the
    named rules' character map, the whitespace rules sentencepiece's defaults (which are
    tokenmill's `sentencepiece` step), and the symbols matched in text USER_DEFINED pieces."""
    import json

    from tokenmill.formats.sentencepiece_tokenizer import model_of
    from tokenmill.sentencepiece.normalizer import named_rules_spec

    doc = json.loads(tok._core.to_json())
    doc["normalizer"] = "none"
    doc["sentencepiece_normalizer"] = {
        "rules": [],
        "add_dummy_prefix": True,
        "remove_extra_whitespaces": True,
        "escape_whitespaces": True,
    }
    model = model_of(doc)
    rules = named_rules_spec(rule)
    model.normalizer_spec.name = rule
    model.normalizer_spec.precompiled_charsmap = rules.precompiled_charsmap
    for piece in model.pieces:
        if piece.piece in user_defined and piece.type == spm_format.PieceType.CONTROL:
            piece.type = spm_format.PieceType.USER_DEFINED
            piece.explicit.add("type")
    model.trainer_spec.control_symbols = [
        p.piece
        for p in model.pieces
        if p.type == spm_format.PieceType.CONTROL and p.piece not in ("<s>", "</s>", "<pad>")
    ]
    model.trainer_spec.user_defined_symbols = [
        p.piece for p in model.pieces if p.type == spm_format.PieceType.USER_DEFINED
    ]
    return spm_format.model_bytes(model)
