"""WordPiece training: tokenmill (merges by likelihood) against Hugging Face's WordPieceTrainer
(which trains BPE by frequency and renames the pieces), BERT normalizer and pre-tokenizer on
both sides, in fresh subprocesses (peak memory is each one's own); one run each.

    python benches/compare_train_wordpiece.py [--vocab-size 30522] FILE [FILE ...]

Prints time, peak memory, and tokens per word on the first 2 MB of the corpus: the vocabularies
differ by design, so they are compared by what they do, not token by token.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

TRAINERS = {
    "tokenmill": """
        import tokenmill
        tok = tokenmill.train_wordpiece(FILES, vocab_size=VOCAB, show_progress=False)
        encode = lambda t: tok.encode(t)
    """,
    "tokenizers": """
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=VOCAB, show_progress=False,
                                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        tok.train(FILES, trainer)
        encode = lambda t: tok.encode(t, add_special_tokens=False).ids
    """,
}

CHILD = """
import json, resource, time
FILES, VOCAB = {files!r}, {vocab}
start = time.perf_counter()
{body}
seconds = time.perf_counter() - start
sample = open(FILES[0], encoding="utf-8", errors="replace").read(2_000_000)
words = len(sample.split())
print(json.dumps({{"seconds": seconds, "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
                  "tokens_per_word": len(encode(sample)) / words}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--vocab-size", type=int, default=30522)
    args = parser.parse_args()
    results = {}
    for name, body in TRAINERS.items():
        script = CHILD.format(files=args.files, vocab=args.vocab_size, body=textwrap.dedent(body))
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"  {name:<12} failed: {(run.stdout + run.stderr).strip().splitlines()[-1:]}")
            continue
        results[name] = r = json.loads(run.stdout.strip().splitlines()[-1])
        print(
            f"  {name:<12} {r['seconds']:7.1f} s  peak {r['peak_gb']:5.2f} GB  {r['tokens_per_word']:.3f} tokens/word"
        )
    if len(results) == 2:
        ours, theirs = results["tokenmill"], results["tokenizers"]
        print(
            f"  tokenmill vs tokenizers: time {ours['seconds'] / theirs['seconds']:.2f}x, "
            f"memory {ours['peak_gb'] / theirs['peak_gb']:.2f}x"
        )


if __name__ == "__main__":
    main()
