"""sentencepiece's interface on tokenmill's encoder: ``import tokenmill.sentencepiece as spm``.

>>> import tokenmill.sentencepiece as spm
>>> sp = spm.SentencePieceProcessor(model_file="spm.model")
>>> sp.encode("hello world")
[3, 37, 91, 11, 41]
>>> sp.decode([3, 37, 91, 11, 41])
'hello world'

Classes, methods (under both spellings), arguments, results and exceptions are sentencepiece's
(release 0.2.3, and 0.2.1's methods it dropped): `SentencePieceProcessor` loads `.model` files
and encodes with tokenmill's exact encoder, `SentencePieceTrainer` trains with tokenmill's
trainers and writes `.model` files, `SentencePieceNormalizer` normalizes on its own.
"""

from tokenmill.sentencepiece import settings
from tokenmill.sentencepiece.flatbuffer import ConvertToFlatbuffer, convert_to_flatbuffer
from tokenmill.sentencepiece.normalizer import SentencePieceNormalizer
from tokenmill.sentencepiece.processor import SentencePieceProcessor
from tokenmill.sentencepiece.proto import (
    ImmutableNBestSentencePieceText,
    ImmutableSentencePiece,
    ImmutableSentencePieceText,
)
from tokenmill.sentencepiece.settings import (
    ThreadPool,
    set_data_dir,
    set_min_log_level,
    set_nbest_timeout,
    set_random_generator_seed,
)
from tokenmill.sentencepiece.trainer import SentencePieceTrainer

# The sentencepiece release whose behaviour this module follows (`follow_release` changes it).
__version__ = settings.release()


def follow_release(version: str) -> None:
    """Follows sentencepiece `version` ("0.2.3", the default, or "0.2.1") where the two
    differ: 0.2.1's `SentencePieceNormalizer` turns the whitespace flags it is not given off.

    >>> follow_release("0.2.3")
    """
    global __version__
    settings.follow_release(version)
    __version__ = version


SetRandomGeneratorSeed = set_random_generator_seed
SetMinLogLevel = set_min_log_level
SetNBestTimeout = set_nbest_timeout
SetDataDir = set_data_dir

__all__ = [
    "ConvertToFlatbuffer",
    "ImmutableNBestSentencePieceText",
    "ImmutableSentencePiece",
    "ImmutableSentencePieceText",
    "SentencePieceNormalizer",
    "SentencePieceProcessor",
    "SentencePieceTrainer",
    "SetDataDir",
    "SetMinLogLevel",
    "SetNBestTimeout",
    "SetRandomGeneratorSeed",
    "ThreadPool",
    "convert_to_flatbuffer",
    "follow_release",
    "set_data_dir",
    "set_min_log_level",
    "set_nbest_timeout",
    "set_random_generator_seed",
]
