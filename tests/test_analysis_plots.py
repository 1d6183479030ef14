"""tokenmill.analysis.plots: every plot renders to PNG and SVG, and draws the analysis' numbers."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from analysis_data import PARALLEL, hand_tokenizer, real

import tokenmill
from tokenmill import analysis

plots = pytest.importorskip("tokenmill.analysis.plots")
pytest.importorskip("matplotlib")


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def _is_svg(path: Path) -> bool:
    return ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"


@pytest.fixture(params=["png", "svg"])
def suffix(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _check(path: Path) -> None:
    assert _is_png(path) if path.suffix == ".png" else _is_svg(path)


def test_fertility_and_premium_plots(tmp_path: Path, suffix: str) -> None:
    toks = {"cl100k": real("cl100k_base"), "o200k": real("o200k_base")}
    table = analysis.fertility(toks, {lang: texts for lang, texts in PARALLEL.items()})
    out = tmp_path / f"fertility.{suffix}"
    data = plots.plot_fertility(table, out)
    _check(out)
    assert data == {g: v for g, v in table.pivot("tokens_per_word").items() if g != "(all)"}
    assert set(data) == set(PARALLEL) and set(data["en"]) == {"cl100k", "o200k"}
    premium = analysis.parallel_premium(toks, PARALLEL)
    out = tmp_path / f"premium.{suffix}"
    data = plots.plot_premium(premium, out)
    _check(out)
    assert data["hi"] == {name: premium.premium[name]["hi"] for name in toks}
    out = tmp_path / f"rank.{suffix}"
    data = plots.plot_rank_frequency(table.token_counts, out)
    _check(out)
    assert data["cl100k"]["seen"] == sum(1 for c in table.token_counts["cl100k"] if c)
    assert data["cl100k"]["top"] == max(table.token_counts["cl100k"])


def test_sweep_plot(tmp_path: Path, suffix: str, stdlib_text: str) -> None:
    tok = tokenmill.train_bpe([stdlib_text[:200_000]], vocab_size=1024, show_progress=False)
    held = {"held": [stdlib_text[200_000:260_000]]}
    for body in (None, 2_000_000):
        sweep = analysis.vocab_sweep(tok, held, sizes=[256, 512, 1024], d_model=128, body_params=body)
        out = tmp_path / f"sweep-{body}.{suffix}"
        data = plots.plot_sweep(sweep, out)
        _check(out)
        assert data["vocab_size"] == [256, 512, 1024]
        assert data["bytes_per_token"] == [r.bytes_per_token for r in sweep.rows]
        if body is None:
            assert data["embedding_params_millions"] == [2 * v * 128 / 1e6 for v in (256, 512, 1024)]
        else:
            assert data["embedding_share_percent"] == [100 * (r.embedding_share or 0) for r in sweep.rows]


def test_number_plot(tmp_path: Path, suffix: str) -> None:
    report = analysis.number_splits({"hand": hand_tokenizer()}, patterns=["cl100k", "digits"], lengths=[1, 2, 3, 4])
    out = tmp_path / f"numbers.{suffix}"
    data = plots.plot_numbers(report, out)
    _check(out)
    assert data["pre:cl100k"]["tokens_per_number"] == [1, 1, 1, 2]
    assert data["pre:digits"]["tokens_per_number"] == [1, 2, 3, 4]
    assert data["pre:cl100k"]["aligned_percent"] == [100, 100, 100, 0]
    assert data["hand"]["digits"] == [1, 2, 3, 4]


def test_bad_plot_arguments(tmp_path: Path) -> None:
    table = analysis.fertility(hand_tokenizer(), {"x": ["ab"]})
    with pytest.raises(tokenmill.ConfigError, match=".png or .svg"):
        plots.plot_fertility(table, tmp_path / "x.jpg")
    with pytest.raises(tokenmill.ConfigError, match="metric"):
        plots.plot_fertility(table, tmp_path / "x.png", metric="nonsense")
