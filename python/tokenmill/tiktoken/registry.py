"""Encodings by name: OpenAI's, plus those of any installed `tiktoken_ext` plugin package.

Each encoding is built once per process and shared (they are immutable)."""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from typing import Any

from tokenmill.tiktoken import openai_public
from tokenmill.tiktoken.core import Encoding

_lock = threading.RLock()
ENCODINGS: dict[str, Encoding] = {}
ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] | None = None

# tiktoken's own definitions of OpenAI's encodings; ours (openai_public) stand in for them.
_REPLACED_PLUGINS = {"tiktoken_ext.openai_public"}


def _plugin_modules() -> list[str]:
    """Modules of the `tiktoken_ext` namespace package (empty when none is installed)."""
    try:
        import tiktoken_ext
    except ImportError:
        return []
    found = pkgutil.iter_modules(tiktoken_ext.__path__, "tiktoken_ext.")
    return [name for _, name, _ in found if name not in _REPLACED_PLUGINS]


def _find_constructors() -> dict[str, Callable[[], dict[str, Any]]]:
    global ENCODING_CONSTRUCTORS
    with _lock:
        if ENCODING_CONSTRUCTORS is not None:
            return ENCODING_CONSTRUCTORS
        constructors = dict(openai_public.ENCODING_CONSTRUCTORS)
        for module_name in _plugin_modules():
            module = importlib.import_module(module_name)
            plugin = getattr(module, "ENCODING_CONSTRUCTORS", None)
            if plugin is None:
                raise ValueError(f"tiktoken plugin {module_name} does not define ENCODING_CONSTRUCTORS")
            for name, constructor in plugin.items():
                if name in constructors:
                    raise ValueError(f"encoding {name!r} of tiktoken plugin {module_name} is already defined")
                constructors[name] = constructor
        ENCODING_CONSTRUCTORS = constructors
        return constructors


def get_encoding(encoding_name: str) -> Encoding:
    """The encoding of this name, built on first use (its vocabulary file is fetched or read
    from the cache). `ValueError` for a name no definition has.

    >>> get_encoding("cl100k_base").encode("hello world")
    [15339, 1917]
    >>> get_encoding("cl100k_base") is get_encoding("cl100k_base")
    True
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    if encoding_name in ENCODINGS:
        return ENCODINGS[encoding_name]
    with _lock:
        if encoding_name in ENCODINGS:
            return ENCODINGS[encoding_name]
        constructors = _find_constructors()
        if encoding_name not in constructors:
            raise ValueError(f"Unknown encoding {encoding_name!r}; known encodings: {', '.join(constructors)}")
        encoding = Encoding(**constructors[encoding_name]())
        ENCODINGS[encoding_name] = encoding
        return encoding


def list_encoding_names() -> list[str]:
    return list(_find_constructors())
