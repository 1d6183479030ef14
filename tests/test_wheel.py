"""The wheel users install, checked on this machine (`.ci/wheel_check.py`): built for
manylinux2014 with zig, classified by auditwheel as manylinux2014 or older, installed with no
compiler and no network into a clean environment, and smoke-tested there (training, exact ids
against the reference libraries, every file format). Runs when its tools are installed (the test
extras bring them: maturin, ziglang, auditwheel)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_manylinux_wheel_installs_cleanly_and_passes_its_smoke_test(tmp_path: Path) -> None:
    for tool in ("maturin", "ziglang", "auditwheel"):
        if importlib.util.find_spec(tool) is None:
            pytest.skip(f"{tool} is not installed (pip install '.[test]' brings it)")
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "wheel_check.py"), "--out", str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke test passed" in done.stdout
    print(done.stdout)  # the wheel's name, size and tag, shown with -s
    wheel = next((tmp_path / "dist").glob("tokenmill-*.whl"))
    assert "manylinux2014_x86_64" in wheel.name or "manylinux_2_17" in wheel.name
