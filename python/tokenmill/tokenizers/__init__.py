"""Hugging Face `tokenizers`' API on tokenmill: `from tokenmill.tokenizers import Tokenizer` in
place of `from tokenizers import Tokenizer`, and the same files give the same `Encoding`s, faster.

What is here: `Tokenizer` (files, `encode`/`encode_batch` into `Encoding`s with the template,
truncation and padding applied, `decode`/`decode_batch`, the vocabulary, added tokens' flags,
truncation and padding settings, its components to read, set and change), `Encoding` with every
accessor, `AddedToken`, `Regex`, and the component namespaces `models`, `normalizers`,
`pre_tokenizers`, `processors`, `decoders` (with `DecodeStream`), `trainers` — each component its
`tokenizer.json` node, run by tokenmill's Rust code. Custom Python components
(`Normalizer.custom`, `PreTokenizer.custom`, `Decoder.custom`) work on `NormalizedString` and
`PreTokenizedString` as in tokenizers; a tokenizer holding one encodes through Python (the model
and the built-in steps still in Rust) and cannot be saved. tokenizers' own test suite runs against
this module in `tests/test_tokenizers_suite.py`, with what does not pass yet listed there.

>>> from tokenmill.tokenizers import AddedToken
>>> AddedToken("[MASK]", lstrip=True).lstrip
True
"""

from tokenmill.tokenizers import decoders, implementations, models, normalizers, pre_tokenizers, processors, trainers
from tokenmill.tokenizers._component import Regex
from tokenmill.tokenizers.added_token import AddedToken
from tokenmill.tokenizers.encoding import Encoding
from tokenmill.tokenizers.implementations import (
    BertWordPieceTokenizer,
    ByteLevelBPETokenizer,
    CharBPETokenizer,
    SentencePieceBPETokenizer,
    SentencePieceUnigramTokenizer,
)
from tokenmill.tokenizers.models import Token
from tokenmill.tokenizers.normalized_string import NormalizedString
from tokenmill.tokenizers.pre_tokenized_string import PreTokenizedString
from tokenmill.tokenizers.tokenizer import HubError, Tokenizer

__all__ = [
    "AddedToken",
    "BertWordPieceTokenizer",
    "ByteLevelBPETokenizer",
    "CharBPETokenizer",
    "SentencePieceBPETokenizer",
    "SentencePieceUnigramTokenizer",
    "Encoding",
    "HubError",
    "NormalizedString",
    "PreTokenizedString",
    "Regex",
    "Token",
    "Tokenizer",
    "decoders",
    "implementations",
    "models",
    "normalizers",
    "pre_tokenizers",
    "processors",
    "trainers",
]
