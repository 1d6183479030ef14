"""The documentation site cannot drift from the code: every code block on every page under
`docs/` runs here (python blocks in one namespace per page, in page order; shell blocks line by
line, `pip install` lines aside), and the site builds with `mkdocs build --strict`, which runs the
python blocks once more through markdown-exec and fails on any warning."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^(`{3,})(\w*)([^\n]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
# Languages of blocks that show something rather than run it: program output, files' contents.
SHOWN = {"text", "json", "yaml", "toml", "jinja", "output", ""}
RUN = {"python", "bash", "console", "sh"}


def blocks(page: Path) -> list[tuple[str, int, str]]:
    """(language, line, code) of each fenced block of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(2), text.count("\n", 0, m.start()) + 1, m.group(4)) for m in FENCE.finditer(text)]


def test_there_are_pages_with_code() -> None:
    assert len(PAGES) >= 20
    assert sum(1 for page in PAGES for lang, _, _ in blocks(page) if lang == "python") >= 60


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_block_of_the_page_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a page that writes files writes them here
    namespace: dict[str, object] = {"__name__": "__docs__"}
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for lang, line, code in blocks(page):
        assert lang in RUN | SHOWN, f"{page}:{line}: a ```{lang} block is neither run nor shown"
        if lang == "python":
            exec(compile(code, f"{page}:{line}", "exec"), namespace)  # noqa: S102
        elif lang in RUN:
            for command in code.splitlines():
                command = command.removeprefix("$ ").strip()
                if not command or command.startswith("#") or command.startswith("pip install"):
                    continue
                done = subprocess.run(shlex.split(command), env=env, capture_output=True, text=True, timeout=300)
                assert done.returncode == 0, f"{page}:{line}: {command!r} failed:\n{done.stderr}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
        cwd=DOCS.parent,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
