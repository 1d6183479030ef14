"""Type stubs for the Rust extension. Users import from `tokenmill`; these are the raw parts."""

import os
from collections.abc import Callable, Collection
from typing import Any, Literal, final

__all__ = [
    "TokenmillError",
    "ConfigError",
    "CorpusError",
    "FormatError",
    "PatternError",
    "OutOfVocabularyError",
    "TokenIdError",
    "DisallowedSpecialError",
    "CoreTokenizer",
    "WordCounter",
    "train_bpe",
    "split",
    "__version__",
]

__version__: str
# The version of tokenmill's file format this build writes (and the newest it reads).
FORMAT_VERSION: int

class TokenmillError(ValueError): ...
class ConfigError(TokenmillError): ...
class CorpusError(TokenmillError): ...
class FormatError(TokenmillError): ...
class PatternError(TokenmillError): ...
class OutOfVocabularyError(TokenmillError): ...
class TokenIdError(TokenmillError): ...
class DisallowedSpecialError(TokenmillError): ...

_Specials = Literal["all"] | Collection[str]

@final
class Encoding:
    """One input's model inputs: ids and everything aligned with them."""

    ids: list[int]
    type_ids: list[int]
    attention_mask: list[int]
    special_tokens_mask: list[int]
    offsets: list[tuple[int, int]]
    word_ids: list[int | None]
    sequence_ids: list[int | None]
    n_sequences: int
    sequence_ranges: list[tuple[int, int, int]]
    tokens: list[str]
    overflowing: list[Encoding]
    def __len__(self) -> int: ...

@final
class DecodeStream:
    """The core's streaming decoder: a short window of ids decoded whole, its new bytes emitted."""

    def __init__(self, tokenizer: CoreTokenizer, skip_special_tokens: bool) -> None: ...
    def step(self, ids: list[int]) -> bytes: ...
    def finish(self) -> bytes: ...

@final
class Truncation:
    """Truncation settings, checked when made; frozen and hashable.

    >>> Truncation(128, stride=16).as_dict()["max_length"]
    128
    """

    def __init__(
        self,
        max_length: int,
        *,
        stride: int | None = None,
        strategy: str = "longest_first",
        direction: str = "right",
        whole_below_template: bool = False,
    ) -> None: ...
    @property
    def max_length(self) -> int: ...
    @property
    def stride(self) -> int: ...
    def as_dict(self) -> dict[str, Any]: ...

class Padding:
    """Padding settings, checked when made; frozen and hashable.

    >>> Padding(0, "[PAD]", length=8).as_dict()["length"]
    8
    """

    def __init__(
        self,
        pad_id: int,
        pad_token: str,
        *,
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
        pad_type_id: int | None = None,
        direction: str = "right",
    ) -> None: ...
    @property
    def pad_id(self) -> int: ...
    @property
    def pad_token(self) -> str: ...
    @property
    def pad_type_id(self) -> int: ...
    @property
    def direction(self) -> str: ...
    def as_dict(self) -> dict[str, Any]: ...

class TokenizerJson:
    """A Hugging Face `tokenizer.json` read by Rust in one pass: the model's vocabulary, merges
    and the added tokens as values, the other sections as JSON."""

    def __init__(self, path: str | os.PathLike[str]) -> None: ...
    @property
    def sections(self) -> str: ...
    @property
    def added_tokens(self) -> list[tuple[str, int]]: ...
    @property
    def vocab(self) -> list[tuple[str, int]]: ...
    def byte_level_bpe(
        self, *, pattern: str, keep_gaps: bool, normalizer: str, whole_piece_first: bool, drop_unknown: bool
    ) -> CoreTokenizer: ...
    @property
    def vocab_shape(self) -> tuple[int, bool]: ...
    def unigram(
        self,
        *,
        unk_id: int | None,
        byte_fallback: bool,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        precompiled_charsmap: PrecompiledCharsmap | None,
        pretokenizer: str,
        steps: str = "none",
        huggingface: bool = False,
        metaspace_prefix: str = "never",
        byte_level: bool = False,
    ) -> CoreTokenizer: ...
    def char_bpe(
        self,
        *,
        unk_token: str | None,
        byte_fallback: bool,
        fuse_unk: bool,
        whole_piece_first: bool,
        metaspace_prefix: str,
        pretokenizer: str,
    ) -> CoreTokenizer: ...
    def wordpiece(
        self,
        *,
        unk_token: str,
        prefix: str,
        max_input_chars_per_word: int,
        cleanup: bool,
        normalizer: str,
        pretokenizer: str,
    ) -> CoreTokenizer: ...
    def wordlevel(self, *, unk_token: str, normalizer: str, pretokenizer: str) -> CoreTokenizer: ...

