"""Builds the wheel users get and checks it on this machine.

1. `maturin build --release --zig --compatibility manylinux2014`: zig links against glibc 2.17's
   symbols, so the wheel runs on any Linux that manylinux2014 covers;
2. `auditwheel show` must classify it as manylinux2014 (`manylinux_2_17`) or older;
3. it installs into a fresh virtual environment with pip told to build nothing and fetch nothing
   (`--no-index --only-binary :all:`): no compiler, no network;
4. `wheel_smoke.py` runs there — training, exact encoding against ids the reference libraries
   computed here, and loading every file format — with nothing but the wheel installed.

Run: `python .ci/wheel_check.py [--out DIR]` (needs maturin, ziglang and auditwheel: the test
extras). Prints the wheel's path and size; exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The newest glibc a manylinux2014 wheel may need.
NEWEST_GLIBC = (2, 17)


def run(*command: str | Path, **kwargs: object) -> str:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}")
    return str(done.stdout)


def build(out: Path) -> Path:
    # A target directory of its own: zig's linker settings would otherwise make the next
    # ordinary build of the checkout start over.
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target" / "wheel-check"))
    run(
        sys.executable, "-m", "maturin", "build", "--release", "--zig",
        "--compatibility", "manylinux2014", "--out", out, cwd=ROOT, env=env,
    )  # fmt: skip
    wheels = sorted(out.glob("tokenmill-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one wheel in {out}, found {wheels}")
    return wheels[0]


def audit(wheel: Path) -> str:
    shown = " ".join(run(sys.executable, "-m", "auditwheel", "show", wheel).split())
    found = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_(\w+)"', shown)
    if found is None:
        raise SystemExit(f"auditwheel gave no manylinux tag for {wheel.name}:\n{shown}")
    glibc = (int(found.group(1)), int(found.group(2)))
    if glibc > NEWEST_GLIBC:
        raise SystemExit(f"{wheel.name} needs glibc {glibc[0]}.{glibc[1]}, newer than manylinux2014's 2.17")
    return f"manylinux_{glibc[0]}_{glibc[1]}_{found.group(3)}"


def expectations(directory: Path) -> dict[str, object]:
    """Files of every format and the ids their own libraries give, made here, where the
    reference libraries are installed (the clean environment has only the wheel)."""
    sys.path.insert(0, str(ROOT / ".ci"))
    from wheel_smoke_inputs import make

    return make(directory)


def smoke(wheel: Path, inputs: dict[str, object], directory: Path) -> None:
    env_dir = directory / "clean"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # No search path handed down (a test session may have set PYTHONPATH to its own tokenmill).
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    run(python, "-m", "pip", "install", "--quiet", "--no-index", "--only-binary", ":all:", wheel, env=clean)
    spec = directory / "inputs.json"
    spec.write_text(json.dumps(inputs), encoding="utf-8")
    # Outside the checkout, so `import tokenmill` finds the installed wheel, not python/.
    print(run(python, ROOT / ".ci" / "wheel_smoke.py", spec, cwd=directory, env=clean), end="")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="where the wheel goes (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokenmill-wheel-") as scratch:
        out = args.out or Path(scratch) / "dist"
        out.mkdir(parents=True, exist_ok=True)
        wheel = build(out)
        tag = audit(wheel)
        smoke(wheel, expectations(Path(scratch)), Path(scratch))
        size = wheel.stat().st_size
        print(f"wheel: {wheel.name} ({size / 1e6:.2f} MB, {size} bytes), auditwheel: {tag}, smoke test passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
