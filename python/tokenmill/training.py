"""`train_bpe`: count words, then run the Rust merge loop."""

from __future__ import annotations

from collections.abc import Iterable

from tokenmill import _checks, _core
from tokenmill.corpus import count_into
from tokenmill.progress import Progress
from tokenmill.tokenizer import Tokenizer


def train_bpe(
    corpus: object,
    *,
    vocab_size: int | None = None,
    num_merges: int | None = None,
    pattern: str = "cl100k",
    normalizer: str = "none",
    byte_level: bool = True,
    end_of_word_suffix: str | None = None,
    unk_token: str | None = None,
    special_tokens: Iterable[str] = (),
    min_frequency: int = 1,
    max_token_length: int | None = None,
    limit_alphabet: int | None = None,
    initial_alphabet: Iterable[str] = (),
    show_progress: bool | None = None,
    text_field: str | None = None,
    base: Tokenizer | None = None,
    tie_break: str = "bytes",
    continuing_subword_prefix: str | None = None,
    join_suffix: bool = False,
) -> Tokenizer:
    """Trains a BPE tokenizer.

    `corpus` is a path, glob, directory, list of paths, iterable of strings, a `WordCounts`
    from `count_words` (its pattern and normalizer are used), or a mapping word → count of
    already split words (then no pre-tokenization is applied). A list of strings is a list of
    paths only when every item looks like a path (a ``/``, a glob character or a file
    extension), otherwise text, whichever files exist; `pathlib.Path` items are always paths,
    an iterator is always text, and an empty path is an error (`tokenmill.corpus.resolve_files`).
    JSON Lines files need `text_field` (the field with each document's text). Give
    `vocab_size` (tokens in all, special tokens included) or `num_merges`.
    `pattern` is a pre-tokenizer preset (`gpt2`, `cl100k`, `o200k`, `whitespace`, `none`) or a regex.
    Byte-level BPE starts from the 256 bytes; character-level (`byte_level=False`) starts from
    the characters seen, with an optional end-of-word symbol such as ``"</w>"``.
    Special tokens get ids 0, 1, … in the order given and are never split or merged.

    Character-level only, `limit_alphabet` keeps the most frequent characters (ties: smaller code
    point); a character left out splits its word there during training and later encodes as
    `unk_token` (an `OutOfVocabularyError` without one). `initial_alphabet` (a string or
    iterable of single characters) is always in the alphabet, seen or not, and counts towards
    `limit_alphabet`; special tokens and the end-of-word suffix do not. Byte-level BPE already
    holds every byte, so there `initial_alphabet` changes nothing and `limit_alphabet` is an error.
    With `base`, training continues from that tokenizer: its ids and merges are kept, its
    pre-tokenizer, normalizer and byte/character level are used, and `vocab_size` is the new total.
    Pairs with equal counts merge in the order of their tokens' bytes (`tie_break="bytes"`), or
    of their ids (`"ids"`: the earlier-made tokens first, as Hugging Face's trainer orders them).
    Hugging Face's marked words (character-level): `join_suffix=True` joins `end_of_word_suffix`
    to a word's last character (``t</w>``) instead of making it a symbol of its own, and
    `continuing_subword_prefix` (``"##"``) starts every character of a word but the first; as in
    tokenizers, a character left out of the alphabet is then dropped and its neighbours meet.

    >>> tok = train_bpe({"cat": 3, "mat": 2}, num_merges=2, byte_level=False)
    >>> tok.merges
    [(b'a', b't'), (b'c', b'at')]
    >>> train_bpe({"cat": 3, "mat": 2, "héé": 1}, num_merges=0, byte_level=False, limit_alphabet=3,
    ...           initial_alphabet="z").token_byte_values()
    [b'a', b't', b'z']
    """
    from tokenmill.counting import WordCounts

    _checks.text("text_field", text_field, optional=True)
    if tie_break not in ("bytes", "ids"):
        raise _core.ConfigError(f"tie_break must be 'bytes' or 'ids', got {tie_break!r}")
    specials, alphabet = check_options(
        vocab_size=vocab_size,
        num_merges=num_merges,
        pattern=_UNUSED if base is not None or isinstance(corpus, WordCounts) else pattern,
        normalizer=normalizer,
        byte_level=byte_level,
        end_of_word_suffix=end_of_word_suffix,
        unk_token=unk_token,
        special_tokens=special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        limit_alphabet=limit_alphabet,
        initial_alphabet=initial_alphabet,
        show_progress=show_progress,
        base=base,
    )
    if base is not None:
        if base._core.keeps_gaps:
            raise _core.ConfigError("continued training from a tokenizer whose regex keeps gaps is not supported")
        pattern, normalizer, byte_level = base.pattern, base.normalizer, base.byte_level
        end_of_word_suffix, unk_token = base.end_of_word_suffix, base.unk_token
    if isinstance(corpus, WordCounts):
        # Counted already (perhaps elsewhere): train on those words, split the way they were.
        counter = corpus._core
    else:
        counter = _core.WordCounter(pattern, normalizer, specials, byte_level)
        count_into(counter, corpus, show_progress, text_field=text_field)
    if counter.num_words == 0 and counter.text_bytes > 0:
        # Said here, where the pattern is known: Rust would only say that the corpus is empty.
        raise _core.CorpusError(
            f"empty corpus: the pattern {counter.pattern!r} found no words in {counter.text_bytes} bytes of text"
        )
    total = num_merges if num_merges is not None else max((vocab_size or 0) - 256, 1)
    with Progress("merging", total, "", show_progress) as bar:
        core = _core.train_bpe(
            counter,
            vocab_size=vocab_size,
            num_merges=num_merges,
            byte_level=byte_level,
            end_of_word_suffix=end_of_word_suffix,
            unk_token=unk_token,
            special_tokens=specials,
            min_frequency=min_frequency,
            max_token_length=max_token_length,
            progress=bar.set,
            base=None if base is None else base._core,
            limit_alphabet=limit_alphabet,
            initial_alphabet=alphabet,
            ties_by_id=tie_break == "ids",
            continuing_subword_prefix=continuing_subword_prefix,
            join_suffix=join_suffix,
        )
    return Tokenizer(core)


