"""Train BPE at the same vocabulary size with tokenmill and its peers; print wall seconds, peak
RSS and bytes/token for each, all from one run.

    python benches/compare_train.py [--vocab-size 32768] [--pattern gpt2|cl100k] FILE [FILE ...]

Each trainer runs in a fresh subprocess so that its peak memory is its own. Peers that are not
installed are skipped: gigabpe (GPT-2 pattern only), rustbpe, tokenizers (Hugging Face).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

# Each snippet trains on FILES with VOCAB and PATTERN, then defines `encode(text) -> list`.
TRAINERS = {
    "tokenmill": """
        import tokenmill
        tok = tokenmill.train_bpe(FILES, vocab_size=VOCAB, pattern=PATTERN, show_progress=False)
        encode = tok.encode_ordinary
    """,
    # The same trainer fed one line at a time, as rustbpe and Hugging Face read their input: the
    # like-for-like check of bytes/token (whole files let pieces such as "\n\n    " span lines).
    "tokenmill-lines": """
        import tokenmill
        def lines():
            for f in FILES:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    yield from fh
        tok = tokenmill.train_bpe(lines(), vocab_size=VOCAB, pattern=PATTERN, show_progress=False)
        encode = tok.encode_ordinary
    """,
    "gigabpe": """
        import gigabpe, tempfile, os, tokenizers
        if PATTERN != "gpt2":
            raise SystemExit("skip: gigabpe supports the GPT-2 pattern only")
        out = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
        # Byte-level mode: the same GPT-2 job as ours. (Its default, "whitespace", splits on
        # whitespace and drops it: a different, slower job.)
        gigabpe.train_tokenizer(FILES, VOCAB, out, pretokenizer="bytelevel")
        hf = tokenizers.Tokenizer.from_file(out)
        encode = lambda t: hf.encode(t, add_special_tokens=False).ids
    """,
    "rustbpe": """
        import rustbpe
        from tokenmill.pretokenize_patterns import PRESET_PATTERNS
        def lines():
            for f in FILES:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    yield from fh
        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(lines(), VOCAB, pattern=PRESET_PATTERNS[PATTERN])
        encode = tok.encode
    """,
    "hf-tokenizers": """
        from tokenizers import Tokenizer, Regex, models, pre_tokenizers, trainers
        from tokenmill.pretokenize_patterns import ONIGURUMA_PATTERNS
        tok = Tokenizer(models.BPE())
        if PATTERN == "gpt2":
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        else:
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(ONIGURUMA_PATTERNS[PATTERN]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        trainer = trainers.BpeTrainer(vocab_size=VOCAB, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tok.train(FILES, trainer)
        encode = lambda t: tok.encode(t, add_special_tokens=False).ids
    """,
}

CHILD = """
import json, resource, sys, time
FILES, VOCAB, PATTERN = {files!r}, {vocab}, {pattern!r}
start = time.perf_counter()
{body}
seconds = time.perf_counter() - start
sample = open(FILES[0], encoding="utf-8", errors="replace").read(4_000_000)
tokens = len(encode(sample))
print(json.dumps({{"seconds": seconds, "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
                  "bytes_per_token": len(sample.encode("utf-8")) / tokens}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--pattern", default="gpt2", choices=["gpt2", "cl100k"])
    parser.add_argument("--only", nargs="*", help="trainers to run (default: all installed)")
    args = parser.parse_args()
    # Read every file once first, so that no trainer pays for the disk while the ones after it
    # find the files in the page cache (a 1 GB corpus read cold took the first trainer 6 s).
    for path in args.files:
        with open(path, "rb") as fh:
            while fh.read(1 << 24):
                pass
    results = {}
    for name, body in TRAINERS.items():
        if args.only and name not in args.only:
            continue
        script = CHILD.format(files=args.files, vocab=args.vocab_size, pattern=args.pattern, body=textwrap.dedent(body))
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        if run.returncode != 0:
            reason = (run.stdout + run.stderr).strip().splitlines()[-1:] or ["failed"]
            print(f"  {name:<14} skipped: {reason[0][:100]}")
            continue
        results[name] = json.loads(run.stdout.strip().splitlines()[-1])
        r = results[name]
        print(
            f"  {name:<14} {r['seconds']:7.1f} s  peak {r['peak_gb']:5.2f} GB  {r['bytes_per_token']:.4f} bytes/token",
            flush=True,
        )
    ours = results.get("tokenmill")
    if ours:
        for name, r in results.items():
            if name != "tokenmill":
                print(
                    f"  tokenmill vs {name}: time {ours['seconds'] / r['seconds']:.2f}x, "
                    f"memory {ours['peak_gb'] / r['peak_gb']:.2f}x, "
                    f"bytes/token {100 * (ours['bytes_per_token'] / r['bytes_per_token'] - 1):+.2f}%"
                )


if __name__ == "__main__":
    main()