class CoreTokenizer:
    """The Rust pipeline behind `tokenmill.Tokenizer`."""

    n_vocab: int
    vocab_size: int
    pattern: str
    normalizer: str
    byte_level: bool
    end_of_word_suffix: str | None
    unk_token: str | None
    is_rank_based: bool
    whole_piece_first: bool
    keeps_gaps: bool
    model_type: str
    def model_config_json(self) -> str: ...
    def token_kind(self, id: int) -> str | None: ...
    def token_table(self) -> tuple[list[bytes | None], list[str | None]]:
        """Every id's bytes and kind (None for ids no token has)."""
        ...
    def score(self, id: int) -> float | None: ...
    def nbest(self, text: str, n: int) -> list[tuple[list[int], float]]: ...
    # tokenmill.sentencepiece: pieces as (id, normalized text, start, end), character offsets.
    def best_pieces(self, text: str) -> list[tuple[int, str, int, int]]: ...
    def nbest_pieces(self, text: str, n: int) -> list[tuple[list[tuple[int, str, int, int]], float]]: ...
    def sampled_pieces(self, text: str, alpha: float, seed: int) -> tuple[list[tuple[int, str, int, int]], float]: ...
    def entropy(self, text: str, alpha: float) -> float: ...
    def normalize_aligned(self, text: str) -> tuple[str, list[int]]: ...
    def encode_sampled(
        self,
        text: str,
        alpha: float,
        seed: int,
        allowed_special: str | Collection[str] | None = None,
        disallowed_special: str | Collection[str] | None = None,
    ) -> list[int]: ...
    def normalize(self, text: str) -> str: ...
    @property
    def truncation(self) -> Truncation | None: ...
    @property
    def padding(self) -> Padding | None: ...
    def post_processor_json(self) -> str | None: ...
    @property
    def pair_type_ids(self) -> bool: ...
    def with_settings(self, truncation: Truncation | None, padding: Padding | None) -> CoreTokenizer: ...
    def with_post_processor_json(self, json: str | None) -> CoreTokenizer: ...
    def with_specials_as_text(self, names: list[str]) -> CoreTokenizer: ...
    def with_draw(self, p: float | None, nbest: int = 0) -> CoreTokenizer: ...
    def hf_model_inputs_json(self, token_of: Callable[[int], str]) -> str: ...
    def encode_for_model(self, text: str, pair: str | None = None, add_special_tokens: bool = True) -> Encoding: ...
    def encode_batch_for_model(
        self,
        texts: list[str],
        pairs_: list[str] | None = None,
        add_special_tokens: bool = True,
        num_threads: int | None = None,
    ) -> list[Encoding]: ...
    def encode_batch_arrays(
        self,
        texts: list[str],
        pairs_: list[str] | None = None,
        add_special_tokens: bool = True,
        num_threads: int | None = None,
        wide: bool = True,
        offsets: bool = False,
        overflow: bool = False,
        special_tokens_mask: bool = False,
    ) -> dict[str, tuple[bytes, int, int]]: ...
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode(self, text: str, allowed_special: _Specials, disallowed_special: _Specials) -> list[int]: ...
    def encode_batch(
        self,
        texts: list[str],
        allowed_special: _Specials,
        disallowed_special: _Specials,
        num_threads: int | None = None,
    ) -> list[list[int]]: ...
    def encode_flat(
        self,
        texts: list[str],
        allowed_special: _Specials,
        disallowed_special: _Specials,
        separator: int | None = None,
        id_width: int = 4,
        num_threads: int | None = None,
    ) -> tuple[bytes, bytes]: ...
    def encode_column(
        self,
        data: bytes,
        offsets: bytes,
        offset_width: int,
        allowed_special: _Specials,
        disallowed_special: _Specials,
        separator: int | None = None,
        id_width: int = 4,
        num_threads: int | None = None,
    ) -> tuple[bytes, bytes]: ...
    def encode_to_array(
        self, text: str, allowed_special: _Specials | None = None, disallowed_special: _Specials | None = None
    ) -> Any: ...
    def encode_files_flat(
        self,
        paths: list[str],
        separator: str | None,
        text_field: str | None,
        allowed_special: _Specials,
        end_of_document: int | None,
        id_width: int,
        num_threads: int | None,
        on_batch: Callable[[bytes, bytes, int], object],
    ) -> None: ...
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def token_bytes(self, id: int) -> bytes: ...
    def token_id(self, token: bytes) -> int | None: ...
    def is_special(self, id: int) -> bool: ...
    def skipped_on_decode(self, id: int) -> bool: ...
    def token_string(self, id: int) -> str: ...
    def special_strips(self) -> list[tuple[str, bool, bool]]: ...
    def single_word_specials(self) -> list[str]: ...
    def normalized_specials(self) -> list[str]: ...
    def special_id(self, text: str) -> int | None: ...
    def encode_piece_bytes(self, piece: bytes) -> list[int]: ...
    def decode_parts(self, ids: list[int], trim_end: bool = True, follows: bool = False) -> list[bytes]: ...
    def ordinary_ids(self) -> list[int]: ...
    def merges(self) -> list[tuple[bytes, bytes]]: ...
    def merge_ids(self) -> list[tuple[int, int]]: ...
    def token_byte_values(self) -> list[bytes]: ...
    def truncated(self, vocab_size: int) -> CoreTokenizer: ...
    @staticmethod
    def from_tiktoken_file(
        path: str | os.PathLike[str], pattern: str, special_tokens: list[tuple[str, int]]
    ) -> CoreTokenizer: ...
    @staticmethod
    def from_ranks(
        ranks: list[tuple[int, bytes]], pattern: str, special_tokens: list[tuple[str, int]]
    ) -> CoreTokenizer: ...
    def special_tokens(self) -> list[tuple[str, int]]: ...
    def pre_tokenize(self, text: str) -> list[str]: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> CoreTokenizer: ...
    def to_json(self) -> str: ...
    @staticmethod
    def from_json(text: str) -> CoreTokenizer: ...
    @staticmethod
    def from_sentencepiece(data: bytes, path: str) -> CoreTokenizer:
        """The tokenizer of a SentencePiece `.model` file's bytes; `path` names it in errors."""
    def sentencepiece_source(self) -> bytes | None:
        """The `.model` file this tokenizer was read from (kept by copies with other model inputs)."""
    def with_sentencepiece_source(self, data: bytes) -> CoreTokenizer:
        """This tokenizer, remembering `data` as the `.model` file it was read from (unpickling)."""
    def vocab_listing(self) -> str: ...
    def save_vocab_listing(self, path: str) -> None: ...

