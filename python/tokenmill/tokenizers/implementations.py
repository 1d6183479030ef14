"""`tokenmill.tokenizers.implementations`: the ready-made pipelines `tokenizers` ships (BERT's
WordPiece, GPT-2's byte-level BPE, OpenAI GPT's character-level BPE, SentencePiece-style BPE),
assembled from tokenmill's components, with their `train` / `train_from_iterator` on tokenmill's trainers.

>>> tok = ByteLevelBPETokenizer()
>>> tok.train_from_iterator(["low lower lowest"] * 5, vocab_size=270, min_frequency=1)
>>> tok.decode(tok.encode("lowest").ids)
'lowest'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tokenmill import _core
from tokenmill.tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
from tokenmill.tokenizers.added_token import AddedToken
from tokenmill.tokenizers.encoding import Encoding
from tokenmill.tokenizers.tokenizer import Tokenizer
from tokenmill.tokenizers.training import lines_of, texts_of
from tokenmill.tokenizers.training import train as _train


class BaseTokenizer:
    """A `Tokenizer` with the parameters it was made with; every call goes to the tokenizer."""

    def __init__(self, tokenizer: Tokenizer, parameters: dict[str, Any] | None = None) -> None:
        self._tokenizer = tokenizer
        self._parameters = parameters if parameters is not None else {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self._parameters.items())
        return f"Tokenizer(vocabulary_size={self._tokenizer.get_vocab_size()}, {args})"

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._tokenizer.num_special_tokens_to_add(is_pair)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return self._tokenizer.get_vocab(with_added_tokens=with_added_tokens)

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return self._tokenizer.get_added_tokens_decoder()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=with_added_tokens)

    def enable_padding(self, **kwargs: Any) -> None:
        self._tokenizer.enable_padding(**kwargs)

    def no_padding(self) -> None:
        self._tokenizer.no_padding()

    @property
    def padding(self) -> dict[str, Any] | None:
        return self._tokenizer.padding

    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first") -> None:
        self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def no_truncation(self) -> None:
        self._tokenizer.no_truncation()

    @property
    def truncation(self) -> dict[str, Any] | None:
        return self._tokenizer.truncation

    def add_tokens(self, tokens: list[str | AddedToken]) -> int:
        return self._tokenizer.add_tokens(tokens)

    def add_special_tokens(self, special_tokens: list[str | AddedToken]) -> int:
        return self._tokenizer.add_special_tokens(special_tokens)

    def normalize(self, sequence: str) -> str:
        normalizer = self._tokenizer.normalizer
        return sequence if normalizer is None else normalizer.normalize_str(sequence)

    def encode(
        self,
        sequence: str,
        pair: str | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        if sequence is None:
            raise ValueError("encode: `sequence` can't be `None`")
        return self._tokenizer.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(
        self, inputs: list[Any], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        if inputs is None:
            raise ValueError("encode_batch: `inputs` can't be `None`")
        return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        if ids is None:
            raise ValueError("None input is not valid. Should be a list of integers.")
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: list[list[int]], skip_special_tokens: bool = True) -> list[str]:
        if sequences is None:
            raise ValueError("None input is not valid. Should be list of list of integers.")
        return self._tokenizer.decode_batch(sequences, skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._tokenizer.id_to_token(id)

    def save_model(self, directory: str, prefix: str | None = None) -> list[str]:
        """The model's files (`vocab.json` and `merges.txt`, or `vocab.txt`) in `directory`."""
        return self._tokenizer.model.save(directory, prefix=prefix)

    def save(self, path: str, pretty: bool = True) -> None:
        self._tokenizer.save(path, pretty)

    def to_str(self, pretty: bool = False) -> str:
        return self._tokenizer.to_str(pretty)

    def train(self, files: str | list[str], **kwargs: Any) -> None:
        """Trains on the lines of `files` with this pipeline's trainer and `kwargs` its settings."""
        _train(self._tokenizer, _files(files), self._trainer(**kwargs))

    def train_from_iterator(self, iterator: Iterable[Any], length: int | None = None, **kwargs: Any) -> None:
        """Trains on texts (or batches of texts) from `iterator`; `length` is ignored."""
        _train(self._tokenizer, texts_of(iterator), self._trainer(**kwargs))

    @staticmethod
    def _trainer(**kwargs: Any) -> trainers.Trainer:
        raise _core.ConfigError("a BaseTokenizer made from a Tokenizer has no trainer: use Tokenizer.train")

    # The components, read and set as on the tokenizer.
    model = property(lambda self: self._tokenizer.model, lambda self, v: setattr(self._tokenizer, "model", v))
    normalizer = property(
        lambda self: self._tokenizer.normalizer, lambda self, v: setattr(self._tokenizer, "normalizer", v)
    )
    pre_tokenizer = property(
        lambda self: self._tokenizer.pre_tokenizer, lambda self, v: setattr(self._tokenizer, "pre_tokenizer", v)
    )
    post_processor = property(
        lambda self: self._tokenizer.post_processor, lambda self, v: setattr(self._tokenizer, "post_processor", v)
    )
    decoder = property(lambda self: self._tokenizer.decoder, lambda self, v: setattr(self._tokenizer, "decoder", v))


