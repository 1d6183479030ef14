"""Runs sentencepiece's own Python test suite against `tokenmill.sentencepiece`.

    pip download sentencepiece==0.2.1 --no-deps --no-binary sentencepiece -d /tmp/sp
    python tests/sentencepiece_suite.py /tmp/sp/sentencepiece-0.2.1.tar.gz [pytest options]

The tests and their data (two `.model` files, botchan.txt) are unpacked from sentencepiece's
source archive into a temporary directory (nothing of sentencepiece is kept in this
repository) and run with `import sentencepiece` giving `tokenmill.sentencepiece`: a one-file
module named `sentencepiece` on PYTHONPATH puts ours in its place. Not collected by pytest (it
needs the archive, which the test run must not download).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

SHIM = '''"""`sentencepiece` is tokenmill.sentencepiece here (written by tokenmill's tests/sentencepiece_suite.py)."""
import sys

import tokenmill.sentencepiece as _ours

sys.modules["sentencepiece"] = _ours
'''


def main(archive: str, pytest_args: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    from peer_suite import run_with_shim, unpack_tests

    with tempfile.TemporaryDirectory(prefix="sentencepiece-suite-") as tmp:
        root = Path(tmp)
        unpack_tests(archive, root, "test")
        return run_with_shim(root, "sentencepiece", "tokenmill.sentencepiece", SHIM, "test", pytest_args)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
