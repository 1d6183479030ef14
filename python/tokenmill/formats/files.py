"""Tokenizer files: tokenmill's own (`load`, `save`) and every other library's (`from_tiktoken`,
`from_huggingface`, `from_sentencepiece`, `from_wordpiece_vocab`, `from_gpt2` and their
writers), as methods `Tokenizer` inherits; `open_any` picks the reader from the file itself.
Each format's reader and writer lives in its own module beside this one, imported on first use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tokenmill import _checks, _core
from tokenmill._files import input_file, remove_stale_temp_files

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


class FileMethods:
    """The file readers and writers of `Tokenizer`."""

    __slots__ = ()
    _core: _core.CoreTokenizer

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

        >>> from tokenmill import Tokenizer
        >>> enc = Tokenizer.from_tiktoken("cl100k_base.tiktoken", pattern="cl100k_base")
        >>> enc.encode("hello world"), enc.special_tokens["<|endoftext|>"]
        ([15339, 1917], 100257)
        """
        from tokenmill.formats import tiktoken as tt

        if not isinstance(pattern, str):
            raise _core.ConfigError(f"pattern must be a preset name or a regex string, not {pattern!r}")
        if isinstance(pattern, str) and _checks.has_surrogates(pattern):
            raise _core.PatternError(f"pattern {pattern!r} holds a lone surrogate, which is not text")
        if special_tokens is not None and not isinstance(special_tokens, Mapping):
            raise _core.ConfigError(f"special_tokens must map str to int, not {special_tokens!r}")
        if special_tokens is None:
            special_tokens = tt.OPENAI_SPECIAL_TOKENS.get(pattern, {})
        specials = _checks.special_pairs(special_tokens)
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

        >>> from tokenmill import Tokenizer
        >>> tok = Tokenizer.from_huggingface("tokenizer.json")   # bert-base-uncased
        >>> tok.encode("Hello [MASK]"), tok.encode_for_model("Hello world").ids
        ([7592, 103], [101, 7592, 2088, 102])
        >>> Tokenizer.from_sentencepiece("spm.model").to_huggingface("unigram.json")
        >>> unigram = Tokenizer.from_huggingface("unigram.json")   # a Unigram model, as T5's
        >>> unigram.encode("Hello</s>", allowed_special="all")
        [40, 58, 11, 2]
        """
        from tokenmill.chat import read_tokenizer_config
        from tokenmill.formats import huggingface as hf
        from tokenmill.formats import huggingface_char_bpe, huggingface_sentencepiece, wordpiece
        from tokenmill.formats.huggingface_shape import check_components

        p = Path(path)
        document, sections = hf.open_tokenizer_json(p)
        check_components(sections, str(p))
        try:
            model_type = sections["model"].get("type")
            if model_type == "WordPiece":
                tok = cls(wordpiece.read_tokenizer_json(document, sections, str(p)))
            elif model_type == "WordLevel":
                tok = cls(hf.read_wordlevel(document, sections, str(p)))
            elif model_type == "Unigram":
                tok = cls(huggingface_sentencepiece.read_tokenizer_json(document, sections, str(p)))
            elif model_type == "BPE" and huggingface_char_bpe.is_char_level(sections, document.vocab_shape[0]):
                tok = cls(huggingface_char_bpe.read_tokenizer_json(document, sections, str(p)))
            else:
                tok = cls(hf.read_tokenizer_json(document, sections, str(p)))
            dropout = sections["model"].get("dropout") if model_type in ("BPE", None) else None
            if dropout:
                # tokenizers' BPE-dropout: a new cut of each word on every encode.
                if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
                    raise _core.FormatError(f"{p}: BPE dropout {dropout!r} is not a number")
                tok = cls(tok._core.with_draw(float(dropout)))
        except (AttributeError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as e:
            # A value of a shape `check_components` does not know: still the file's fault.
            raise _core.FormatError(f"{p}: a component is not shaped as tokenizers writes it ({e!r})") from None
        except _core.TokenmillError as e:
            # Every refusal names the file, wherever in the readers it was made.
            if str(p) in str(e):
                raise
            raise type(e)(f"{p}: {e}") from None
        except ValueError as e:
            raise _core.FormatError(f"{p}: a component holds a value tokenizers would not write ({e})") from None
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

        >>> from tokenmill import Tokenizer
        >>> Tokenizer.from_sentencepiece("spm.model").to_huggingface("unigram.json")
        >>> Tokenizer.from_huggingface("unigram.json").tokenize("Hello world")
        ['▁H', 'ell', 'o', '▁world']
        """
        from tokenmill.formats import huggingface as hf
        from tokenmill.formats import huggingface_sentencepiece, wordpiece

        if self.model_type == "wordlevel":
            hf.write_wordlevel(path, self._core)
        elif self.model_type == "wordpiece":
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

        >>> from tokenmill import Tokenizer
        >>> tok = Tokenizer.from_wordpiece_vocab("vocab.txt")   # bert-base-uncased's
        >>> tok.tokenize("unaffable"), tok.encode_for_model("[MASK] world").ids
        (['una', '##ffa', '##ble'], [101, 103, 2088, 102])
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

    @classmethod
    def from_sentencepiece(cls, path: str | os.PathLike[str] | bytes) -> Tokenizer:
        """Loads a SentencePiece `.model` file (or its bytes): the Unigram or BPE model with its
        piece kinds (control, unknown, byte, user-defined, unused), byte fallback and the
        normalizer it embeds (precompiled character map, dummy prefix, whitespace rules).
        `encode(text)` returns what `SentencePieceProcessor.encode(text)` does: no `<s>`/`</s>`
        unless asked.

        >>> from tokenmill import Tokenizer
        >>> sp = Tokenizer.from_sentencepiece("spm.model")
        >>> sp.tokenize("Hello world")
        ['▁H', 'ell', 'o', '▁world']
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

        >>> from tokenmill import Tokenizer
        >>> Tokenizer.from_sentencepiece("spm.model").save_sentencepiece("copy.model")
        >>> Path("copy.model").read_bytes() == Path("spm.model").read_bytes()
        True
        """
        from tokenmill.formats import sentencepiece_tokenizer

        sentencepiece_tokenizer.write(path, self._core)

    @classmethod
    def from_gpt2(cls, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> Tokenizer:
        """Loads GPT-2's `vocab.json` + `merges.txt` pair."""
        vocab = input_file(vocab_path, "a GPT-2 vocab.json")
        return cls(_core.gpt2_files(vocab, input_file(merges_path, "a GPT-2 merges.txt")))


# tiktoken encoding names whose `.tiktoken` file name also names the pre-tokenizer pattern.
TIKTOKEN_NAMES = ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base")
# What a model directory (as `save_pretrained` or a SentencePiece project leaves it) may hold,
# in the order they are tried.
_SENTENCEPIECE_NAMES = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "sp.model")


