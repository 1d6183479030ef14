"""`ConvertToFlatbuffer`: sentencepiece 0.2.3's conversion of a model to the FlatBuffers form of
its lite runtime (`.spm.fb`). Not written by tokenmill yet: the file holds Darts-clone tries
(pieces, user-defined prefixes, safe character bigrams) laid out byte for byte as
sentencepiece's builders lay them out, which tokenmill does not reproduce. The arguments are
checked as sentencepiece checks them, then NotImplementedError says so.

>>> ConvertToFlatbuffer()
Traceback (most recent call last):
...
ValueError: Exactly one of model_file, model_proto, or serialized_model_proto must be specified.
"""

from __future__ import annotations

import os
from typing import Any


def ConvertToFlatbuffer(
    model_file: str | os.PathLike[str] | None = None,
    model_proto: Any = None,
    serialized_model_proto: bytes | None = None,
    output_file: str | os.PathLike[str] | None = None,
    skip_char_bigrams: bool = False,
    treat_null_byte_as_unused: bool = False,
    allow_unsupported_model_type: bool = False,
) -> bytes | None:
    """Refuses what sentencepiece refuses (ValueError, TypeError), then raises
    NotImplementedError: tokenmill does not write `.spm.fb` files."""
    given = sum(x is not None for x in (model_file, model_proto, serialized_model_proto))
    if given != 1:
        raise ValueError("Exactly one of model_file, model_proto, or serialized_model_proto must be specified.")
    if output_file is not None and not os.fsdecode(os.fspath(output_file)):
        raise ValueError("output_file must not be empty.")
    if model_file is not None and not os.fsdecode(os.fspath(model_file)):
        raise ValueError("model_file must not be empty.")
    if model_proto is not None and not hasattr(model_proto, "SerializeToString") and not isinstance(model_proto, bytes):
        raise TypeError("model_proto must be a ModelProto object or bytes.")
    if serialized_model_proto is not None and not isinstance(serialized_model_proto, bytes):
        raise TypeError("serialized_model_proto must be bytes.")
    raise NotImplementedError(
        "tokenmill.sentencepiece does not write sentencepiece's FlatBuffers (.spm.fb) models; "
        "use sentencepiece's ConvertToFlatbuffer"
    )


convert_to_flatbuffer = ConvertToFlatbuffer
