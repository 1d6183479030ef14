"""Runs sentencepiece's own Python test suite against `tokenmill.sentencepiece`.

    pip download sentencepiece==0.2.1 --no-deps --no-binary sentencepiece -d /tmp/sp
    python tests/sentencepiece_suite.py /tmp/sp/sentencepiece-0.2.1.tar.gz [pytest options]

The tests and their data (two `.model` files, botchan.txt) are unpacked from sentencepiece's
source archive into a temporary directory (nothing of sentencepiece is kept in this
repository) and run with `import sentencepiece` giving `tokenmill.sentencepiece`: a one-file
module named `sentencepiece` on PYTHONPATH puts ours in its place, following the archive's
release where releases differ (`tokenmill.sentencepiece.follow_release`). Not collected by
pytest; `test_peer_suites.py` fetches the archives and runs this.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

SHIM = '''"""`sentencepiece` is tokenmill.sentencepiece here (written by tokenmill's tests/sentencepiece_suite.py)."""
import sys

import tokenmill.sentencepiece as _ours

_ours.follow_release({release!r})
sys.modules["sentencepiece"] = _ours
'''


def release_of(archive: str) -> str:
    """The sentencepiece release an archive holds (its name's), if tokenmill follows it, else
    the newest tokenmill follows."""
    from tokenmill.sentencepiece import settings

    found = re.search(r"sentencepiece-(\d+\.\d+\.\d+)", Path(archive).name)
    return found.group(1) if found and found.group(1) in settings.RELEASES else settings.RELEASES[-1]


def main(archive: str, pytest_args: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    from peer_suite import run_with_shim, unpack_tests

    with tempfile.TemporaryDirectory(prefix="sentencepiece-suite-") as tmp:
        root = Path(tmp)
        unpack_tests(archive, root, "test")
        shim = SHIM.format(release=release_of(archive))
        return run_with_shim(root, "sentencepiece", "tokenmill.sentencepiece", shim, "test", pytest_args)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
