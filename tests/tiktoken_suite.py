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

import os
import subprocess
import sys
import tarfile
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
    from vocab_files import fill_tiktoken_cache

    with tempfile.TemporaryDirectory(prefix="tiktoken-suite-") as tmp:
        root = Path(tmp)
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if "/tests/" in m.name and m.isfile()]
            for member in members:
                member.name = "tests/" + member.name.split("/tests/", 1)[1]
            tar.extractall(root, members=members, filter="data")
        # Fails the run at once if `import tiktoken` were to find the real one.
        (root / "conftest.py").write_text(
            'import tiktoken\n\nassert tiktoken.__name__ == "tokenmill.tiktoken", tiktoken.__file__\n'
        )
        (root / "shim").mkdir()
        (root / "shim" / "tiktoken.py").write_text(SHIM)
        fill_tiktoken_cache(root / "cache")
        env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(root / "cache"))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "shim"), env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "tests", *pytest_args]
        return subprocess.call(command, cwd=root, env=env)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
