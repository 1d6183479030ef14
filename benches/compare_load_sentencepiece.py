"""Loading SentencePiece `.model` files: tokenmill against sentencepiece, side by side in one run.

    python benches/compare_load_sentencepiece.py [--rounds 7] [--large-pieces 262144] [--corpus FILE]

Models, made at bench time in a temporary directory from --corpus (default: the standard
library's Python sources, which every machine has):

  unigram-8k    sentencepiece's trainer, Unigram, 8,000 pieces, nmt_nfkc (its default map)
  bpe-8k        the same, BPE
  unigram-ident Unigram, 8,000 pieces, the identity normalizer (no character map)
  unigram-large unigram-8k grown to --large-pieces pieces (Gemma-sized by default) with
  bpe-large     distinct made-up pieces of falling score, written with tokenmill's protobuf
                writer: what a large model costs to load, without hours of training

Each file is loaded by `sentencepiece.SentencePieceProcessor(model_file=...)` and by
`tokenmill.Tokenizer.from_sentencepiece(path)`, alternating, best of --rounds each (the file is
in the page cache after the first round for both). Printed: pieces, file size, both times,
and tokenmill's time as a multiple of sentencepiece's (below 1: faster). The ids of both are
checked equal on a few lines of the corpus first.
"""

from __future__ import annotations

import argparse
import io
import sysconfig
import tempfile
import time
from pathlib import Path


def corpus_lines(path: str | None, limit: int = 2_000_000) -> list[str]:
    if path:
        text = Path(path).read_text(encoding="utf-8", errors="replace")[:limit]
    else:
        parts, size = [], 0
        for file in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
            parts.append(file.read_text(encoding="utf-8", errors="replace"))
            size += len(parts[-1])
            if size > limit:
                break
        text = "\n".join(parts)[:limit]
    return [line for line in text.splitlines() if line.strip()]


def train(lines: list[str], **options: object) -> bytes:
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, vocab_size=8000, minloglevel=2, **options
    )
    return out.getvalue()


def grown(data: bytes, pieces: int) -> bytes:
    """`data` with made-up pieces added up to `pieces`: "▁" and letters spelling the index,
    scores falling below the model's lowest."""
    from tokenmill.formats.sentencepiece import Piece, model_bytes, read_model

    model = read_model(data)
    known = {p.piece for p in model.pieces}
    lowest = min(p.score for p in model.pieces)
    i = 0
    while len(model.pieces) < pieces:
        n, word = i, ""
        while True:
            word += chr(ord("a") + n % 26)
            n //= 26
            if not n:
                break
        i += 1
        text = "\u2581" + word
        if text not in known:
            piece = Piece(text, lowest - 1e-4 * i)
            piece.explicit.add("score")
            model.pieces.append(piece)
    model.trainer_spec.vocab_size = pieces
    return model_bytes(model)


def best_of(rounds: int, loaders: dict[str, object]) -> dict[str, float]:
    best = {name: float("inf") for name in loaders}
    for _ in range(rounds):
        for name, load in loaders.items():
            # The loaded object is freed after the clock stops: a user keeps it.
            start = time.perf_counter()
            loaded = load()  # type: ignore[operator]
            best[name] = min(best[name], time.perf_counter() - start)
            del loaded
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--large-pieces", type=int, default=262_144)
    parser.add_argument("--corpus", default=None)
    args = parser.parse_args()

    import sentencepiece as spm

    import tokenmill

    lines = corpus_lines(args.corpus)
    unigram = train(lines, model_type="unigram")
    bpe = train(lines, model_type="bpe")
    models = {
        "unigram-8k": unigram,
        "bpe-8k": bpe,
        "unigram-ident": train(lines, model_type="unigram", normalization_rule_name="identity"),
        "unigram-large": grown(unigram, args.large_pieces),
        "bpe-large": grown(bpe, args.large_pieces),
    }
    print(f"sentencepiece {spm.__version__}, tokenmill {tokenmill.__version__}; best of {args.rounds}")
    print(f"{'model':<14} {'pieces':>8} {'file':>9} {'sentencepiece':>14} {'tokenmill':>11} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for name, data in models.items():
            path = Path(folder) / f"{name}.model"
            path.write_bytes(data)
            sp = spm.SentencePieceProcessor(model_file=str(path))
            tok = tokenmill.Tokenizer.from_sentencepiece(path)
            for line in lines[:200:7]:
                assert tok.encode(line) == sp.encode(line), (name, line)
            times = best_of(
                args.rounds,
                {
                    "sentencepiece": lambda p=str(path): spm.SentencePieceProcessor(model_file=p),
                    "tokenmill": lambda p=path: tokenmill.Tokenizer.from_sentencepiece(p),
                },
            )
            s, t = times["sentencepiece"], times["tokenmill"]
            print(
                f"{name:<14} {sp.get_piece_size():>8,} {len(data) / 1e6:>7.2f}MB {s * 1e3:>11.2f} ms"
                f" {t * 1e3:>8.2f} ms {t / s:>6.2f}x"
            )


if __name__ == "__main__":
    main()
