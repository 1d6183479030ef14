"""`tokenmill analyze ...`: tables, --json, --plot, and one-line errors with status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from analysis_data import (
    A_SPACE_B,
    AB,
    PARALLEL,
    SPACE_C3,
    hand_tokenizer,
    tiktoken_cache,  # noqa: F401 - autouse fixture: encoding names load offline
    tiktoken_real,
)

from tokenmill.cli import main


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for lang, lines in PARALLEL.items():
        out[lang] = tmp_path / f"{lang}.txt"
        out[lang].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_fertility_json_and_plots(capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path) -> None:
    status, out, _ = run(
        capsys,
        *["analyze", "fertility", "-t", "cl100k_base", "-t", "o2=o200k_base", f"en={files['en']}", f"ja={files['ja']}"],
        *["--json", "--plot", str(tmp_path / "f.png"), "--rank-plot", str(tmp_path / "r.svg")],
    )
    assert status == 0
    rows = json.loads(out)["rows"]
    assert [(r["tokenizer"], r["group"]) for r in rows][:3] == [
        ("cl100k_base", "en"),
        ("cl100k_base", "ja"),
        ("cl100k_base", "(all)"),
    ]
    text = files["ja"].read_text(encoding="utf-8")
    assert rows[1]["tokens"] == len(tiktoken_real("cl100k_base").encode_ordinary(text))
    assert (tmp_path / "f.png").stat().st_size > 0 and (tmp_path / "r.svg").stat().st_size > 0
    status, out, _ = run(capsys, "analyze", "fertility", "-t", "cl100k_base", str(files["en"]))
    assert status == 0 and "tokens/word" in out and "en.txt" in out
    status, out, _ = run(
        capsys,
        "analyze",
        "fertility",
        "-t",
        "cl100k_base",
        "-t",
        "o200k_base",
        str(files["hi"]),
        "--metric",
        "chars_per_token",
    )
    assert status == 0 and out.splitlines()[-3].split() == ["chars_per_token", "cl100k_base", "o200k_base"]


def test_parallel_count_numbers_sweep_show(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path, stdlib_text: str
) -> None:
    status, out, _ = run(capsys, "analyze", "parallel", "-t", "cl100k_base", *map(str, files.values()), "--json")
    assert status == 0 and json.loads(out)["premium"]["cl100k_base"]["en"] == 1.0
    names = [f"{lang}={path}" for lang, path in files.items()]
    status, out, _ = run(capsys, "analyze", "parallel", "-t", "cl100k_base", *names, "--plot", str(tmp_path / "p.png"))
    assert status == 0 and "hi" in out and (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    status, out, _ = run(capsys, "analyze", "count", "-t", "cl100k_base", str(files["de"]), "--price", "10")
    expected = len(tiktoken_real("cl100k_base").encode_ordinary(files["de"].read_text(encoding="utf-8")))
    assert status == 0 and f"{expected * 10 / 1e6:.6f}" in out
    status, out, _ = run(
        capsys, "analyze", "numbers", "--pattern", "digits", "--max-digits", "3", "--samples", "5", "--json"
    )
    assert status == 0 and [r["tokens_per_number"] for r in json.loads(out)["rows"]] == [1, 2, 3]
    status, out, _ = run(
        capsys, "analyze", "numbers", "-t", "cl100k_base", "--max-digits", "4", "--plot", str(tmp_path / "n.svg")
    )
    assert status == 0 and "ddd|d" in out and (tmp_path / "n.svg").stat().st_size > 0
    held = tmp_path / "held.txt"
    held.write_text(stdlib_text[100_000:150_000], encoding="utf-8")
    import tokenmill

    tokenmill.train_bpe([stdlib_text[:100_000]], vocab_size=512, show_progress=False).save(tmp_path / "tok.json")
    status, out, _ = run(
        capsys, "analyze", "sweep", "-t", str(tmp_path / "tok.json"), str(held), "--sizes", "256,512", "--d-model", "64"
    )
    assert status == 0 and "65,536" in out
    status, out, _ = run(capsys, "analyze", "show", "-t", "cl100k_base", "Hello world", "--no-color", "--ids")
    assert status == 0 and out == "cl100k_base (2 tokens)\nHello| world\n9906 1917\n"
    status, out, _ = run(capsys, "analyze", "show", "-t", "cl100k_base", "Hi", "--html", str(tmp_path / "t.html"))
    assert status == 0 and "id 13347" in (tmp_path / "t.html").read_text(encoding="utf-8")


def test_audit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tok = hand_tokenizer()
    tok.save(tmp_path / "hand.json")
    (tmp_path / "ref.txt").write_text("ab ab ab c", encoding="utf-8")
    status, out, _ = run(capsys, "analyze", "audit", "-t", str(tmp_path / "hand.json"), str(tmp_path / "ref.txt"))
    assert status == 0 and "unreachable" in out
    status, out, _ = run(
        capsys, "analyze", "audit", "-t", str(tmp_path / "hand.json"), str(tmp_path / "ref.txt"), "--json"
    )
    assert json.loads(out)["entries"][0]["token"] == "a b"


def test_audit_with_embeddings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import numpy as np

    tok = hand_tokenizer()
    tok.save(tmp_path / "hand.json")
    (tmp_path / "ref.txt").write_text("ab ab ab c", encoding="utf-8")
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(tok.n_vocab, 16)) + 4
    rows[[AB, A_SPACE_B, SPACE_C3]] = rng.normal(size=16) * 0.01  # one untrained vector
    np.save(tmp_path / "rows.npy", rows)
    common = ["analyze", "audit", "-t", str(tmp_path / "hand.json"), str(tmp_path / "ref.txt")]
    common += ["--embeddings", str(tmp_path / "rows.npy")]
    status, out, _ = run(capsys, *common, "--reference-ids", "258-259", "--json", "--limit", "10")
    data = json.loads(out)
    assert status == 0 and data["reference_ids"] == [A_SPACE_B, SPACE_C3]
    assert data["most_like_unused"][0]["id"] == AB and data["most_like_unused"][0]["unused_similarity"] > 0.99
    assert "embedding like unused tokens" in next(e for e in data["entries"] if e["id"] == AB)["reasons"]
    status, out, _ = run(capsys, *common, "--reference-ids", "258,259", "--z-threshold", "3")
    assert status == 0 and "unused sim" in out and "embedding indicator against 2 reference tokens" in out
    status, out, err = run(capsys, *common, "--reference-ids", "x")
    assert status == 2 and "--reference-ids takes ids and ranges" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["count", "-t", "nonesuch", "x.txt"], "not an encoding name"),
        (["count", "-t", "cl100k_base", "missing.txt"], "missing.txt"),
        (["count", "-t", "cl100k_base"], "at least one file"),
        (["sweep", "-t", "cl100k_base", "-t", "o200k_base", "x"], "one tokenizer"),
        (["sweep", "-t", "cl100k_base", "x", "--sizes", "a,b"], "comma-separated"),
        (["numbers"], "give a tokenizer"),
        (["audit", "-t", "cl100k_base", "x.txt", "--embeddings", "x.txt"], "x.txt: cannot read a numpy array"),
        (["fertility", "-t", "cl100k_base", "x.txt", "--plot", "x.gif"], "x.gif: plots are written as .png or .svg"),
    ],
)
def test_errors_are_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str | None, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "x").write_text("hello", encoding="utf-8")
    status, out, err = run(capsys, "analyze", *args)
    assert status == 2 and not out
    assert err.startswith("tokenmill: error: ") and err.count("\n") == 1
    assert message is None or message in err