def _files(files: str | list[str]) -> Iterator[str]:
    return lines_of([files] if isinstance(files, str) else files)


def _content(token: str | AddedToken) -> str:
    return token.content if isinstance(token, AddedToken) else str(token)


class BertWordPieceTokenizer(BaseTokenizer):
    """BERT's pipeline: its normalizer and pre-tokenizer, WordPiece, `[CLS] A [SEP]` and the
    WordPiece decoder. `vocab` is a `vocab.txt` path or a dict of token → id."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        unk_token: str | AddedToken = "[UNK]",
        sep_token: str | AddedToken = "[SEP]",
        cls_token: str | AddedToken = "[CLS]",
        pad_token: str | AddedToken = "[PAD]",
        mask_token: str | AddedToken = "[MASK]",
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
        wordpieces_prefix: str = "##",
    ) -> None:
        if isinstance(vocab, str):
            vocab = models.WordPiece.read_file(vocab)
        model = models.WordPiece(vocab, unk_token=_content(unk_token), continuing_subword_prefix=wordpieces_prefix)
        tokenizer = Tokenizer(model)
        tokenizer.normalizer = normalizers.BertNormalizer(
            clean_text=clean_text,
            handle_chinese_chars=handle_chinese_chars,
            strip_accents=strip_accents,
            lowercase=lowercase,
        )
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece(prefix=wordpieces_prefix)
        specials = [sep_token, cls_token, pad_token, mask_token, unk_token]
        if vocab:
            for token in specials:
                if _content(token) in vocab:
                    tokenizer.add_special_tokens([token])
            sep, cls = _content(sep_token), _content(cls_token)
            if sep not in vocab or cls not in vocab:
                raise TypeError(f"{sep} or {cls} is missing from the vocabulary")
            tokenizer.post_processor = processors.BertProcessing((sep, vocab[sep]), (cls, vocab[cls]))
        parameters = {
            "model": "BertWordPiece",
            "unk_token": unk_token,
            "sep_token": sep_token,
            "cls_token": cls_token,
            "pad_token": pad_token,
            "mask_token": mask_token,
            "clean_text": clean_text,
            "handle_chinese_chars": handle_chinese_chars,
            "strip_accents": strip_accents,
            "lowercase": lowercase,
            "wordpieces_prefix": wordpieces_prefix,
        }
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab: str, **kwargs: Any) -> BertWordPieceTokenizer:
        return BertWordPieceTokenizer(models.WordPiece.read_file(vocab), **kwargs)

    @staticmethod
    def _trainer(
        vocab_size: int = 30000,
        min_frequency: int = 2,
        limit_alphabet: int = 1000,
        initial_alphabet: list[str] | None = None,
        special_tokens: list[str | AddedToken] | None = None,
        show_progress: bool = True,
        wordpieces_prefix: str = "##",
    ) -> trainers.WordPieceTrainer:
        return trainers.WordPieceTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            limit_alphabet=limit_alphabet,
            initial_alphabet=initial_alphabet or [],
            special_tokens=special_tokens
            if special_tokens is not None
            else ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
            show_progress=show_progress,
            continuing_subword_prefix=wordpieces_prefix,
        )


def _bpe_files(vocab: Any, merges: Any) -> tuple[Any, Any]:
    if isinstance(vocab, str) and isinstance(merges, str):
        return models.BPE.read_file(vocab, merges)
    if isinstance(vocab, str) or isinstance(merges, str):
        raise _core.ConfigError("give vocab and merges both as paths or both as data")
    return vocab, merges


def _unicode_normalizer(name: str | None) -> list[normalizers.Normalizer]:
    if name is None:
        return []
    forms = {"nfc": normalizers.NFC, "nfd": normalizers.NFD, "nfkc": normalizers.NFKC, "nfkd": normalizers.NFKD}
    if name not in forms:
        raise _core.ConfigError(f"unicode_normalizer must be one of {', '.join(forms)}, not {name!r}")
    return [forms[name]()]


class ByteLevelBPETokenizer(BaseTokenizer):
    """GPT-2's pipeline: byte-level pre-tokenizer and decoder, BPE, offsets trimmed of spaces."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        merges: str | list[tuple[str, str]] | None = None,
        add_prefix_space: bool = False,
        lowercase: bool = False,
        dropout: float | None = None,
        unicode_normalizer: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        trim_offsets: bool = False,
    ) -> None:
        vocab, merges = _bpe_files(vocab, merges)
        model = models.BPE(
            vocab,
            merges,
            dropout=dropout,
            continuing_subword_prefix=continuing_subword_prefix or None,
            end_of_word_suffix=end_of_word_suffix or None,
        )
        tokenizer = Tokenizer(model)
        steps = _unicode_normalizer(unicode_normalizer) + ([normalizers.Lowercase()] if lowercase else [])
        if steps:
            tokenizer.normalizer = steps[0] if len(steps) == 1 else normalizers.Sequence(steps)
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
        parameters = {
            "model": "ByteLevelBPE",
            "add_prefix_space": add_prefix_space,
            "lowercase": lowercase,
            "dropout": dropout,
            "unicode_normalizer": unicode_normalizer,
            "continuing_subword_prefix": continuing_subword_prefix,
            "end_of_word_suffix": end_of_word_suffix,
            "trim_offsets": trim_offsets,
        }
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> ByteLevelBPETokenizer:
        vocab, merges = models.BPE.read_file(vocab_filename, merges_filename)
        return ByteLevelBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(
        vocab_size: int = 30000,
        min_frequency: int = 2,
        show_progress: bool = True,
        special_tokens: list[str | AddedToken] | None = None,
    ) -> trainers.BpeTrainer:
        return trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            show_progress=show_progress,
            special_tokens=special_tokens or [],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )


