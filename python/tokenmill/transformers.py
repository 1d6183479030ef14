"""transformers on tokenmill: a model directory's tokenizer as transformers loads it (its class,
special tokens, chat template, `tokenizer_config.json`), with tokenmill running it in place of
Hugging Face tokenizers. Everything a transformers tokenizer does — `tok(texts, padding=...,
truncation=..., return_tensors=...)`, `batch_decode`, `apply_chat_template`, `save_pretrained` —
then gives the stock tokenizer's results (tests/test_transformers_on_tokenmill.py).

>>> tok = from_pretrained("bert-base-uncased/")   # tokenizer.json, tokenizer_config.json, ...
>>> tok(["Hello world", "Hi"], padding=True, return_tensors="np")["input_ids"]
array([[ 101, 7592, 2088,  102],
       [ 101, 7632,  102,    0]])
>>> tok.batch_decode([[101, 7592, 2088, 102]], skip_special_tokens=True)
['hello world']

The one-line equivalent with transformers' own loader::

    AutoTokenizer.from_pretrained(d, tokenizer_object=tokenmill.tokenizers.Tokenizer.from_file(f"{d}/tokenizer.json"))

transformers is not a dependency of tokenmill: it is imported when this is called.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tokenmill import _core


def from_pretrained(directory: str | os.PathLike[str], **kwargs: Any) -> Any:
    """transformers' `AutoTokenizer.from_pretrained(directory, **kwargs)` for a local directory
    with a `tokenizer.json`, run by tokenmill (its `tokenizer.json` read by
    `tokenmill.tokenizers.Tokenizer.from_file`)."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise _core.ConfigError("tokenmill.transformers needs transformers: pip install transformers") from None
    from tokenmill.tokenizers import Tokenizer

    where = Path(directory)
    if not (where / "tokenizer.json").is_file():
        raise _core.ConfigError(
            f"{where}: no tokenizer.json (a directory of transformers' save_pretrained, with a fast tokenizer)"
        )
    backend = Tokenizer.from_file(where / "tokenizer.json")
    return AutoTokenizer.from_pretrained(str(where), tokenizer_object=backend, **kwargs)
