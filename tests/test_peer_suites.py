"""The peers' own test suites against tokenmill's modules of their shape: sentencepiece 0.2.3's
and 0.2.1's against `tokenmill.sentencepiece`, tiktoken 0.14.0's against `tokenmill.tiktoken`.

Each source archive is fetched from PyPI by pip the first time (pinned by SHA-256, kept in the
published-files cache, `tests/published_files.py`); without PyPI the test skips, under
TOKENMILL_CI it fails. The suite runs in a subprocess (`sentencepiece_suite.py`,
`tiktoken_suite.py`) and must pass whole.

Left out of sentencepiece 0.2.3's: `test/gen_stubs_test.py`, which checks sentencepiece's own
committed `__init__.pyi` against its generator, `tools/gen_stubs.py` (outside the `test/`
folder the runner unpacks): it tests the package's files, not its interface.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import published_files as pf
import pytest

HERE = Path(__file__).parent

SENTENCEPIECE_023 = pf.Archive(
    "sentencepiece",
    "0.2.3",
    "sentencepiece-0.2.3.tar.gz",
    "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd",
    3_751_846,
)
SENTENCEPIECE_021 = pf.Archive(
    "sentencepiece",
    "0.2.1",
    "sentencepiece-0.2.1.tar.gz",
    "8138cec27c2f2282f4a34d9a016e3374cd40e5c6e9cb335063db66a0a3b71fad",
    3_228_515,
)
TIKTOKEN_0140 = pf.Archive(
    "tiktoken",
    "0.14.0",
    "tiktoken-0.14.0.tar.gz",
    "231dec90efcdccf1b565a1416107736f1e09b1a08fe736ef9d6363e626d03874",
    38_898,
)

SUITES = [
    pytest.param(
        "sentencepiece_suite.py",
        SENTENCEPIECE_023,
        ["--ignore=test/gen_stubs_test.py"],
        id="sentencepiece-0.2.3",
    ),
    pytest.param("sentencepiece_suite.py", SENTENCEPIECE_021, [], id="sentencepiece-0.2.1"),
    # A fixed seed for tiktoken's hypothesis tests. Hypothesis draws string constants from the
    # source of modules outside site-packages, so with tokenmill in a checkout it can draw
    # "<|fim_prefix|>" (seed 9 does), which encode() refuses as a special token, as tiktoken's
    # does: tiktoken's round-trip test then fails for both libraries.
    pytest.param("tiktoken_suite.py", TIKTOKEN_0140, ["--hypothesis-seed=0"], id="tiktoken-0.14.0"),
]


def _archive(archive: pf.Archive) -> Path:
    try:
        return pf.archive_path(archive)
    except pf.Unavailable as e:
        if os.environ.get("TOKENMILL_CI"):
            pytest.fail(f"{archive.filename}: {e}", pytrace=False)
        pytest.skip(f"{archive.filename}: {e}")


@pytest.mark.parametrize(("runner", "archive", "options"), SUITES)
def test_peer_suite_passes(runner: str, archive: pf.Archive, options: list[str]) -> None:
    path = _archive(archive)
    command = [sys.executable, str(HERE / runner), str(path), "-q", "-p", "no:randomly", "-rfE", "--tb=short"]
    done = subprocess.run(command + options, capture_output=True, text=True, timeout=1800, check=False)
    summary = "\n".join(done.stdout.strip().splitlines()[-40:])
    assert done.returncode == 0, f"{archive.filename}'s suite failed:\n{summary}\n{done.stderr[-2000:]}"