class CharBPETokenizer(BaseTokenizer):
    """Sennrich et al.'s character-level BPE as OpenAI GPT ran it: BERT's normalizer (optional),
    BERT's pre-tokenizer (or whitespace only), each word's last character with `suffix` joined
    (``t</w>``), the suffix decoded as a space.

    >>> tok = CharBPETokenizer()
    >>> tok.train_from_iterator(["low lower lowest"] * 3, vocab_size=40, min_frequency=1, show_progress=False)
    >>> tok.encode("lowest").tokens
    ['lowest</w>']
    """

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        merges: str | list[tuple[str, str]] | None = None,
        unk_token: str | AddedToken = "<unk>",
        suffix: str = "</w>",
        dropout: float | None = None,
        lowercase: bool = False,
        unicode_normalizer: str | None = None,
        bert_normalizer: bool = True,
        split_on_whitespace_only: bool = False,
    ) -> None:
        vocab, merges = _bpe_files(vocab, merges)
        unk = _content(unk_token)
        tokenizer = Tokenizer(models.BPE(vocab, merges, dropout=dropout, unk_token=unk, end_of_word_suffix=suffix))
        if vocab and unk in vocab:
            tokenizer.add_special_tokens([unk])
        steps = _unicode_normalizer(unicode_normalizer)
        steps += [normalizers.BertNormalizer(lowercase=False)] if bert_normalizer else []
        steps += [normalizers.Lowercase()] if lowercase else []
        if steps:
            tokenizer.normalizer = steps[0] if len(steps) == 1 else normalizers.Sequence(steps)
        split = pre_tokenizers.WhitespaceSplit() if split_on_whitespace_only else pre_tokenizers.BertPreTokenizer()
        tokenizer.pre_tokenizer = split
        tokenizer.decoder = decoders.BPEDecoder(suffix=suffix)
        parameters = {
            "model": "BPE",
            "unk_token": unk_token,
            "suffix": suffix,
            "dropout": dropout,
            "lowercase": lowercase,
            "unicode_normalizer": unicode_normalizer,
            "bert_normalizer": bert_normalizer,
            "split_on_whitespace_only": split_on_whitespace_only,
        }
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> CharBPETokenizer:
        vocab, merges = models.BPE.read_file(vocab_filename, merges_filename)
        return CharBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(suffix: str | None = "</w>", **settings: Any) -> trainers.BpeTrainer:
        return _bpe_trainer(end_of_word_suffix=suffix, **settings)


