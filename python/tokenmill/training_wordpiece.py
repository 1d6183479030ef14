"""`train_wordpiece`: count words with BERT's normalizer and pre-tokenizer, then run the Rust
WordPiece trainer (merges by likelihood), and assemble a BERT-style tokenizer."""

from __future__ import annotations

from collections.abc import Iterable

from tokenmill import _checks, _core
from tokenmill.corpus import count_into
from tokenmill.formats import wordpiece
from tokenmill.progress import Progress
from tokenmill.tokenizer import Tokenizer


def train_wordpiece(
    corpus: object,
    *,
    vocab_size: int,
    continuing_subword_prefix: str = "##",
    special_tokens: Iterable[str] = wordpiece.BERT_SPECIALS,
    unk_token: str = "[UNK]",
    min_frequency: int = 0,
    limit_alphabet: int | None = None,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    max_input_chars_per_word: int = 100,
    show_progress: bool | None = None,
    text_field: str | None = None,
) -> Tokenizer:
    """Trains a WordPiece (BERT) tokenizer. Each merge joins the pair with the highest
    count(ab) / (count(a)·count(b)) — the pieces that occur together most above chance — with
    `##` on word-internal pieces; ties break on bytes. `corpus` is what `train_bpe` takes, or a
    `WordCounts` counted with ``pattern="bert"``. Special tokens get ids 0, 1, … in order and
    `unk_token` must be one of them. The tokenizer has BERT's normalizer (lowercasing and accent
    stripping as given), pre-tokenizer and `[CLS] $A [SEP]` template.

    >>> tok = train_wordpiece(["low lower lowest newer wider"] * 10, vocab_size=40)
    >>> tok.model_type
    'wordpiece'
    """
    _checks.text("text_field", text_field, optional=True)
    from tokenmill.counting import WordCounts

    _checks.count("vocab_size", vocab_size, minimum=1, maximum=2**32 - 2)
    _checks.count("min_frequency", min_frequency)
    _checks.count("limit_alphabet", limit_alphabet, optional=True)
    _checks.count("max_input_chars_per_word", max_input_chars_per_word, minimum=1)
    _checks.text("continuing_subword_prefix", continuing_subword_prefix, nonempty=True)
    _checks.flag("lowercase", lowercase)
    _checks.flag("strip_accents", strip_accents, optional=True)
    _checks.flag("show_progress", show_progress, optional=True)
    specials = _checks.texts("special_tokens", special_tokens)
    if unk_token not in specials:
        raise _core.ConfigError(f"unk_token {unk_token!r} must be one of special_tokens {specials!r}")
    normalizer = wordpiece.bert_normalizer(lowercase=lowercase, strip_accents=strip_accents)
    if isinstance(corpus, WordCounts):
        if corpus.pattern != "bert":
            raise _core.ConfigError(f"WordPiece trains on words counted with pattern='bert', not {corpus.pattern!r}")
        counter = corpus._core
        normalizer = counter.normalizer
    else:
        counter = _core.WordCounter("bert", normalizer, specials, False)
        count_into(counter, corpus, show_progress, text_field=text_field)
    with Progress("training", vocab_size, "", show_progress) as bar:
        core = _core.train_wordpiece(
            counter,
            vocab_size=vocab_size,
            prefix=continuing_subword_prefix,
            special_tokens=specials,
            min_frequency=min_frequency,
            limit_alphabet=limit_alphabet,
            unk_token=unk_token,
            max_input_chars_per_word=max_input_chars_per_word,
            normalizer=normalizer,
            progress=bar.set,
        )
    return Tokenizer(core)