@final
class WordCounter:
    """Accumulates word counts from texts, files and ready-made word tables."""

    num_words: int
    total: int
    text_bytes: int
    memory_bytes: int
    pattern: str
    normalizer: str
    special_tokens: list[str]
    byte_level: bool
    def __new__(cls, pattern: str, normalizer: str, special_tokens: list[str], byte_level: bool) -> WordCounter: ...
    def add_texts(self, texts: list[str]) -> None: ...
    def add_column(self, data: bytes, offsets: bytes, offset_width: int) -> None: ...
    def add_files(
        self, paths: list[str], text_field: str | None = None, on_block: Callable[[int], object] | None = None
    ) -> int: ...
    def add_words(self, words: list[tuple[str, int]]) -> None: ...
    def get(self, word: bytes) -> int: ...
    def merge(self, other: WordCounter) -> None: ...
    def copy(self) -> WordCounter: ...
    def most_common(self, n: int) -> list[tuple[bytes, int]]: ...
    def prune_to(self, budget: int) -> tuple[int, int]: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> WordCounter: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> WordCounter: ...

def train_bpe(
    counter: WordCounter,
    *,
    vocab_size: int | None,
    num_merges: int | None,
    byte_level: bool,
    end_of_word_suffix: str | None,
    unk_token: str | None,
    special_tokens: list[str],
    min_frequency: int,
    max_token_length: int | None,
    progress: Callable[[int, int], object] | None,
    base: CoreTokenizer | None = None,
    limit_alphabet: int | None = None,
    initial_alphabet: list[str] = ...,
    ties_by_id: bool = ...,
) -> CoreTokenizer: ...
def train_wordpiece(
    counter: WordCounter,
    *,
    vocab_size: int,
    prefix: str,
    special_tokens: list[str],
    min_frequency: int,
    limit_alphabet: int | None,
    unk_token: str,
    max_input_chars_per_word: int,
    normalizer: str,
    progress: Callable[[int, int], object] | None = None,
) -> CoreTokenizer: ...
def gpt2_files(vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> CoreTokenizer: ...
def wordpiece_from_vocab_txt(
    path: str | os.PathLike[str],
    *,
    special_tokens: list[str],
    unk_token: str,
    prefix: str,
    max_input_chars_per_word: int,
    normalizer: str,
) -> CoreTokenizer: ...
def train_unigram(
    counter: WordCounter,
    *,
    pieces: int,
    character_coverage: float,
    max_piece_length: int,
    seed_size: int,
    shrinking_factor: float,
    em_iterations: int,
    whitespace_as_suffix: bool,
    split_digits: bool,
    unk_token: str,
    control_tokens: list[str],
    special_tokens: list[str],
    byte_fallback: bool,
    normalizer: str,
    pattern: str,
    progress: Callable[[int, int], object] | None = None,
) -> CoreTokenizer: ...
def train_unigram_huggingface(
    words: list[tuple[str, int]],
    *,
    vocab_size: int,
    special_tokens: list[str],
    unk_token: str | None,
    shrinking_factor: float,
    max_piece_length: int,
    n_sub_iterations: int,
    initial_alphabet: list[str],
    seed_size: int,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[tuple[str, float]], int | None]: ...
def train_parity_bpe(
    train: list[list[tuple[str, int]]],
    dev: list[list[tuple[str, int]]] | None,
    *,
    num_merges: int,
    variant: str,
    min_frequency: int,
    ratio: list[float] | None,
    global_merges: int,
    window_size: int,
    alpha: float,
    total_symbols: bool,
    special_tokens: list[str],
    limit_alphabet: int | None,
    initial_alphabet: list[str],
    continuing_subword_prefix: str | None,
    end_of_word_suffix: str | None,
    max_token_length: int | None,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[str], list[tuple[str, str]]]: ...

PRESET_NAMES: list[str]
PRESET_PATTERNS: dict[str, str]

def preset_for_pattern(pattern: str) -> str | None: ...
def split(pattern: str, text: str) -> list[str]: ...
def normalize_with(spec: str, text: str) -> str: ...
def normalize_batch_with(spec: str, texts: list[str]) -> list[str]: ...
def pre_tokenize_with(spec: str, text: str) -> list[tuple[str, tuple[int, int]]]: ...
def split_batch_with(spec: str, texts: list[str]) -> list[tuple[list[str], bool]]: ...
def count_pieces_with(
    normalizer: str | None, spec: str, prefix_space: bool, texts: list[str]
) -> list[tuple[str, int]]: ...
def decode_tokens_with(json: str, tokens: list[str]) -> str: ...
def count_pieces(pattern: str, texts: list[str]) -> int: ...
def count_words(texts: list[str]) -> int: ...
def count_files_for(
    tokenizers: list[CoreTokenizer], paths: list[str], id_counts: bool, words: bool, num_threads: int | None
) -> dict[str, Any]:
    """Bytes read, invalid bytes, text bytes, characters, words, tokens per tokenizer and (when
    `id_counts`) each id's count per tokenizer as little-endian u64 bytes, over the files."""

@final
class PrecompiledCharsmap:
    """A SentencePiece precompiled character map, checked once (a `FormatError` if damaged)."""

    def __init__(self, blob: bytes) -> None: ...
    def starts_key(self, prefix: str) -> bool:
        """Whether some key of the map starts with `prefix`."""
