"""Hugging Face `tokenizers`' API on tokenmill: `from tokenmill.tokenizers import Tokenizer` in
place of `from tokenizers import Tokenizer`, and the same files give the same `Encoding`s, faster.

What is here: `Tokenizer` (files, `encode`/`encode_batch` into `Encoding`s with the template,
truncation and padding applied, `decode`/`decode_batch`, the vocabulary, added tokens' flags,
truncation and padding settings), `Encoding` with every accessor, `AddedToken`,
`decoders.DecodeStream`. Not yet: the component classes (`models`, `normalizers`,
`pre_tokenizers`, `processors`, `decoders`, `trainers`), adding tokens, `post_process`,
pre-tokenized input.

>>> from tokenmill.tokenizers import AddedToken
>>> AddedToken("[MASK]", lstrip=True).lstrip
True
"""

from tokenmill.tokenizers import decoders
from tokenmill.tokenizers.added_token import AddedToken
from tokenmill.tokenizers.encoding import Encoding
from tokenmill.tokenizers.tokenizer import Tokenizer

__all__ = ["AddedToken", "Encoding", "Tokenizer", "decoders"]
