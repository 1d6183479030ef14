"""A pytest plugin (`-p tokenizers_alias`) that makes `import tokenizers` give `tokenmill.tokenizers`
and its submodules, so that Hugging Face tokenizers' own test suite runs against tokenmill
(`tests/test_tokenizers_suite.py`). A submodule tokenmill lacks stays missing, so tests needing
it fail at import, visibly."""

import importlib
import sys

import tokenmill.tokenizers as _module

sys.modules["tokenizers"] = _module
for _name in ("models", "normalizers", "pre_tokenizers", "processors", "decoders", "trainers", "implementations"):
    try:
        sys.modules[f"tokenizers.{_name}"] = importlib.import_module(f"tokenmill.tokenizers.{_name}")
    except ModuleNotFoundError:
        pass
