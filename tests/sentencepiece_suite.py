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

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

SHIM = '''"""`sentencepiece` is tokenmill.sentencepiece here (written by tokenmill's tests/sentencepiece_suite.py)."""
import sys

import tokenmill.sentencepiece as _ours

sys.modules["sentencepiece"] = _ours
'''


def main(archive: str, pytest_args: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="sentencepiece-suite-") as tmp:
        root = Path(tmp)
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if "/test/" in m.name and m.isfile()]
            for member in members:
                member.name = "test/" + member.name.split("/test/", 1)[1]
            tar.extractall(root, members=members, filter="data")
        # Fails the run at once if `import sentencepiece` were to find the real one.
        (root / "conftest.py").write_text(
            "import sentencepiece\n\n"
            "assert sentencepiece.__name__ == 'tokenmill.sentencepiece', sentencepiece.__file__\n"
        )
        (root / "shim").mkdir()
        (root / "shim" / "sentencepiece.py").write_text(SHIM)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "shim"), env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "test", *pytest_args]
        return subprocess.call(command, cwd=root, env=env)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
