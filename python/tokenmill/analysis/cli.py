"""`tokenmill analyze ...`: the analyses from the shell, as tables or `--json`, with `--plot`.

tokenmill analyze fertility -t cl100k_base -t o200k_base en=en.txt ja=ja.txt --plot fert.png
tokenmill analyze count -t cl100k_base docs/*.md --price 2.50
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokenmill import ConfigError, CorpusError


def _groups(items: list[str]) -> dict[str, str] | list[str]:
    """``name=path`` items name their group; plain paths (or globs) are a group per file."""
    if not items:
        raise ConfigError("give at least one file")
    if all("=" in item and not Path(item).exists() for item in items):
        return dict(item.split("=", 1) for item in items)  # type: ignore[misc]
    if any("=" in item and not Path(item).exists() for item in items):
        raise ConfigError("name every file (name=path) or none")
    return items


def _check_plot_paths(args: argparse.Namespace) -> None:
    """Refuse a bad plot file name before the analysis runs, not after."""
    for name in ("plot", "rank_plot"):
        path = getattr(args, name, None)
        if path is not None and Path(path).suffix.lower() not in (".png", ".svg"):
            raise ConfigError(f"{path}: plots are written as .png or .svg")


def _checked(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def checked(args: argparse.Namespace) -> int:
        _check_plot_paths(args)
        return run(args)

    return checked


def _emit(args: argparse.Namespace, result: Any, text: str) -> None:
    if args.json:
        json.dump(result.to_dict(), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(text)


def cmd_fertility(args: argparse.Namespace) -> int:
    from tokenmill.analysis.fertility import fertility

    table = fertility(args.tokenizer, _groups(args.files))
    text = table.format()
    if len(args.tokenizer) > 1:
        text += "\n\n" + table.format_pivot(args.metric)
    _emit(args, table, text)
    if args.plot or args.rank_plot:
        from tokenmill.analysis import plots

        if args.plot:
            plots.plot_fertility(table, args.plot, metric=args.metric)
        if args.rank_plot:
            plots.plot_rank_frequency(table.token_counts, args.rank_plot)
    return 0


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError as e:
        raise CorpusError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: invalid UTF-8 at byte offset {e.start}") from None


def cmd_parallel(args: argparse.Namespace) -> int:
    from tokenmill.analysis.fertility import parallel_premium

    named = _groups(args.files)
    files = named if isinstance(named, dict) else {Path(p).stem: p for p in named}
    texts = {lang: _read_lines(path) for lang, path in files.items()}
    result = parallel_premium(args.tokenizer, texts, reference=args.reference)
    _emit(args, result, result.format())
    if args.plot:
        from tokenmill.analysis import plots

        plots.plot_premium(result, args.plot)
    return 0


def cmd_count(args: argparse.Namespace) -> int:
    from tokenmill.analysis.cost import count_tokens

    report = count_tokens(args.tokenizer, _groups(args.files), price_per_million=args.price)
    _emit(args, report, report.format())
    return 0


def cmd_numbers(args: argparse.Namespace) -> int:
    from tokenmill.analysis.numbers import number_splits

    if not args.tokenizer and not args.pattern:
        raise ConfigError("give a tokenizer (-t) or a pattern (--pattern gpt2|cl100k|digits|REGEX)")
    report = number_splits(
        args.tokenizer or [],
        patterns=args.pattern or [],
        lengths=range(1, args.max_digits + 1) if args.max_digits >= 1 else [],
        samples=args.samples,
        decimals=args.decimals,
    )
    _emit(args, report, report.format())
    if args.plot:
        from tokenmill.analysis import plots

        plots.plot_numbers(report, args.plot)
    return 0


def _id_list(text: str) -> list[int]:
    """``5,7,100-103`` → [5, 7, 100, 101, 102, 103]."""
    ids: list[int] = []
    try:
        for item in text.split(","):
            first, _, last = item.strip().partition("-")
            ids.extend(range(int(first), int(last or first) + 1))
    except ValueError:
        raise ConfigError(f"--reference-ids takes ids and ranges such as 5,7,100-103, got {text!r}") from None
    return ids


def cmd_audit(args: argparse.Namespace) -> int:
    from tokenmill.analysis.audit import audit_tokens

    embeddings = None
    if args.embeddings:
        try:
            import numpy as np
        except ImportError:
            raise ConfigError("--embeddings needs numpy: pip install numpy") from None
        try:
            embeddings = np.load(args.embeddings)
        except (OSError, ValueError) as e:
            raise CorpusError(f"{args.embeddings}: cannot read a numpy array: {e}") from None
    if len(args.tokenizer) != 1:
        raise ConfigError("audit takes one tokenizer (-t)")
    report = audit_tokens(
        args.tokenizer[0],
        _groups(args.files),
        rare_count=args.rare,
        embeddings=embeddings,
        reference_ids=_id_list(args.reference_ids) if args.reference_ids else None,
        z_threshold=args.z_threshold,
    )
    if args.json:
        json.dump(report.to_dict(limit=args.limit), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(report.format(limit=args.limit))
    if args.plot:
        from tokenmill.analysis import plots

        plots.plot_rank_frequency({report.tokenizer: report.counts}, args.plot)
    return 0


def _sizes(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ConfigError(f"--sizes takes comma-separated integers, got {text!r}") from None


def cmd_sweep(args: argparse.Namespace) -> int:
    from tokenmill.analysis.sweep import vocab_sweep

    if len(args.tokenizer) != 1:
        raise ConfigError("sweep takes one tokenizer (-t)")
    sweep = vocab_sweep(
        args.tokenizer[0],
        _groups(args.files),
        sizes=_sizes(args.sizes) if args.sizes else None,
        d_model=args.d_model,
        body_params=int(args.body_params) if args.body_params is not None else None,
        renyi_alpha=args.alpha,
    )
    _emit(args, sweep, sweep.format())
    if args.plot:
        from tokenmill.analysis import plots

        plots.plot_sweep(sweep, args.plot)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from tokenmill.analysis.visualize import token_views, tokens_html, tokens_terminal, views_to_dict
    from tokenmill.cli import _read_text

    text = _read_text(args)
    if args.html:
        Path(args.html).write_text(tokens_html(args.tokenizer, text), encoding="utf-8")
    if args.json:
        json.dump(views_to_dict(token_views(args.tokenizer, text)), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    elif not args.html:
        color = not args.no_color and sys.stdout.isatty()
        print(tokens_terminal(args.tokenizer, text, color=color, ids=args.ids))
    return 0


def add_parser(sub: Any) -> None:
    a = sub.add_parser(
        "analyze",
        help="what a tokenizer does to text: fertility, cost, numbers, audit, sweep, show",
        description="Analyse tokenizers: tables (or --json) and plots (--plot, needs matplotlib).",
    )
    commands = a.add_subparsers(dest="analysis", required=True)

    def command(name: str, help: str, run: Any, *, files: bool = True) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=help, description=help)
        p.add_argument(
            "-t",
            "--tokenizer",
            action="append",
            default=[],
            help="encoding name (cl100k_base), tokenizer.json, .model, .tiktoken or tokenmill file; "
            "label=spec names it; repeat for side by side",
        )
        if files:
            p.add_argument("files", nargs="*", help="files or globs; name=path names a group (a language)")
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        p.set_defaults(run=_checked(run))
        return p

    f = command(
        "fertility", "bytes/token, chars/token, tokens/word, byte-token and unknown shares per file", cmd_fertility
    )
    f.add_argument("--plot", help="bar chart (.png or .svg)")
    f.add_argument(
        "--metric",
        default="tokens_per_word",
        choices=["tokens_per_word", "bytes_per_token", "chars_per_token", "byte_token_share"],
        help="what --plot shows (default tokens_per_word)",
    )
    f.add_argument("--rank-plot", help="token frequency by rank (.png or .svg)")

    p = command("parallel", "token premium per language on line-aligned parallel files", cmd_parallel)
    p.add_argument("--reference", default="en", help="the reference language's name (default en)")
    p.add_argument("--plot", help="bar chart (.png or .svg)")

    c = command("count", "tokens per file and in total, and their cost", cmd_count)
    c.add_argument("--price", type=float, help="price per million tokens")

    n = command("numbers", "how integers and decimals of each length split", cmd_numbers, files=False)
    n.add_argument("--pattern", action="append", help="also a pre-tokenizer alone: gpt2, cl100k, digits or a regex")
    n.add_argument("--max-digits", type=int, default=12, help="numbers of 1 to N digits (default 12)")
    n.add_argument("--samples", type=int, default=200, help="numbers per length (default 200)")
    n.add_argument("--decimals", type=int, default=0, help="fraction digits (default 0: integers)")
    n.add_argument("--plot", help="chart (.png or .svg)")

    u = command("audit", "under-trained / glitch token candidates on a reference corpus", cmd_audit)
    u.add_argument("--rare", type=int, default=0, help="flag tokens seen at most N times (default 0: never)")
    u.add_argument(
        "--embeddings", help="a .npy unembedding (or tied embedding) matrix, one row per id, for the weight checks"
    )
    u.add_argument(
        "--reference-ids",
        help="tokens known to be unused, for the embedding indicator: ids and ranges such as 5,7,100-103 "
        "(default: the unreachable and never-seen tokens)",
    )
    u.add_argument(
        "--z-threshold", type=float, default=2.0, help="standard deviations that mark an embedding (default 2)"
    )
    u.add_argument("--limit", type=int, default=50, help="tokens to list (default 50)")
    u.add_argument("--plot", help="token frequency by rank (.png or .svg)")

    s = command("sweep", "bytes/token, tokens/word, efficiency and 2·V·d per truncated vocabulary size", cmd_sweep)
    s.add_argument("--sizes", help="comma-separated sizes (default: halvings of the full size)")
    s.add_argument("--d-model", type=int, help="model width d, for the 2·V·d parameter cost")
    s.add_argument("--body-params", type=float, help="parameters outside embedding and output, for their share")
    s.add_argument("--alpha", type=float, default=2.5, help="Rényi order (default 2.5)")
    s.add_argument("--plot", help="chart (.png or .svg)")

    w = command("show", "show token boundaries in the terminal or as an HTML page", cmd_show, files=False)
    w.add_argument("text", nargs="?", help="text (default: read stdin)")
    w.add_argument("-f", "--file", help="read the text from this file")
    w.add_argument("--html", help="write a self-contained HTML page here")
    w.add_argument("--no-color", action="store_true", help="| between tokens instead of colours")
    w.add_argument("--ids", action="store_true", help="print the ids too")