# The pattern of a training run that does not split text (continued training, WordCounts).
_UNUSED = object()


def check_options(
    *,
    vocab_size: object = None,
    num_merges: object = None,
    pattern: object = _UNUSED,
    normalizer: object = "none",
    byte_level: object = True,
    end_of_word_suffix: object = None,
    unk_token: object = None,
    special_tokens: object = (),
    min_frequency: object = 1,
    max_token_length: object = None,
    limit_alphabet: object = None,
    initial_alphabet: object = (),
    show_progress: object = None,
    base: object = None,
) -> tuple[list[str], list[str]]:
    """Checks `train_bpe`'s options and returns the special tokens and the initial alphabet as
    lists (a pattern of `_UNUSED` is not checked: the words are split already). The CLI calls it
    before counting, so a bad option fails at once rather than after the corpus has been read."""
    for name, value in (("vocab_size", vocab_size), ("num_merges", num_merges), ("limit_alphabet", limit_alphabet)):
        _checks.count(name, value, optional=True)
    _checks.count("max_token_length", max_token_length, optional=True)
    _checks.count("min_frequency", min_frequency)
    if pattern is not _UNUSED:
        _checks.pattern(pattern)  # type: ignore[arg-type]
    _checks.text("normalizer", normalizer)
    _checks.flag("byte_level", byte_level)
    _checks.text("end_of_word_suffix", end_of_word_suffix, optional=True, nonempty=True)
    _checks.text("unk_token", unk_token, optional=True, nonempty=True)
    _checks.flag("show_progress", show_progress, optional=True)
    specials = _checks.texts("special_tokens", special_tokens)  # type: ignore[arg-type]
    if isinstance(initial_alphabet, (bytes, bytearray)) or not isinstance(initial_alphabet, Iterable):
        raise _core.ConfigError(
            f"initial_alphabet must be a string or an iterable of single-character strings, got {initial_alphabet!r}"
        )
    alphabet = list(initial_alphabet)
    if not all(isinstance(c, str) for c in alphabet):
        raise _core.ConfigError("initial_alphabet must be a string or an iterable of single-character strings")
    for c in alphabet:
        _checks.text("initial_alphabet", c)
    if base is not None and not isinstance(base, Tokenizer):
        raise _core.ConfigError(f"base must be a tokenmill.Tokenizer to continue training from, got {base!r}")
    return specials, alphabet