def open_any(path: str | os.PathLike[str]) -> Tokenizer:
    """A tokenizer from any file tokenmill reads, the format told by the file: tokenmill's own
    JSON or a Hugging Face ``tokenizer.json``, a SentencePiece ``.model`` (by its name or its
    first byte), a ``.tiktoken`` file
    named after its encoding (``cl100k_base.tiktoken``), BERT's ``vocab.txt``; or a model
    directory holding one of these (``tokenizer.json`` first, then a ``.model``, GPT-2's
    ``vocab.json`` + ``merges.txt``, ``vocab.txt``).

    >>> import tokenmill
    >>> tokenmill.load("bert-base-uncased/")
    <tokenmill.Tokenizer WordPiece, 30522 tokens, pattern='bert'>
    >>> tokenmill.load("spm.model")
    <tokenmill.Tokenizer Unigram, 120 tokens, pattern='metaspace'>
    >>> tokenmill.load("cl100k_base.tiktoken")
    <tokenmill.Tokenizer byte-level BPE, 100261 tokens, pattern='cl100k'>
    """
    from tokenmill.tokenizer import Tokenizer

    p = Path(os.fspath(path))
    if p.is_dir():
        return _open_directory(p)
    name = p.name
    if name.endswith(".model"):
        return Tokenizer.from_sentencepiece(p)
    if name.endswith((".tiktoken", ".tiktoken.gz")):
        stem = name.split(".tiktoken")[0]
        if stem not in TIKTOKEN_NAMES:
            raise _core.ConfigError(
                f"{p}: a .tiktoken file does not say its pattern; name it after its encoding "
                f"({', '.join(TIKTOKEN_NAMES)}) or load it with Tokenizer.from_tiktoken(path, pattern=...)"
            )
        return Tokenizer.from_tiktoken(p, pattern=stem)
    if name.endswith(".txt"):
        return Tokenizer.from_wordpiece_vocab(p)
    input_file(p, "a tokenizer file")
    with open(p, "rb") as f:
        head = f.read(256)
    # Not JSON: a SentencePiece model under another name (Mistral's `tokenizer.model.v3`); its
    # protobuf starts with a piece (field 1, length-delimited: byte 0x0A) or the trainer spec.
    if head[:1] in (b"\x0a", b"\x12"):
        return Tokenizer.from_sentencepiece(p)
    # tokenmill's writer puts its format name first; anything else JSON is Hugging Face's.
    if b'"format":"tokenmill"' in head:
        return Tokenizer.load(p)
    try:
        return Tokenizer.from_huggingface(p)
    except _core.FormatError as hf_error:
        try:
            return Tokenizer.load(p)  # tokenmill's own, reformatted by hand
        except _core.FormatError:
            raise hf_error from None


def _open_directory(d: Path) -> Tokenizer:
    from tokenmill.tokenizer import Tokenizer

    if (d / "tokenizer.json").is_file():
        return Tokenizer.from_huggingface(d / "tokenizer.json")
    for name in _SENTENCEPIECE_NAMES:
        if (d / name).is_file():
            return Tokenizer.from_sentencepiece(d / name)
    if (d / "vocab.json").is_file() and (d / "merges.txt").is_file():
        return Tokenizer.from_gpt2(d / "vocab.json", d / "merges.txt")
    if (d / "vocab.txt").is_file():
        return Tokenizer.from_wordpiece_vocab(d / "vocab.txt")
    raise _core.FormatError(
        f"{d}: no tokenizer here (looked for tokenizer.json, {', '.join(_SENTENCEPIECE_NAMES)}, "
        "vocab.json + merges.txt, vocab.txt)"
    )
