"""tiktoken's interface on tokenmill's encoder: ``import tokenmill.tiktoken as tiktoken``.

>>> import tokenmill.tiktoken as tiktoken
>>> enc = tiktoken.get_encoding("o200k_base")
>>> enc.encode("hello world")
[24912, 2375]
>>> enc.decode([24912, 2375])
'hello world'

Encodings, ids, arguments, results and exceptions are tiktoken's (release 0.14); vocabulary
files come from the same places, are checked against the same SHA-256 values and share
tiktoken's cache directory. The submodules `core`, `load`, `model` and `registry` hold what
tiktoken's modules of those names hold.
"""

from tokenmill.tiktoken.core import Encoding
from tokenmill.tiktoken.model import encoding_for_model, encoding_name_for_model
from tokenmill.tiktoken.registry import get_encoding, list_encoding_names

# The tiktoken release whose behaviour this module follows.
__version__ = "0.14.0"

__all__ = ["Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names"]
