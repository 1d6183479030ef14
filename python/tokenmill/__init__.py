"""tokenmill: train subword vocabularies fast; encode text exactly and fast.

>>> import tokenmill
>>> tok = tokenmill.train_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10,
...                           byte_level=False, end_of_word_suffix="</w>")
>>> tok.tokenize("lowest")
['low', 'est</w>']
"""

from typing import TYPE_CHECKING

from tokenmill._core import (
    ConfigError,
    CorpusError,
    DisallowedSpecialError,
    Encoding,
    FormatError,
    OutOfVocabularyError,
    PatternError,
    TokenIdError,
    TokenmillError,
    __version__,
    split,
)
from tokenmill.counting import WordCounts, count_words
from tokenmill.formats.files import open_any as load
from tokenmill.tokenizer import Tokenizer
from tokenmill.training import train_bpe

if TYPE_CHECKING:
    from tokenmill.training_unigram import train_unigram
    from tokenmill.training_wordpiece import train_wordpiece

__all__ = [
    "ConfigError",
    "CorpusError",
    "DisallowedSpecialError",
    "Encoding",
    "FormatError",
    "OutOfVocabularyError",
    "PatternError",
    "TokenIdError",
    "Tokenizer",
    "TokenmillError",
    "WordCounts",
    "__version__",
    "count_words",
    "load",
    "split",
    "train_bpe",
    "train_unigram",
    "train_wordpiece",
]


def __getattr__(name: str) -> object:
    """The WordPiece and Unigram trainers, imported on first use: they bring their file formats
    (JSON, the Hugging Face and BERT writers), which `import tokenmill` for BPE training or
    encoding does not need (a third of its import time)."""
    if name == "train_unigram":
        from tokenmill.training_unigram import train_unigram

        return train_unigram
    if name == "train_wordpiece":
        from tokenmill.training_wordpiece import train_wordpiece

        return train_wordpiece
    raise AttributeError(f"module 'tokenmill' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
