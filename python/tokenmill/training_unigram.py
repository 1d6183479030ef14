"""`train_unigram`: count words the SentencePiece way (spaces as `▁`, cut before each), then run
the Rust Unigram trainer (seed substrings, EM, pruning) and assemble the tokenizer."""

from __future__ import annotations

from collections.abc import Iterable

from tokenmill import _checks, _core
from tokenmill.corpus import count_into
from tokenmill.progress import Progress, shrinking
from tokenmill.tokenizer import Tokenizer


def train_unigram(
    corpus: object,
    *,
    vocab_size: int,
    character_coverage: float = 0.9995,
    max_piece_length: int = 16,
    special_tokens: Iterable[str] = (),
    unk_token: str = "<unk>",
    control_tokens: Iterable[str] = ("<s>", "</s>"),
    byte_fallback: bool = False,
    normalizer: str = "nfkc",
    treat_whitespace_as_suffix: bool = False,
    split_digits: bool = False,
    seed_size: int = 1_000_000,
    shrinking_factor: float = 0.75,
    em_iterations: int = 2,
    show_progress: bool | None = None,
    text_field: str | None = None,
) -> Tokenizer:
    """Trains a Unigram (SentencePiece-style) tokenizer: spaces become `▁` (with one in front of
    the text), seed pieces are the frequent substrings, EM re-estimates their probabilities and
    pruning drops the pieces whose loss costs the corpus least likelihood, until `vocab_size`.

    `vocab_size` counts every token: `unk_token` (id 0), the `control_tokens` (`<s>`, `</s>`:
    inserted by templates, never matched in text), the `special_tokens` (matched in text), with
    `byte_fallback` the 256 byte tokens `<0x00>`…`<0xFF>` (characters outside the vocabulary
    become their UTF-8 bytes instead of `<unk>`), then the pieces. Characters rarer than
    `character_coverage` of the text leaves out are unknown. `normalizer` runs before the
    SentencePiece whitespace rules (tabs and line breaks count as spaces).

    >>> tok = train_unigram("corpus.txt", vocab_size=100)
    >>> tok
    <tokenmill.Tokenizer Unigram, 100 tokens, pattern='metaspace'>
    >>> tok.tokenize("Hello world")
    ['▁H', 'ell', 'o', '▁world']
    """
    _checks.text("text_field", text_field, optional=True)
    from tokenmill.counting import WordCounts

    _checks.count("vocab_size", vocab_size, minimum=1, maximum=2**32 - 2)
    _checks.count("max_piece_length", max_piece_length, minimum=1, maximum=1024)
    _checks.count("seed_size", seed_size, minimum=1)
    _checks.count("em_iterations", em_iterations, minimum=1, maximum=100)
    _checks.flag("byte_fallback", byte_fallback)
    _checks.flag("treat_whitespace_as_suffix", treat_whitespace_as_suffix)
    _checks.flag("split_digits", split_digits)
    _checks.flag("show_progress", show_progress, optional=True)
    _checks.text("unk_token", unk_token, nonempty=True)
    # The same ranges as the trainer's own checks (src/models/unigram/train.rs), made here so a
    # bad value is refused before the corpus is read.
    for name, value, upper_open in (
        ("character_coverage", character_coverage, False),
        ("shrinking_factor", shrinking_factor, True),
    ):
        number = not isinstance(value, bool) and isinstance(value, (int, float))
        if not number or not (0 < value < 1 if upper_open else 0 < value <= 1):
            interval = "(0, 1)" if upper_open else "(0, 1]"
            raise _core.ConfigError(f"{name} must be in {interval}, got {value!r}")
    specials = _checks.texts("special_tokens", special_tokens)
    controls = _checks.texts("control_tokens", control_tokens)
    named = [unk_token, *controls, *specials]
    if len(set(named)) != len(named):
        raise _core.ConfigError(f"unk_token, control_tokens and special_tokens repeat a name: {named!r}")
    reserved = len(named) + (256 if byte_fallback else 0)
    if vocab_size <= reserved:
        raise _core.ConfigError(
            f"vocab_size {vocab_size} leaves no room for pieces after {reserved} special, control and byte tokens"
        )
    spec = f"{normalizer}+sentencepiece" if normalizer not in ("", "none") else "sentencepiece"
    pattern = "metaspace_suffix" if treat_whitespace_as_suffix else "metaspace"
    if treat_whitespace_as_suffix:
        raise _core.ConfigError("treat_whitespace_as_suffix is not supported by train_unigram yet")
    if isinstance(corpus, WordCounts):
        if corpus.pattern != pattern or "sentencepiece" not in corpus.normalizer:
            raise _core.ConfigError(
                f"Unigram trains on words counted with pattern={pattern!r} and a normalizer ending in "
                f"'sentencepiece' (e.g. 'nfkc+sentencepiece'), not {corpus.pattern!r} / {corpus.normalizer!r}"
            )
        counter = corpus._core
        spec = counter.normalizer
    else:
        counter = _core.WordCounter(pattern, spec, specials, False)
        count_into(counter, corpus, show_progress, text_field=text_field)
    with Progress("training", None, "", show_progress) as bar:
        report = shrinking(bar)
        core = _core.train_unigram(
            counter,
            pieces=vocab_size - reserved,
            character_coverage=float(character_coverage),
            max_piece_length=max_piece_length,
            seed_size=seed_size,
            shrinking_factor=float(shrinking_factor),
            em_iterations=em_iterations,
            whitespace_as_suffix=treat_whitespace_as_suffix,
            split_digits=split_digits,
            unk_token=unk_token,
            control_tokens=controls,
            special_tokens=specials,
            byte_fallback=byte_fallback,
            normalizer=spec,
            pattern=pattern,
            progress=report,
        )
    return Tokenizer(core)
