"""Runs tiktoken's own test suite against `tokenmill.tiktoken`.

    pip download tiktoken==0.14.0 --no-binary :all: --no-deps -d /tmp/tt
    python tests/tiktoken_suite.py /tmp/tt/tiktoken-0.14.0.tar.gz [pytest options]

The tests are unpacked from tiktoken's source archive into a temporary directory (nothing of
tiktoken is kept in this repository) and run with `import tiktoken` giving `tokenmill.tiktoken`:
a one-file module named `tiktoken` on PYTHONPATH puts ours in its place, in subprocesses too.
Vocabulary files come from the PyPI packages of the test extra, put into a temporary cache
under tiktoken's cache keys, so nothing is downloaded. Not collected by pytest (it needs the
archive, which the test run must not download).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

SHIM = '''"""`tiktoken` is tokenmill.tiktoken here (written by tokenmill's tests/tiktoken_suite.py)."""
import sys

import tokenmill.tiktoken as _ours
from tokenmill.tiktoken import core, load, model, registry

for _name, _module in {"core": core, "load": load, "model": model, "registry": registry}.items():
    sys.modules["tiktoken." + _name] = _module
sys.modules["tiktoken"] = _ours
'''


def main(archive: str, pytest_args: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    from peer_suite import run_with_shim, unpack_tests
    from vocab_files import fill_tiktoken_cache

    with tempfile.TemporaryDirectory(prefix="tiktoken-suite-") as tmp:
        root = Path(tmp)
        unpack_tests(archive, root, "tests")
        fill_tiktoken_cache(root / "cache")
        env = {"TIKTOKEN_CACHE_DIR": str(root / "cache")}
        return run_with_shim(root, "tiktoken", "tokenmill.tiktoken", SHIM, "tests", pytest_args, env)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
