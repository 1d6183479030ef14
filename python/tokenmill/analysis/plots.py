"""Pictures of the analyses, drawn with matplotlib (optional: ``pip install 'tokenmill[plot]'``,
imported only here and only when a plot is asked for). Each function takes an analysis result,
writes PNG or SVG by the path's suffix, and returns the numbers it drew, so a test can check
the picture's data without looking at pixels.

>>> from tokenmill.analysis import fertility
>>> table = fertility(["cl100k_base", "o200k_base"], {"en": "en.txt", "ja": "ja.txt"})
>>> drawn = plot_fertility(table, "fertility.png")   # tokens per word
>>> {group: {name: round(value, 2) for name, value in bars.items()} for group, bars in drawn.items()}
{'en': {'cl100k_base': 1.19, 'o200k_base': 1.19}, 'ja': {'cl100k_base': 1.13, 'o200k_base': 0.87}}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tokenmill import _core
from tokenmill.analysis.fertility import ALL, FertilityTable, ParallelPremium
from tokenmill.analysis.numbers import NumberReport
from tokenmill.analysis.sweep import VocabSweep

_LABELS = {
    "tokens_per_word": "tokens per word",
    "bytes_per_token": "bytes per token",
    "chars_per_token": "characters per token",
    "byte_token_share": "share of bytes in byte tokens",
}


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise _core.ConfigError("plots need matplotlib: pip install 'tokenmill[plot]'") from None
    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | os.PathLike[str]) -> None:
    out = Path(path)
    if out.suffix.lower() not in (".png", ".svg"):
        raise _core.ConfigError(f"{out}: plots are written as .png or .svg")
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    fig.clf()
    _pyplot().close(fig)


def _grouped_bars(
    data: Mapping[str, Mapping[str, float]],
    path: str | os.PathLike[str],
    ylabel: str,
    title: str,
    fmt: str,
    *,
    line_at: float | None = None,
) -> None:
    """Bars per group (x) and series (colour), values written on the bars."""
    plt = _pyplot()
    groups = list(data)
    series = list(dict.fromkeys(s for values in data.values() for s in values))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) * max(1, len(series)) ** 0.5 + 2), 4.5))
    width = 0.8 / max(1, len(series))
    for k, name in enumerate(series):
        xs = [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ys = [data[g].get(name, 0.0) for g in groups]
        bars = ax.bar(xs, ys, width, label=name)
        ax.bar_label(bars, labels=[fmt.format(y) for y in ys], fontsize=7, padding=2)
    ax.set_xticks(range(len(groups)), groups, rotation=20 if len(groups) > 6 else 0)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.margins(y=0.12)
    ax.grid(axis="y", alpha=0.3)
    if line_at is not None:
        ax.axhline(line_at, color="0.3", linestyle="--", linewidth=1)
    if len(series) > 1:
        ax.legend(frameon=False)
    _save(fig, path)


def plot_fertility(
    table: FertilityTable, path: str | os.PathLike[str], *, metric: str = "tokens_per_word"
) -> dict[str, dict[str, float]]:
    """One bar per tokenizer for each group (language, file): `metric` of `FertilityRow`."""
    if metric not in _LABELS:
        raise _core.ConfigError(f"metric must be one of {', '.join(_LABELS)}, got {metric!r}")
    data = {g: v for g, v in table.pivot(metric).items() if g != ALL}
    _grouped_bars(data, path, _LABELS[metric], f"{_LABELS[metric].capitalize()} by group and tokenizer", "{:.2f}")
    return data


def plot_premium(premium: ParallelPremium, path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """Token premium of each language over the reference, one bar per tokenizer."""
    langs = list(next(iter(premium.premium.values())))
    data = {lang: {name: p[lang] for name, p in premium.premium.items()} for lang in langs}
    _grouped_bars(
        data,
        path,
        f"tokens ÷ tokens in {premium.reference}",
        "Token premium on parallel text (1.0 = parity)",
        "{:.2f}×",
        line_at=1.0,
    )
    return data


def plot_sweep(sweep: VocabSweep, path: str | os.PathLike[str]) -> dict[str, list[float]]:
    """Bytes per token against vocabulary size (log scale), with the 2·V·d parameter cost (or its
    share of the model) on a second axis when the sweep knows d."""
    plt = _pyplot()
    sizes = [float(r.vocab_size) for r in sweep.rows]
    bpt = [r.bytes_per_token for r in sweep.rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(sizes, bpt, "o-", color="tab:blue", label="bytes per token (held-back text)")
    ax.set_xscale("log", base=2)
    # Ticks at the sizes measured, written short (32k), rather than at powers of two.
    ax.set_xticks(sizes, [_short(int(v)) for v in sizes], rotation=30 if len(sizes) > 6 else 0)
    ax.minorticks_off()
    ax.set_xlabel("vocabulary size V")
    ax.set_ylabel("bytes per token", color="tab:blue")
    ax.grid(alpha=0.3)
    data: dict[str, list[float]] = {"vocab_size": sizes, "bytes_per_token": bpt}
    handles = ax.get_lines()
    if sweep.d_model is not None:
        cost = ax.twinx()
        if sweep.body_params is not None:
            share = [100 * (r.embedding_share or 0.0) for r in sweep.rows]
            cost.plot(sizes, share, "s--", color="tab:red", label=f"2·V·d share of model (d={sweep.d_model}), %")
            cost.set_ylabel("embedding + output share of parameters (%)", color="tab:red")
            data["embedding_share_percent"] = share
        else:
            millions = [(r.embedding_params or 0) / 1e6 for r in sweep.rows]
            cost.plot(sizes, millions, "s--", color="tab:red", label=f"2·V·d (d={sweep.d_model}), millions")
            cost.set_ylabel("embedding + output parameters (millions)", color="tab:red")
            data["embedding_params_millions"] = millions
        handles = handles + cost.get_lines()
    ax.legend(handles, [h.get_label() for h in handles], frameon=False, loc="upper left")
    ax.set_title(f"Vocabulary size sweep: {sweep.tokenizer}")
    _save(fig, path)
    return data


def _short(n: int) -> str:
    """
    >>> _short(783), _short(32768), _short(100261), _short(2_000_000)
    ('783', '32.8k', '100k', '2M')
    """
    if n >= 10**6:
        return f"{n / 1e6:.3g}M"
    if n >= 10**4:
        return f"{n / 1e3:.3g}k"
    return str(n)


def plot_numbers(report: NumberReport, path: str | os.PathLike[str]) -> dict[str, dict[str, list[float]]]:
    """Tokens per number (left) and the share of place-value-aligned splits (right) against
    the number of digits, one line per tokenizer or pattern."""
    plt = _pyplot()
    series: dict[str, dict[str, list[float]]] = {}
    for r in report.rows:
        s = series.setdefault(f"{r.tokenizer} ({r.kind})" if r.kind != "integer" else r.tokenizer, {})
        s.setdefault("digits", []).append(float(r.length))
        s.setdefault("tokens_per_number", []).append(r.tokens_per_number)
        s.setdefault("aligned_percent", []).append(100 * r.aligned_share)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    markers = "osd^vx*+"
    for k, (name, s) in enumerate(series.items()):
        left.plot(s["digits"], s["tokens_per_number"], marker=markers[k % len(markers)], label=name)
        right.plot(s["digits"], s["aligned_percent"], marker=markers[k % len(markers)], label=name)
    left.set_xlabel("digits in the number")
    left.set_ylabel("tokens per number")
    left.set_title("How many tokens a number takes")
    right.set_xlabel("digits in the number")
    right.set_ylabel("splits aligned to place value (%)")
    right.set_ylim(-5, 105)
    right.set_title("Do the cuts follow place value?")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    left.legend(frameon=False, fontsize=8)
    _save(fig, path)
    return series


def plot_rank_frequency(
    counts: Mapping[str, Sequence[int]], path: str | os.PathLike[str]
) -> dict[str, dict[str, float]]:
    """Token frequency against frequency rank (log-log), one line per tokenizer, from counts per
    id (`FertilityTable.token_counts`, `AuditReport.counts`); the tokens never seen show as where
    each line ends before its vocabulary does."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    data: dict[str, dict[str, float]] = {}
    for name, per_id in counts.items():
        ranked = sorted((c for c in per_id if c), reverse=True)
        if not ranked:
            continue
        ax.plot(range(1, len(ranked) + 1), ranked, label=f"{name} ({len(ranked):,} of {len(per_id):,} ids seen)")
        data[name] = {"seen": float(len(ranked)), "vocabulary": float(len(per_id)), "top": float(ranked[0])}
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("frequency rank")
    ax.set_ylabel("occurrences")
    ax.set_title("Token frequency by rank")
    ax.grid(alpha=0.3, which="both")
    ax.legend(frameon=False, fontsize=8)
    _save(fig, path)
    return data
