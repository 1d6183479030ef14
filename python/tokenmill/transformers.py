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

A name that is not a local directory is a Hugging Face Hub repository (`"org/name"`): its
tokenizer files are fetched into huggingface_hub's cache (`snapshot_download`, the tokenizer's
files only, not the weights) and loaded from there, as transformers would.

The one-line equivalent with transformers' own loader::

    AutoTokenizer.from_pretrained(d, tokenizer_object=tokenmill.tokenizers.Tokenizer.from_file(f"{d}/tokenizer.json"))

transformers is not a dependency of tokenmill: it is imported when this is called.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tokenmill import _core

# What a transformers tokenizer reads besides tokenizer.json: its class, special tokens and chat
# templates (config.json names the class when tokenizer_config.json does not). Not the weights, nor
# the slow tokenizer's vocabulary files, which a tokenizer.json makes unneeded.
_HUB_FILES = [
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
    "additional_chat_templates/*.jinja",
    "config.json",
]
# AutoTokenizer.from_pretrained's arguments that say how to fetch from the Hub.
_HUB_OPTIONS = ("revision", "token", "cache_dir", "local_files_only", "force_download")


def from_pretrained(directory: str | os.PathLike[str], **kwargs: Any) -> Any:
    """transformers' `AutoTokenizer.from_pretrained(directory, **kwargs)` for a local directory
    with a `tokenizer.json`, run by tokenmill (its `tokenizer.json` read by
    `tokenmill.tokenizers.Tokenizer.from_file`).

    A `str` that is not a directory is a Hugging Face Hub repository id: its tokenizer files (at
    `revision`, with `token`, into `cache_dir`, as transformers takes them) are fetched by
    huggingface_hub's `snapshot_download` and loaded from the cache; a repository that cannot be
    found raises `tokenmill.tokenizers.tokenizer.HubError` (a `CorpusError` and an `OSError`)."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise _core.ConfigError("tokenmill.transformers needs transformers: pip install transformers") from None
    from tokenmill.tokenizers import Tokenizer

    where = Path(directory)
    if isinstance(directory, str) and not where.exists():
        where = _from_hub(directory, {key: kwargs.pop(key) for key in _HUB_OPTIONS if key in kwargs})
    if not (where / "tokenizer.json").is_file():
        raise _core.ConfigError(
            f"{where}: no tokenizer.json (a directory of transformers' save_pretrained, with a fast tokenizer)"
        )
    backend = Tokenizer.from_file(where / "tokenizer.json")
    return AutoTokenizer.from_pretrained(str(where), tokenizer_object=backend, **kwargs)


def _from_hub(identifier: str, options: dict[str, Any]) -> Path:
    """The local snapshot of a Hub repository's tokenizer files (fetched if not in the cache)."""
    from tokenmill.tokenizers.tokenizer import _hub_errors, _huggingface_hub

    hub = _huggingface_hub()
    with _hub_errors(identifier, options.get("revision"), "the tokenizer files", or_directory=True):
        where = Path(hub.snapshot_download(repo_id=identifier, allow_patterns=_HUB_FILES, **options))
    if not (where / "tokenizer.json").is_file():
        revision = options.get("revision")
        name = identifier if revision is None else f"{identifier}@{revision}"
        raise _core.ConfigError(f"{name}: no tokenizer.json in this Hub repository (it has no fast tokenizer)")
    return where