class SentencePieceBPETokenizer(BaseTokenizer):
    """SentencePiece-style BPE: NFKC, spaces as `▁` (one in front of the text), BPE."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        merges: str | list[tuple[str, str]] | None = None,
        unk_token: str | AddedToken = "<unk>",
        replacement: str = "▁",
        add_prefix_space: bool = True,
        dropout: float | None = None,
        fuse_unk: bool | None = False,
    ) -> None:
        vocab, merges = _bpe_files(vocab, merges)
        unk = _content(unk_token)
        tokenizer = Tokenizer(models.BPE(vocab, merges, dropout=dropout, unk_token=unk, fuse_unk=fuse_unk))
        if vocab and unk in vocab:
            tokenizer.add_special_tokens([unk_token])
        scheme = "always" if add_prefix_space else "never"
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)
        parameters = {
            "model": "SentencePieceBPE",
            "unk_token": unk_token,
            "replacement": replacement,
            "add_prefix_space": add_prefix_space,
            "dropout": dropout,
        }
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> SentencePieceBPETokenizer:
        vocab, merges = models.BPE.read_file(vocab_filename, merges_filename)
        return SentencePieceBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(**settings: Any) -> trainers.BpeTrainer:
        return _bpe_trainer(**settings)


def _bpe_trainer(
    vocab_size: int = 30000,
    min_frequency: int = 2,
    special_tokens: list[str | AddedToken] | None = None,
    limit_alphabet: int = 1000,
    initial_alphabet: list[str] | None = None,
    end_of_word_suffix: str | None = None,
    show_progress: bool = True,
) -> trainers.BpeTrainer:
    """The character-level pipelines' trainer, with tokenizers' defaults for them."""
    return trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=special_tokens if special_tokens is not None else ["<unk>"],
        limit_alphabet=limit_alphabet,
        initial_alphabet=initial_alphabet or [],
        end_of_word_suffix=end_of_word_suffix,
        show_progress=show_progress,
    )


class SentencePieceUnigramTokenizer(BaseTokenizer):
    """SentencePiece's Unigram pipeline: `Nmt`, NFKC and runs of spaces made one, spaces as `▁`,
    Unigram. (tokenmill's Unigram reader takes SentencePiece's own normalizer shapes: encoding with
    this chain is refused there with a `FormatError` naming it; `from_spm` reads a `.model`.)"""

    def __init__(
        self, vocab: list[tuple[str, float]] | None = None, replacement: str = "▁", add_prefix_space: bool = True
    ) -> None:
        from tokenmill.tokenizers._component import Regex

        tokenizer = Tokenizer(models.Unigram(vocab, 0 if vocab else None))
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
        )
        scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)
        parameters = {"model": "SentencePieceUnigram", "replacement": replacement, "add_prefix_space": add_prefix_space}
        super().__init__(tokenizer, parameters)

    @staticmethod
    def _trainer(
        vocab_size: int = 8000,
        show_progress: bool = True,
        special_tokens: list[str | AddedToken] | None = None,
        initial_alphabet: list[str] | None = None,
        unk_token: str | None = None,
    ) -> trainers.UnigramTrainer:
        return trainers.UnigramTrainer(
            vocab_size=vocab_size,
            show_progress=show_progress,
            special_tokens=special_tokens or [],
            initial_alphabet=initial_alphabet or [],
            unk_token=unk_token,
        )

    @staticmethod
    def from_spm(filename: str) -> BaseTokenizer:
        """A SentencePiece `.model` as a tokenizer (tokenmill reads it exactly)."""
        import tempfile
        from pathlib import Path

        import tokenmill

        tok = tokenmill.Tokenizer.from_sentencepiece(filename)
        with tempfile.TemporaryDirectory(prefix="tokenmill-") as directory:
            path = Path(directory) / "tokenizer.json"
            tok.to_huggingface(path)
            made = Tokenizer.from_str(path.read_text(encoding="utf-8"))
        return BaseTokenizer(made, {"model": "SentencePieceUnigram"})


__all__ = [
    "BaseTokenizer",
    "BertWordPieceTokenizer",
    "ByteLevelBPETokenizer",
    "CharBPETokenizer",
    "SentencePieceBPETokenizer",
    "SentencePieceUnigramTokenizer",
]
