"""tokenmill: train subword vocabularies fast; encode text exactly and fast.

>>> import tokenmill
>>> tok = tokenmill.train_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10,
...                           byte_level=False, end_of_word_suffix="</w>")
>>> tok.tokenize("lowest")
['low', 'est</w>']
"""

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
from tokenmill.tokenizer import Tokenizer
from tokenmill.training import train_bpe
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
    "split",
    "train_bpe",
    "train_unigram",
    "train_wordpiece",
]
