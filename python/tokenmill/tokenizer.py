"""The `Tokenizer` users hold: a thin typed layer over the Rust pipeline in `_core`."""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tokenmill import _checks, _core
from tokenmill._files import input_file, remove_stale_temp_files

if TYPE_CHECKING:
    import numpy as np

    from tokenmill.streaming import DecodeStream

SpecialArg = Literal["all"] | Collection[str]
# The default of the special-token arguments (resolved per model in `_special_args`).
_DEFAULT: Any = frozenset(["<tokenmill: default>"])


def _refuse_named(text: str, named: list[str]) -> None:
    """Raises if `text` holds one of `named` (strings `disallowed_special` names that are not
    special tokens): the first in the text, the longer of two at the same place."""
    found = [(text.find(t), -len(t), t) for t in named if t in text]
    if found:
        raise _core.DisallowedSpecialError(
            f"text contains {min(found)[2]!r}, which disallowed_special names; "
            "pass disallowed_special=() to encode it as ordinary text"
        )


def _without_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8; like tiktoken, encode them as U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _token_text(token: bytes) -> str:
    """A token's bytes as text; bytes that are not UTF-8 show as `\\xNN`."""
    return token.decode("utf-8", errors="backslashreplace")


class Tokenizer:
    """A trained or loaded tokenizer: normalize → pre-tokenize → subword model → ids, and back.

    >>> tok = Tokenizer.load("tok.json")          # doctest: +SKIP
    >>> tok.decode(tok.encode("hello world"))     # doctest: +SKIP
    'hello world'
    """

    __slots__ = ("_core", "_settings", "_call_cores", "_chat")

    def __init__(self, core: _core.CoreTokenizer, chat: dict[str, Any] | None = None) -> None:
        self._core = core
        # The core's model-input settings as Python values, read once (see `model_inputs.current`).
        self._settings: dict[str, Any] | None = None
        # Cores with the settings of recent `tokenizer(...)` calls (they share the vocabulary).
        self._call_cores: dict[tuple[object, ...], _core.CoreTokenizer] = {}
        # The chat template and the special-token names it uses (bos_token, eos_token, ...).
        self._chat: dict[str, Any] = dict(chat or {})

    # -- files -------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Loads a file written by `save` (raises `FormatError` for anything else)."""
        return cls(_core.CoreTokenizer.load(os.fspath(path)))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the tokenizer as versioned JSON, atomically (temp file + rename)."""
        remove_stale_temp_files(path)  # left by killed saves (Rust's writer does not look)
        self._core.save(os.fspath(path))

    def save_vocab(self, path: str | os.PathLike[str]) -> None:
        """Writes a listing for people: one line per id with the token and the merge that made it."""
        self._core.save_vocab_listing(os.fspath(path))

    def vocab_listing(self) -> str:
        """The text `save_vocab` writes."""
        return self._core.vocab_listing()

    # -- other libraries' files ---------------------------------------------------------------
    @classmethod
    def from_tiktoken(
        cls,
        path_or_ranks: str | os.PathLike[str] | Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Tokenizer:
        """Loads a tiktoken vocabulary: a `.tiktoken` file (or `.tiktoken.gz`) or a bytes → rank
        mapping. `pattern` is a preset (`gpt2`/`r50k_base`, `p50k_base`, `cl100k_base`,
        `o200k_base`, or `cl100k`, `o200k`) or a regex. With `special_tokens=None`, an OpenAI
        encoding name brings that encoding's special tokens.

        >>> enc = Tokenizer.from_tiktoken("cl100k_base.tiktoken", pattern="cl100k_base")  # doctest: +SKIP
        >>> enc.encode("hello world")                                                      # doctest: +SKIP
        [15339, 1917]
        """
        from tokenmill.formats import tiktoken as tt

        if not isinstance(pattern, str):
            raise _core.ConfigError(f"pattern must be a preset name or a regex string, not {pattern!r}")
        if isinstance(pattern, str) and _has_surrogates(pattern):
            raise _core.PatternError(f"pattern {pattern!r} holds a lone surrogate, which is not text")
        if special_tokens is not None and not isinstance(special_tokens, Mapping):
            raise _core.ConfigError(f"special_tokens must map str to int, not {special_tokens!r}")
        if special_tokens is None:
            special_tokens = tt.OPENAI_SPECIAL_TOKENS.get(pattern, {})
        specials = _special_pairs(special_tokens)
        if isinstance(path_or_ranks, Mapping):
            return cls(_core.CoreTokenizer.from_ranks(tt.token_pairs(path_or_ranks), pattern, specials))
        if not isinstance(path_or_ranks, (str, os.PathLike)):
            raise _core.ConfigError(f"expected a .tiktoken path or a bytes → rank mapping, not {path_or_ranks!r}")
        path = input_file(path_or_ranks, "a .tiktoken file")
        return cls(_core.CoreTokenizer.from_tiktoken_file(path, pattern, specials))

    def save_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Writes the ordinary tokens as a `.tiktoken` file (rank = id). Special tokens and the
        pattern are not part of that format: pass them to `from_tiktoken` when loading."""
        from tokenmill.formats import tiktoken as tt

        if not self.byte_level:
            raise _core.ConfigError("the tiktoken format holds byte-level BPE only")
        specials = set(self.special_tokens.values())
        tt.write_ranks(path, [(i, self._core.token_bytes(i)) for i in self._ordinary_ids(specials)])

    @classmethod
    def from_huggingface(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Loads a `tokenizer.json`: byte-level BPE (GPT-2 style vocabulary and merges, `Split`
        and `ByteLevel` pre-tokenizers), WordPiece (BERT) or Unigram (SentencePiece-style:
        `Precompiled` + whitespace steps + `Metaspace`, as transformers writes for T5 or XLNet;
        see `tokenmill.formats.huggingface_sentencepiece` for where such files differ from
        SentencePiece), with added tokens, post-processor, truncation and padding. Added tokens
        become special tokens: pass ``allowed_special="all"`` to `encode` to match them as
        Hugging Face does (WordPiece tokenizers match them by default).

        >>> tok = Tokenizer.from_huggingface("t5/tokenizer.json")                 # doctest: +SKIP
        >>> tok.encode("Hello</s>", allowed_special="all")                        # doctest: +SKIP
        [8774, 1]
        """
        from tokenmill.chat import read_tokenizer_config
        from tokenmill.formats import huggingface as hf
        from tokenmill.formats import huggingface_sentencepiece, wordpiece

        p = Path(path)
        document, sections = hf.open_tokenizer_json(p)
        model_type = sections["model"].get("type")
        if model_type == "WordPiece":
            tok = cls(wordpiece.read_tokenizer_json(document, sections, str(p)))
        elif model_type == "Unigram":
            tok = cls(huggingface_sentencepiece.read_tokenizer_json(document, sections, str(p)))
        else:
            tok = cls(hf.read_tokenizer_json(document, sections, str(p)))
        # A tokenizer_config.json beside it brings the chat template and bos/eos names.
        tok._chat = read_tokenizer_config(p)
        return tok

    def to_huggingface(self, path: str | os.PathLike[str]) -> None:
        """Writes a `tokenizer.json` that `tokenizers.Tokenizer.from_file` (and
        `transformers.PreTrainedTokenizerFast`) load and encode identically. Unigram models are
        written as `Precompiled` + whitespace steps + `Metaspace` + `Unigram`, identical except
        for the few inputs `tokenmill.formats.huggingface_sentencepiece` lists (grapheme clusters
        Hugging Face's `Precompiled` maps whole, text spelling a control or byte piece, ties
        between equal-score cuts).

        >>> Tokenizer.from_sentencepiece("spm.model").to_huggingface("tokenizer.json")   # doctest: +SKIP
        """
        from tokenmill.formats import huggingface as hf
        from tokenmill.formats import huggingface_sentencepiece, wordpiece

        if self.model_type == "wordpiece":
            wordpiece.write_tokenizer_json(path, self._core)
        elif self.model_type == "unigram" or self.model_config().get("sentencepiece"):
            huggingface_sentencepiece.to_tokenizer_json(path, self._core)
        else:
            hf.write_tokenizer_json(path, self._core)

    @classmethod
    def from_wordpiece_vocab(
        cls,
        path: str | os.PathLike[str],
        *,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        unk_token: str = "[UNK]",
        special_tokens: Sequence[str] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> Tokenizer:
        """Loads a BERT `vocab.txt` (line number = id) with BERT's normalizer (`lowercase`;
        accents stripped when lowercasing unless `strip_accents` says otherwise), pre-tokenizer
        and `[CLS] $A [SEP]` / `[CLS] $A [SEP] $B:1 [SEP]:1` template. The special tokens present
        in the vocabulary are matched in text (`[MASK]` encodes as itself).

        >>> tok = Tokenizer.from_wordpiece_vocab("vocab.txt")     # doctest: +SKIP
        >>> tok.tokenize("unaffable")                              # doctest: +SKIP
        ['una', '##ffa', '##ble']
        """
        from tokenmill.formats import wordpiece

        _checks.flag("lowercase", lowercase)
        _checks.flag("strip_accents", strip_accents, optional=True)
        _checks.text("unk_token", unk_token, nonempty=True)
        _checks.text("continuing_subword_prefix", continuing_subword_prefix, nonempty=True)
        _checks.count("max_input_chars_per_word", max_input_chars_per_word, minimum=1)
        core = wordpiece.from_vocab_txt(
            path,
            lowercase=lowercase,
            strip_accents=strip_accents,
            clean_text=_checks.flag("clean_text", clean_text),
            handle_chinese_chars=_checks.flag("handle_chinese_chars", handle_chinese_chars),
            unk_token=unk_token,
            special_tokens=_checks.texts("special_tokens", special_tokens),
            prefix=continuing_subword_prefix,
            max_input_chars_per_word=max_input_chars_per_word,
        )
        return cls(core)

    def save_vocab_txt(self, path: str | os.PathLike[str]) -> None:
        """Writes a WordPiece vocabulary as BERT's `vocab.txt` (one token per line)."""
        from tokenmill.formats import wordpiece

        if self.model_type != "wordpiece":
            raise _core.ConfigError(f"vocab.txt holds WordPiece vocabularies; this tokenizer is {self.model_type}")
        wordpiece.write_vocab_txt(path, self._core)

    @property
    def model_type(self) -> str:
        """`"bpe"`, `"wordpiece"` or `"unigram"`."""
        return self._core.model_type

    def model_config(self) -> dict[str, Any]:
        """The model's options (not its vocabulary), e.g. ``{"type": "wordpiece", "unk_token": ...}``."""
        import json

        return json.loads(self._core.model_config_json())

    @classmethod
    def from_sentencepiece(cls, path: str | os.PathLike[str] | bytes) -> Tokenizer:
        """Loads a SentencePiece `.model` file (or its bytes): the Unigram or BPE model with its
        piece kinds (control, unknown, byte, user-defined, unused), byte fallback and the
        normalizer it embeds (precompiled character map, dummy prefix, whitespace rules).
        `encode(text)` returns what `SentencePieceProcessor.encode(text)` does: no `<s>`/`</s>`
        unless asked.

        >>> sp = Tokenizer.from_sentencepiece("spm.model")   # doctest: +SKIP
        >>> sp.tokenize("Hello world")                        # doctest: +SKIP
        ['▁Hello', '▁world']
        """
        from tokenmill.formats import sentencepiece_tokenizer

        return cls(sentencepiece_tokenizer.read(path))

    def save_sentencepiece(self, path: str | os.PathLike[str]) -> None:
        """Writes a Unigram tokenizer as a SentencePiece `.model` file, which
        `SentencePieceProcessor` loads and encodes with as this tokenizer does. A tokenizer read
        by `from_sentencepiece` gives back the very file it was read from (training options and
        normalizer name included); others get piece types from their token kinds (a special token
        becomes a control symbol), their scores, their normalizer's rules as a precompiled map
        (named "tokenmill") and SentencePiece's defaults for the training options. `ConfigError`
        for BPE and WordPiece models and for normalizers SentencePiece cannot express.

        >>> Tokenizer.from_sentencepiece("spm.model").save_sentencepiece("copy.model")   # doctest: +SKIP
        """
        from tokenmill.formats import sentencepiece_tokenizer

        sentencepiece_tokenizer.write(path, self._core)

    @classmethod
    def from_gpt2(cls, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> Tokenizer:
        """Loads GPT-2's `vocab.json` + `merges.txt` pair."""
        vocab = input_file(vocab_path, "a GPT-2 vocab.json")
        return cls(_core.gpt2_files(vocab, input_file(merges_path, "a GPT-2 merges.txt")))

    def _ordinary_ids(self, specials: set[int] | None = None) -> list[int]:
        return self._core.ordinary_ids()

    def truncated(self, vocab_size: int) -> Tokenizer:
        """The tokenizer that training with this smaller `vocab_size` would have given: merges
        form a prefix, so it keeps the special tokens, the base alphabet and the first merges.

        >>> small = tok.truncated(1000)   # doctest: +SKIP
        """
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise _core.ConfigError(f"vocab_size must be an int, got {vocab_size!r}")
        if not 0 <= vocab_size <= self.vocab_size:
            raise _core.ConfigError(f"vocab_size must be at most this tokenizer's {self.vocab_size}, got {vocab_size}")
        return type(self)(self._core.truncated(vocab_size))

    # -- encoding ----------------------------------------------------------------------------
    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
        disallowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
        sample: bool = False,
        alpha: float | None = None,
        dropout: float | None = None,
        seed: int | None = None,
    ) -> list[int]:
        """Encodes `text` with tiktoken's special-token rules.

        Special tokens in `allowed_special` (or all, with ``"all"``) become their ids; a special
        token in `disallowed_special` that appears in the text raises `DisallowedSpecialError`;
        with ``disallowed_special=()`` special-token text is encoded as ordinary text.

        Subword regularization: ``sample=True`` draws a cut instead of taking the best — Unigram
        models by `alpha` (see `encode_sampled`), BPE models by BPE-dropout with probability
        `alpha` (as SentencePiece does); ``dropout=p`` is BPE-dropout by name. `seed` repeats a
        draw. The piece cache is not used for (or filled by) sampled cuts.

        >>> tok.encode("hi<|endoftext|>", allowed_special="all")   # doctest: +SKIP
        [5067, 0]
        >>> tok.encode("lowest", dropout=0.1, seed=7)   # doctest: +SKIP
        [75, 322, 83]
        """
        if sample or dropout is not None or alpha is not None or seed is not None:
            if dropout is not None:
                if self.model_type != "bpe":
                    raise _core.ConfigError(
                        f"dropout is for BPE models; this one is {self.model_type} (use sample=True)"
                    )
                if sample or alpha is not None:
                    raise _core.ConfigError("give dropout=p or sample=True with alpha, not both")
                alpha = dropout
            elif not sample:
                raise _core.ConfigError("alpha and seed choose how a cut is sampled: pass sample=True as well")
            alpha, seed = self._sampling_args(0.1 if alpha is None else alpha, seed)
            allowed_special, disallowed_special = self._special_args(text, allowed_special, disallowed_special)
            text = _without_surrogates(text)
            return self._core.encode_sampled(text, alpha, seed, allowed_special, disallowed_special)
        allowed_special, disallowed_special = self._special_args(text, allowed_special, disallowed_special)
        try:
            return self._core.encode(text, allowed_special, disallowed_special)
        except UnicodeEncodeError:
            return self._core.encode(_without_surrogates(text), allowed_special, disallowed_special)

    def _special_args(
        self, text: str, allowed: SpecialArg | None, disallowed: SpecialArg | None
    ) -> tuple[SpecialArg, SpecialArg]:
        """`_special_sets`, and the check of `text` against the strings it returns."""
        allowed, disallowed, others = self._special_sets(allowed, disallowed)
        _refuse_named(text, others)
        return allowed, disallowed

    def _special_sets(
        self, allowed: SpecialArg | None, disallowed: SpecialArg | None
    ) -> tuple[SpecialArg, SpecialArg, list[str]]:
        """Checks the special-token arguments as tiktoken does. `None` means none. Not given:
        tiktoken's defaults (none allowed, all disallowed) — except for WordPiece, whose users
        expect `[MASK]` in text to be `[MASK]` (all allowed). Also returns the strings named in
        `disallowed_special` that are not special tokens: they still may not appear in a text
        (`_refuse_named`), and the core does not know them."""
        if allowed is _DEFAULT or disallowed is _DEFAULT:
            bert = self._core.model_type == "wordpiece"
            if allowed is _DEFAULT:
                allowed = "all" if bert else frozenset()
            if disallowed is _DEFAULT:
                disallowed = frozenset() if bert else "all"
        allowed = frozenset() if allowed is None else allowed
        disallowed = frozenset() if disallowed is None else disallowed
        for name, value in (("allowed_special", allowed), ("disallowed_special", disallowed)):
            if isinstance(value, str):
                if value != "all":
                    raise _core.ConfigError(f'{name} must be "all" or a collection of strings, not {value!r}')
            elif not isinstance(value, Collection) or isinstance(value, (bytes, bytearray)):
                raise _core.ConfigError(f'{name} must be "all" or a collection of strings, not {value!r}')
            elif not all(isinstance(t, str) for t in value):
                raise _core.ConfigError(f"{name} must hold strings, got {value!r}")
            elif any(_has_surrogates(t) for t in value):
                raise _core.ConfigError(f"{name} holds a lone surrogate, which is not text: {value!r}")
        others = []
        if disallowed != "all" and disallowed:
            others = [t for t in disallowed if t and self._core.special_id(t) is None]
        return allowed, disallowed, others

    def encode_sampled(self, text: str, *, alpha: float = 0.1, seed: int | None = None) -> list[int]:
        """`text` cut by sampling (subword regularization); special-token text is ordinary text.
        Unigram: each pre-tokenized piece's cut is drawn with probability proportional to
        P(cut)^`alpha` — near 0 all cuts alike, large `alpha` almost always the best cut.
        BPE: BPE-dropout, each merge skipped with probability `alpha` (0 gives `encode`'s ids).
        The same `seed` gives the same ids; none draws a seed.

        >>> tok.encode_sampled("New York", alpha=0.1, seed=1)   # doctest: +SKIP
        [12, 931, 87]
        """
        alpha, seed = self._sampling_args(alpha, seed)
        return self._core.encode_sampled(_without_surrogates(text), alpha, seed)

    def _sampling_args(self, alpha: object, seed: object) -> tuple[float, int]:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
            raise _core.ConfigError(f"alpha must be a finite number >= 0, got {alpha!r}")
        if self.model_type == "bpe" and alpha > 1:
            raise _core.ConfigError(f"dropout is a probability between 0 and 1, got {alpha!r}")
        if seed is None:
            import random  # here, not at the top: only sampling needs it, and importing it is slow

            seed = random.getrandbits(64)
        elif isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise _core.ConfigError(f"seed must be an int between 0 and 2**64 - 1, got {seed!r}")
        return float(alpha), seed

    def nbest(self, text: str, n: int) -> list[tuple[list[int], float]]:
        """The `n` best cuts of `text` (Unigram) as (ids, score), best first; the score is the
        sum of the pieces' log-probabilities.

        >>> [ids for ids, _ in tok.nbest("hello", 2)]   # doctest: +SKIP
        [[151], [23, 87]]
        """
        n = _checks.count("n", n, minimum=1, maximum=1024)
        return self._core.nbest(_without_surrogates(text), n)

    def token_kind(self, token_id: int) -> str:
        """What token `token_id` is: ``"normal"``, ``"special"`` (matched in text), ``"control"``
        (inserted by templates only), ``"unknown"``, ``"byte"`` (byte fallback) or ``"unused"``."""
        kind = self._core.token_kind(token_id) if isinstance(token_id, int) and 0 <= token_id < 2**32 else None
        if kind is None:
            raise _bad_ids([token_id])
        return kind

    def score(self, token_id: int) -> float:
        """A piece's score: a Unigram piece's log-probability, a SentencePiece BPE piece's merge
        priority (higher merges first); `ConfigError` for models without scores."""
        self.token_kind(token_id)
        score = self._core.score(token_id)
        if score is None:
            raise _core.ConfigError(
                f"this {self.model_type} model has no piece scores (Unigram and SentencePiece BPE models do)"
            )
        return score

    def normalize(self, text: str) -> str:
        """`text` after the normalizer: what the pre-tokenizer sees (SentencePiece models: with
        `▁` for spaces, as `SentencePieceProcessor.normalize` gives it)."""
        return self._core.normalize(_without_surrogates(text))

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes `text`, treating special-token text as ordinary text."""
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_without_surrogates(text))

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
        disallowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
    ) -> list[list[int]]:
        """Encodes many texts on `num_threads` Rust threads (all cores by default), GIL released."""
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
            raise _core.ConfigError(f"texts must be a sequence of str, got {type(texts).__name__}")
        texts = list(texts)
        num_threads = _threads_arg(num_threads)
        # Once for the batch, not per text: the workers wait while this runs (per text, it was
        # 5% of a 2 MB batch's time on two threads).
        allowed_special, disallowed_special, others = self._special_sets(allowed_special, disallowed_special)
        if others:
            for text in texts:
                _refuse_named(text, others)
        try:
            return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)
        except UnicodeEncodeError:
            texts = [_without_surrogates(t) for t in texts]
            return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ordinary` over many texts on Rust threads."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
        disallowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
    ) -> np.ndarray[Any, np.dtype[np.uint32]]:
        """`encode` into a numpy `uint32` array, with no Python list in between (needs numpy)."""
        import numpy as np

        allowed_special, disallowed_special = self._special_args(text, allowed_special, disallowed_special)
        try:
            raw = self._core.encode_to_bytes(text, allowed_special, disallowed_special)
        except UnicodeEncodeError:
            raw = self._core.encode_to_bytes(_without_surrogates(text), allowed_special, disallowed_special)
        return np.frombuffer(raw, dtype="<u4")

    def tokenize(self, text: str) -> list[str]:
        """The tokens of `text` as strings (bytes that are not UTF-8 show as `\\xNN`).

        >>> tok.tokenize("lowest")   # doctest: +SKIP
        ['low', 'est</w>']
        """
        return [self.id_to_token(i) for i in self.encode(text, disallowed_special=())]

    def pre_tokenize(self, text: str) -> list[str]:
        """The pieces the pre-tokenizer cuts `text` into; merges never cross them."""
        return self._core.pre_tokenize(text)

    # -- decoding ----------------------------------------------------------------------------
    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes `ids` stand for. Raises `TokenIdError` for an id outside the vocabulary."""
        try:
            return self._core.decode_bytes(list(ids))
        except (OverflowError, TypeError):
            raise _bad_ids(ids) from None

    def decode(self, ids: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False) -> str:
        """Decodes ids to text; `errors` is as for `bytes.decode` (a token boundary can split a
        UTF-8 character). With `skip_special_tokens`, special tokens are left out."""
        if _checks.flag("skip_special_tokens", skip_special_tokens):
            ids = [i for i in ids if not (isinstance(i, int) and 0 <= i <= _MAX_ID and self._core.is_special(i))]
        return self.decode_bytes(ids).decode("utf-8", errors=_checks.decode_errors(errors))

    def decode_stream(self, *, skip_special_tokens: bool = False, errors: str = "replace") -> DecodeStream:
        """A decoder for ids that arrive one at a time (see `tokenmill.streaming.DecodeStream`).

        >>> stream = tok.decode_stream()                      # doctest: +SKIP
        >>> [stream.step(i) for i in tok.encode("héllo")]   # doctest: +SKIP
        ['h', '', 'éllo']
        """
        from tokenmill.streaming import DecodeStream

        return DecodeStream(self, skip_special_tokens=skip_special_tokens, errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        try:
            return self._core.token_bytes(token)
        except (OverflowError, TypeError):
            raise _bad_ids([token]) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The decoded text (as `decode` gives it) and, for each token, the index of the character
        where it starts. A token that starts inside a character (a UTF-8 continuation byte) is
        given the index of that character."""
        try:
            parts = self._core.decode_parts(list(tokens))
        except (OverflowError, TypeError):
            raise _bad_ids(tokens) from None
        offsets, chars = [], 0
        for part in parts:
            starts_inside = bool(part) and 0x80 <= part[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(1 for b in part if not 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    # -- vocabulary --------------------------------------------------------------------------
    def token_to_id(self, token: str | bytes) -> int | None:
        """The id of a token (ordinary or special), or None."""
        if isinstance(token, str):
            key = token.encode("utf-8", "surrogatepass")
        elif isinstance(token, (bytes, bytearray, memoryview)):
            key = bytes(token)
        else:
            raise _core.ConfigError(f"a token is a str or bytes, not {type(token).__name__}")
        return self._core.token_id(key)

    def id_to_token(self, id: int) -> str:
        """The token of an id as a string (see `tokenize`)."""
        return _token_text(self.decode_single_token_bytes(id))

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges in rank order, as pairs of token bytes."""
        return self._core.merges()

    @property
    def vocab_size(self) -> int:
        """Number of tokens, special tokens included."""
        return self._core.vocab_size

    @property
    def n_vocab(self) -> int:
        """One past the largest token id (as in tiktoken)."""
        return self._core.n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token → id."""
        return dict(self._core.special_tokens())

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        eot = self.special_tokens.get("<|endoftext|>")
        if eot is None:
            raise _core.ConfigError("this tokenizer has no <|endoftext|> special token")
        return eot

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted."""
        return self._core.token_byte_values()

    @property
    def pattern(self) -> str:
        """The pre-tokenizer: a preset name or a regex."""
        return self._core.pattern

    @property
    def normalizer(self) -> str:
        return self._core.normalizer

    @property
    def byte_level(self) -> bool:
        return self._core.byte_level

    @property
    def end_of_word_suffix(self) -> str | None:
        return self._core.end_of_word_suffix

    @property
    def unk_token(self) -> str | None:
        return self._core.unk_token

    # -- model inputs: templates, truncation, padding, offsets -------------------------------
    def encode_for_model(
        self, text: str, pair: str | None = None, *, add_special_tokens: bool = True
    ) -> _core.Encoding:
        """Encodes one text (or a pair) into model inputs with this tokenizer's settings: its
        template's special tokens and type ids, truncation (with overflowing windows) and
        padding. Offsets are character offsets into the original text.

        >>> enc = tok.encode_for_model("Hello world")        # doctest: +SKIP
        >>> enc.ids, enc.offsets, enc.attention_mask          # doctest: +SKIP
        """
        text, pair = _text_arg(text), None if pair is None else _text_arg(pair)
        return self._core.encode_for_model(text, pair, add_special_tokens)

    def encode_batch_for_model(
        self,
        texts: Sequence[str],
        pairs: Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        num_threads: int | None = None,
    ) -> list[_core.Encoding]:
        """`encode_for_model` over a batch on Rust threads; padding to the longest covers the batch."""
        texts = [_text_arg(t) for t in texts]
        pair_list = None if pairs is None else [_text_arg(p) for p in pairs]
        return self._core.encode_batch_for_model(texts, pair_list, add_special_tokens, _threads_arg(num_threads))

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        stride: int = 0,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        truncation_side: str | None = None,
        return_tensors: str | None = None,
        return_token_type_ids: bool | None = None,
        return_attention_mask: bool | None = None,
        return_overflowing_tokens: bool = False,
        return_special_tokens_mask: bool = False,
        return_offsets_mapping: bool = False,
        return_length: bool = False,
        num_threads: int | None = None,
    ) -> dict[str, Any]:
        """Model inputs for a text, a pair, or a batch, with transformers' argument names and
        output keys (`input_ids`, `attention_mask`, `token_type_ids`, `offset_mapping`,
        `overflow_to_sample_mapping`, ...). The call's `padding`/`truncation` arguments replace
        the tokenizer's own settings for the call. ``return_tensors="np"`` builds numpy arrays
        in Rust, with no Python object per token.

        >>> tok(["a text", "another"], padding=True, truncation=True, max_length=512,
        ...     return_tensors="np")["input_ids"].shape        # doctest: +SKIP
        (2, 3)
        """
        from tokenmill import model_inputs

        settings = model_inputs.call_settings(
            self,
            padding=padding,
            truncation=truncation,
            max_length=max_length,
            stride=stride,
            pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side,
            truncation_side=truncation_side,
        )
        return model_inputs.call(
            self,
            text,
            text_pair,
            add_special_tokens=add_special_tokens,
            settings=settings,
            return_tensors=return_tensors,
            return_token_type_ids=return_token_type_ids,
            return_attention_mask=return_attention_mask,
            return_overflowing_tokens=return_overflowing_tokens,
            return_special_tokens_mask=return_special_tokens_mask,
            return_offsets_mapping=return_offsets_mapping,
            return_length=return_length,
            num_threads=_threads_arg(num_threads),
        )

    def _core_for(self, settings: dict[str, Any]) -> _core.CoreTokenizer:
        """A core with these model-input settings: this tokenizer's own when they are its own,
        else one made once per distinct settings and kept (a call's settings repeat). The key is
        built from the flat truncation and padding dicts, the only parts a call changes."""
        import json

        from tokenmill import model_inputs

        own = model_inputs.current(self)
        if settings["post_processor"] is not own["post_processor"]:
            return self._core.with_model_inputs_json(json.dumps(settings))
        if len(self._call_cores) > 16:
            self._call_cores.clear()
        if not self._call_cores:
            # The tokenizer's own settings are the first entry: a call asking for them is served
            # by this core itself.
            self._call_cores[model_inputs.settings_key(own)] = self._core
        key = model_inputs.settings_key(settings)
        core = self._call_cores.get(key)
        if core is None:
            core = self._call_cores[key] = self._core.with_model_inputs_json(json.dumps(settings))
        return core

    def set_template(
        self,
        single: str | Sequence[str],
        pair: str | Sequence[str] | None = None,
        special_tokens: Any = None,
    ) -> None:
        """Sets a post-processing template, in Hugging Face's `TemplateProcessing` syntax:
        ``"[CLS] $A [SEP]"`` and ``"[CLS] $A [SEP] $B:1 [SEP]:1"`` (`:N` is the type id).
        Special tokens are looked up in the vocabulary unless `special_tokens` gives their ids.

        >>> tok.set_template("<|begin_of_text|> $A")      # doctest: +SKIP
        """
        from tokenmill import model_inputs

        self._set(post_processor=model_inputs.template(self, single, pair, special_tokens))

    @property
    def post_processor(self) -> dict[str, Any] | None:
        """The post-processor in tokenmill's JSON shape (None: no template)."""
        from tokenmill import model_inputs

        return copy.deepcopy(model_inputs.current(self)["post_processor"])

    @post_processor.setter
    def post_processor(self, value: dict[str, Any] | None) -> None:
        self._set(post_processor=value)

    def enable_truncation(
        self, max_length: int, *, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> None:
        """Truncates every model input to `max_length` tokens (template tokens included); what is
        cut off comes back as overflowing windows overlapping by `stride` tokens."""
        from tokenmill import model_inputs

        self._set(truncation=model_inputs.truncation_settings(max_length, stride, strategy, direction))

    def no_truncation(self) -> None:
        self._set(truncation=None)

    @property
    def truncation(self) -> dict[str, Any] | None:
        from tokenmill import model_inputs

        return copy.deepcopy(model_inputs.current(self)["truncation"])

    def enable_padding(
        self,
        *,
        direction: str = "right",
        pad_id: int | None = None,
        pad_type_id: int = 0,
        pad_token: str | None = None,
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        """Pads model inputs to `length`, or to the longest of a batch; `pad_id` or `pad_token`
        names the padding token."""
        from tokenmill import model_inputs

        settings = model_inputs.padding_settings(
            self, length, pad_to_multiple_of, pad_id, pad_token, pad_type_id, direction
        )
        self._set(padding=settings)

    def no_padding(self) -> None:
        self._set(padding=None)

    @property
    def padding(self) -> dict[str, Any] | None:
        from tokenmill import model_inputs

        return copy.deepcopy(model_inputs.current(self)["padding"])

    def _set(self, **changes: Any) -> None:
        from tokenmill import model_inputs

        self._core = model_inputs.replaced(self, **changes)
        self._settings = None
        self._call_cores.clear()

    # -- chat templates ----------------------------------------------------------------------
    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
        tokenize: bool = True,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        return_dict: bool = False,
        return_assistant_mask: bool = False,
        **template_kwargs: Any,
    ) -> Any:
        """Renders a chat with the model's own Jinja template (from `tokenizer_config.json`, or
        `chat_template` as a string, or a built-in: ``"chatml"``, ``"llama3"``, ``"mistral"``),
        as transformers does; returns the text (``tokenize=False``), the ids, or a dict with
        `input_ids`, `attention_mask` and, with `return_assistant_mask`, `assistant_masks`: 1 for
        each token the assistant wrote (`{% generation %}` blocks where the template has them,
        else the assistant messages' text). Needs jinja2.

        >>> tok.apply_chat_template([{"role": "user", "content": "Hi"}], chat_template="chatml",
        ...                         add_generation_prompt=True, tokenize=False)     # doctest: +SKIP
        '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
        """
        from tokenmill import chat

        return chat.apply(
            self,
            messages,
            chat_template=chat_template,
            add_generation_prompt=_checks.flag("add_generation_prompt", add_generation_prompt),
            continue_final_message=_checks.flag("continue_final_message", continue_final_message),
            tokenize=_checks.flag("tokenize", tokenize),
            tools=tools,
            documents=documents,
            return_dict=_checks.flag("return_dict", return_dict),
            return_assistant_mask=_checks.flag("return_assistant_mask", return_assistant_mask),
            template_kwargs=template_kwargs,
        )

    @property
    def chat_template(self) -> str | None:
        """The tokenizer's own chat template (read from `tokenizer_config.json`), or None."""
        return self._chat.get("chat_template")

    @chat_template.setter
    def chat_template(self, template: str | None) -> None:
        _checks.text("chat_template", template, optional=True)
        if template is None:
            self._chat.pop("chat_template", None)
        else:
            self._chat["chat_template"] = template

    @property
    def chat_tokens(self) -> dict[str, str]:
        """The special-token names a chat template sees (`bos_token`, `eos_token`, ...)."""
        return {k: v for k, v in self._chat.items() if k.endswith("_token")}

    def set_chat_tokens(self, **tokens: str) -> None:
        """Names the special tokens templates use: ``set_chat_tokens(bos_token="<s>")``."""
        for name, value in tokens.items():
            if not name.endswith("_token"):
                raise _core.ConfigError(f"{name}: chat token names end in _token (bos_token, eos_token, ...)")
            self._chat[name] = _checks.text(name, value)

    # -- Python protocols --------------------------------------------------------------------
    def __reduce__(self) -> tuple[object, tuple[str, dict[str, Any], bytes | None]]:
        return (_from_json, (self._core.to_json(), self._chat, self._core.sentencepiece_source()))

    def __repr__(self) -> str:
        if self.model_type == "wordpiece":
            kind = "WordPiece"
        elif self.model_type == "unigram":
            kind = "Unigram"
        else:
            kind = ("byte-level" if self.byte_level else "char-level") + " BPE"
        return f"<tokenmill.Tokenizer {kind}, {self.vocab_size} tokens, pattern={self.pattern!r}>"


_MAX_ID = _checks.MAX_ID


def _text_arg(text: object) -> str:
    if not isinstance(text, str):
        raise _core.ConfigError(f"expected a str, got {type(text).__name__}")
    return _without_surrogates(text) if _has_surrogates(text) else text


def _threads_arg(num_threads: int | None) -> int | None:
    return _checks.count("num_threads", num_threads, minimum=1, maximum=4096, optional=True)


def _has_surrogates(text: str) -> bool:
    return not _checks._is_utf8(text)


def _bad_ids(ids: Sequence[int]) -> _core.TokenIdError:
    """The error for ids that are not ints in 0..2³²−2 (Rust cannot even hold them)."""
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= _MAX_ID:
            return _core.TokenIdError(f"token id {i!r} is not an id (an int from 0 to {_MAX_ID})")
    return _core.TokenIdError("token ids must be ints")


def _special_pairs(special_tokens: Mapping[str, int]) -> list[tuple[str, int]]:
    """`special_tokens` as (text, id) pairs, checked: non-empty strings without lone
    surrogates, ids that fit."""
    pairs = []
    for text, i in special_tokens.items():
        if not isinstance(text, str) or not text:
            raise _core.ConfigError(f"special tokens must be non-empty strings, got {text!r}")
        if _has_surrogates(text):
            raise _core.ConfigError(f"special token {text!r} holds a lone surrogate, which is not text")
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= _MAX_ID:
            raise _core.ConfigError(f"special token {text!r}: id {i!r} is not an int from 0 to {_MAX_ID}")
        pairs.append((text, i))
    return pairs


def _from_json(text: str, chat: dict[str, Any] | None = None, sentencepiece: object = None) -> Tokenizer:
    """A pickled tokenizer. `sentencepiece` is the `.model` file it was read from, pickled with
    the very description `text`; pickles of earlier versions held (bytes, digest of the
    description) there, which is dropped: `save_sentencepiece` then rebuilds the file."""
    core = _core.CoreTokenizer.from_json(text)
    if isinstance(sentencepiece, bytes):
        core = core.with_sentencepiece_source(sentencepiece)
    return Tokenizer(core, chat)
