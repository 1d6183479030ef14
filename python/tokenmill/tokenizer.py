"""The `Tokenizer` users hold: a thin typed layer over the Rust pipeline in `_core`."""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from tokenmill import _checks, _core
from tokenmill.chat import ChatMethods
from tokenmill.formats.files import FileMethods
from tokenmill.model_inputs import CallSettings, ModelInputMethods

if TYPE_CHECKING:
    import numpy as np

    from tokenmill.streaming import DecodeStream

SpecialArg = Literal["all"] | Collection[str]
# The default of the special-token arguments (resolved per model in `_special_args`).
_DEFAULT: Any = frozenset(["<tokenmill: default>"])


_NONE: frozenset[str] = frozenset()


def _refuse_named(text: str, named: list[str]) -> None:
    """Raises if `text` holds one of `named` (strings `disallowed_special` names that are not
    special tokens): the first in the text, the longer of two at the same place."""
    found = [(text.find(t), -len(t), t) for t in named if t in text]
    if found:
        raise _core.DisallowedSpecialError(
            f"text contains {min(found)[2]!r}, which disallowed_special names; "
            "pass disallowed_special=() to encode it as ordinary text"
        )


class Tokenizer(FileMethods, ModelInputMethods, ChatMethods):
    """A trained or loaded tokenizer: normalize → pre-tokenize → subword model → ids, and back.
    This file holds encoding, decoding and the vocabulary; files (`formats/files.py`), model
    inputs (`model_inputs.py`) and chat templates (`chat.py`) come from the classes it extends.

    >>> tok                       # OpenAI's cl100k_base, read by `from_tiktoken`
    <tokenmill.Tokenizer byte-level BPE, 100261 tokens, pattern='cl100k'>
    >>> tok.encode("hello world")
    [15339, 1917]
    >>> tok.decode([15339, 1917])
    'hello world'
    >>> tok.save("tok.json")
    >>> Tokenizer.load("tok.json").encode("hello world")
    [15339, 1917]
    """

    __slots__ = ("_core", "_settings", "_call_cores", "_chat")

    def __init__(self, core: _core.CoreTokenizer, chat: dict[str, Any] | None = None) -> None:
        self._core = core
        # The core's truncation and padding, read once (see `model_inputs.own_settings`).
        self._settings: CallSettings | None = None
        # Cores with the settings of recent `tokenizer(...)` calls (they share the vocabulary).
        self._call_cores: dict[CallSettings, _core.CoreTokenizer] = {}
        # The chat template and the special-token names it uses (bos_token, eos_token, ...).
        self._chat: dict[str, Any] = dict(chat or {})

    @property
    def model_type(self) -> str:
        """`"bpe"`, `"wordpiece"`, `"unigram"` or `"wordlevel"` (read from Hugging Face files)."""
        return self._core.model_type

    def model_config(self) -> dict[str, Any]:
        """The model's options (not its vocabulary), e.g. ``{"type": "wordpiece", "unk_token": ...}``."""
        import json

        return json.loads(self._core.model_config_json())

    def _ordinary_ids(self, specials: set[int] | None = None) -> list[int]:
        return self._core.ordinary_ids()

    def truncated(self, vocab_size: int) -> Tokenizer:
        """The tokenizer that training with this smaller `vocab_size` would have given: merges
        form a prefix, so it keeps the special tokens, the base alphabet and the first merges.

        >>> small = tok.truncated(1000)
        >>> small.vocab_size, small.tokenize("hello world")
        (1000, ['h', 'el', 'lo', 'Ġw', 'or', 'ld'])
        >>> small.special_tokens == tok.special_tokens
        True
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

        >>> tok.encode("hi<|endoftext|>", allowed_special="all")
        [6151, 100257]
        >>> tok.encode("hi<|endoftext|>")
        Traceback (most recent call last):
        ...
        tokenmill.DisallowedSpecialError: text contains the special token "<|endoftext|>", which is disallowed; ...
        >>> tok.encode("hi<|endoftext|>", disallowed_special=())
        [6151, 27, 91, 8862, 728, 428, 91, 29]
        >>> tok.encode("lowest"), tok.encode("lowest", dropout=0.3, seed=7)
        ([90998], [10516, 478])
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
            return self._core.encode_sampled(text, alpha, seed, allowed_special, disallowed_special)
        allowed_special, disallowed_special = self._special_args(text, allowed_special, disallowed_special)
        return self._core.encode(text, allowed_special, disallowed_special)

    def _special_args(
        self, text: str, allowed: SpecialArg | None, disallowed: SpecialArg | None
    ) -> tuple[SpecialArg, SpecialArg]:
        """`_special_sets`, and the check of `text` against the strings it returns."""
        if allowed is _DEFAULT and disallowed is _DEFAULT:
            # The common call, without `_special_sets`' checks: they were 2.3 µs of a 2.8 µs
            # call on a short text (which sentencepiece encodes in 1.7 µs).
            return ("all", _NONE) if self._core.model_type == "wordpiece" else (_NONE, "all")
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
            elif any(_checks.has_surrogates(t) for t in value):
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

        >>> tok.encode("tokenization"), tok.encode_sampled("tokenization", alpha=0.3, seed=1)
        ([5963, 2065], [5963, 450, 367])
        """
        alpha, seed = self._sampling_args(alpha, seed)
        return self._core.encode_sampled(text, alpha, seed)

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

        >>> unigram = Tokenizer.from_sentencepiece("spm.model")
        >>> [([unigram.id_to_token(i) for i in ids], round(score, 2)) for ids, score in unigram.nbest("hello", 2)]
        [(['▁', 'he', 'll', 'o'], -18.02), (['▁', 'h', 'ell', 'o'], -19.67)]
        """
        n = _checks.count("n", n, minimum=1, maximum=1024)
        return self._core.nbest(text, n)

    def token_kind(self, token_id: int) -> str:
        """What token `token_id` is: ``"normal"``, ``"special"`` (matched in text), ``"control"``
        (inserted by templates only), ``"unknown"``, ``"byte"`` (byte fallback) or ``"unused"``."""
        kind = self._core.token_kind(token_id) if isinstance(token_id, int) and 0 <= token_id < 2**32 else None
        if kind is None:
            raise _checks.bad_ids([token_id])
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
        return self._core.normalize(text)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes `text`, treating special-token text as ordinary text."""
        return self._core.encode_ordinary(text)

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
        num_threads = _checks.threads(num_threads)
        # Once for the batch, not per text: the workers wait while this runs (per text, it was
        # 5% of a 2 MB batch's time on two threads).
        allowed_special, disallowed_special, others = self._special_sets(allowed_special, disallowed_special)
        if others:
            for text in texts:
                _refuse_named(text, others)
        return self._core.encode_batch(texts, allowed_special, disallowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ordinary` over many texts on Rust threads."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def encode_files(
        self,
        files: str | os.PathLike[str] | Collection[str | os.PathLike[str]],
        *,
        separator: str | None = None,
        text_field: str | None = None,
        allowed_special: str | Collection[str] = (),
        num_threads: int | None = None,
    ) -> tuple[np.ndarray[Any, np.dtype[np.uint32]], np.ndarray[Any, np.dtype[np.uint64]]]:
        """Every document of `files` encoded in Rust on all cores: (flat ids, offsets), document
        j is ``ids[offsets[j]:offsets[j + 1]]`` (see `tokenmill.encode_files.encode_files`).

        >>> ids, offsets = tok.encode_files(["en.txt", "de.txt"], separator="\\n")
        >>> offsets
        array([ 0,  6, 13, 19, 26, 32, 41], dtype=uint64)
        >>> tok.decode(ids[offsets[1]:offsets[2]].tolist())
        'We are going to the park.'
        """
        from tokenmill.encode_files import encode_files

        return encode_files(
            self,
            files,
            separator=separator,
            text_field=text_field,
            allowed_special=allowed_special,
            num_threads=num_threads,
        )

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
        disallowed_special: SpecialArg = _DEFAULT,  # type: ignore[assignment]
    ) -> np.ndarray[Any, np.dtype[np.uint32]]:
        """`encode` into a numpy `uint32` array that owns the encoder's buffer: no Python list, no
        copy (needs numpy)."""
        allowed_special, disallowed_special = self._special_args(text, allowed_special, disallowed_special)
        return self._core.encode_to_array(text, allowed_special, disallowed_special)

    def encode_ordinary_to_numpy(self, text: str) -> np.ndarray[Any, np.dtype[np.uint32]]:
        """`encode_ordinary` into a numpy `uint32` array (needs numpy)."""
        return self._core.encode_to_array(text)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of `text` as the vocabulary spells them (`id_to_token`).

        >>> tok.tokenize("hello world")
        ['hello', 'Ġworld']
        >>> bert.tokenize("unaffable")
        ['una', '##ffa', '##ble']
        """
        spell = self._core.token_string
        return [spell(i) for i in self.encode(text, disallowed_special=())]

    def pre_tokenize(self, text: str) -> list[str]:
        """The pieces the pre-tokenizer cuts `text` into; merges never cross them."""
        return self._core.pre_tokenize(text)

    # -- decoding ----------------------------------------------------------------------------
    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes `ids` stand for. Raises `TokenIdError` for an id outside the vocabulary."""
        try:
            # A list goes in as it is: a copy of 10^8 ids would be 800 MB more than tiktoken takes.
            return self._core.decode_bytes(ids if isinstance(ids, list) else list(ids))
        except (OverflowError, TypeError):
            raise _checks.bad_ids(ids) from None

    def decode(self, ids: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False) -> str:
        """Decodes ids to text; `errors` is as for `bytes.decode` (a token boundary can split a
        UTF-8 character). With `skip_special_tokens`, special tokens are left out (but for the
        added tokens a `tokenizer.json` does not mark `special`, which Hugging Face keeps)."""
        if _checks.flag("skip_special_tokens", skip_special_tokens):
            skipped = self._core.skipped_on_decode
            ids = [i for i in ids if not (isinstance(i, int) and 0 <= i <= _checks.MAX_ID and skipped(i))]
        return self.decode_bytes(ids).decode("utf-8", errors=_checks.decode_errors(errors))

    def decode_stream(self, *, skip_special_tokens: bool = False, errors: str = "replace") -> DecodeStream:
        """A decoder for ids that arrive one at a time (see `tokenmill.streaming.DecodeStream`).

        >>> stream = tok.decode_stream()
        >>> [stream.step(i) for i in tok.encode("東京 hello")]   # 東 ends in the second token
        ['', '東', '京', ' hello']
        """
        from tokenmill.streaming import DecodeStream

        return DecodeStream(self, skip_special_tokens=skip_special_tokens, errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        try:
            return self._core.token_bytes(token)
        except (OverflowError, TypeError):
            raise _checks.bad_ids([token]) from None

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
            raise _checks.bad_ids(tokens) from None
        offsets, chars = [], 0
        for part in parts:
            starts_inside = bool(part) and 0x80 <= part[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(1 for b in part if not 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    # -- vocabulary --------------------------------------------------------------------------
    def token_to_id(self, token: str | bytes) -> int | None:
        """The id of a token (ordinary or special), or None: by its bytes, its text, or in a
        byte-level vocabulary its printable spelling as `id_to_token` gives it (`"Ġworld"`)."""
        if isinstance(token, str):
            key = token.encode("utf-8", "surrogatepass")
        elif isinstance(token, (bytes, bytearray, memoryview)):
            key = bytes(token)
        else:
            raise _core.ConfigError(f"a token is a str or bytes, not {type(token).__name__}")
        found = self._core.token_id(key)
        if found is None and isinstance(token, str) and self.byte_level:
            from tokenmill.formats.huggingface import CHAR_TO_BYTE

            if all(c in CHAR_TO_BYTE for c in token):
                found = self._core.token_id(bytes(CHAR_TO_BYTE[c] for c in token))
        return found

    def id_to_token(self, id: int) -> str:
        """The token of an id as the vocabulary spells it, as Hugging Face's `id_to_token` gives
        it: a byte-level token's printable spelling (`"Ġworld"`), a SentencePiece piece
        (`"▁world"`, `"<0x41>"`), a WordPiece token (`"##ing"`), a special token's text. Its
        bytes are `decode_single_token_bytes`.

        >>> tok.id_to_token(tok.token_to_id(" world"))
        'Ġworld'
        >>> tok.decode_single_token_bytes(tok.token_to_id(" world"))
        b' world'
        """
        try:
            return self._core.token_string(id)
        except (OverflowError, TypeError):
            raise _checks.bad_ids([id]) from None

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

    # -- Python protocols --------------------------------------------------------------------
    def __reduce__(self) -> tuple[object, tuple[str, dict[str, Any], bytes | None]]:
        return (_from_json, (self._core.to_json(), self._chat, self._core.sentencepiece_source()))

    def __repr__(self) -> str:
        names = {"wordpiece": "WordPiece", "unigram": "Unigram", "wordlevel": "WordLevel"}
        if self.model_type in names:
            kind = names[self.model_type]
        else:
            kind = ("byte-level" if self.byte_level else "char-level") + " BPE"
        return f"<tokenmill.Tokenizer {kind}, {self.vocab_size} tokens, pattern={self.pattern!r}>"


def _from_json(text: str, chat: dict[str, Any] | None = None, sentencepiece: object = None) -> Tokenizer:
    """A pickled tokenizer. `sentencepiece` is the `.model` file it was read from, pickled with
    the very description `text`; pickles of earlier versions held (bytes, digest of the
    description) there, which is dropped: `save_sentencepiece` then rebuilds the file."""
    core = _core.CoreTokenizer.from_json(text)
    if isinstance(sentencepiece, bytes):
        core = core.with_sentencepiece_source(sentencepiece)
    return Tokenizer(core, chat)
