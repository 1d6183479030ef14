"""The installed wheel's smoke test, run in an environment that holds nothing but the wheel:
train each model family, encode exactly (ids the reference libraries gave, in the inputs file
`wheel_smoke_inputs.py` wrote), load and save every file format. Usage: `wheel_smoke.py INPUTS`."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import tokenmill


def main(inputs_path: str) -> None:
    inputs = json.loads(Path(inputs_path).read_text(encoding="utf-8"))
    texts = inputs["texts"]
    # Installed in this clean environment, not found on a path handed down.
    installed = Path(tokenmill.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
    assert installed, f"tokenmill came from {tokenmill.__file__}, not the wheel installed in {sys.prefix}"
    out = Path(tempfile.mkdtemp(prefix="tokenmill-smoke-"))

    # Training: the three families, on the corpus file; each round-trips text.
    corpus = inputs["corpus"]
    trained = {
        "bpe": tokenmill.train_bpe(corpus, vocab_size=400, show_progress=False),
        "wordpiece": tokenmill.train_wordpiece(corpus, vocab_size=300, show_progress=False),
        "unigram": tokenmill.train_unigram(corpus, vocab_size=150, show_progress=False),
    }
    assert trained["bpe"].decode(trained["bpe"].encode(texts[1])) == texts[1]
    for name, tok in trained.items():
        assert tok.encode(texts[0]), name

    # Exact encoding against the reference libraries' ids, loading each format.
    loaded = {
        "cl100k": tokenmill.Tokenizer.from_tiktoken(inputs["cl100k"]["path"], pattern="cl100k_base"),
        "tokenizer_json": tokenmill.Tokenizer.from_huggingface(inputs["tokenizer_json"]["path"]),
        "vocab_txt": tokenmill.Tokenizer.from_wordpiece_vocab(inputs["vocab_txt"]["path"]),
        "sentencepiece": tokenmill.Tokenizer.from_sentencepiece(inputs["sentencepiece"]["path"]),
    }
    for name, tok in loaded.items():
        assert [tok.encode(t) for t in texts] == inputs[name]["ids"], f"{name}: ids differ from its library's"
    gpt2 = tokenmill.Tokenizer.from_gpt2(inputs["gpt2"]["vocab"], inputs["gpt2"]["merges"])
    assert gpt2.decode(gpt2.encode(texts[1])) == texts[1]

    # Saving: tokenmill's own file and the other formats, read back with the same ids.
    cl100k = loaded["cl100k"]
    cl100k.save(out / "own.json")
    cl100k.save_tiktoken(out / "again.tiktoken")
    again = [
        tokenmill.Tokenizer.load(out / "own.json"),
        tokenmill.Tokenizer.from_tiktoken(out / "again.tiktoken", pattern="cl100k_base"),
    ]
    for tok in again:
        assert [tok.encode(t) for t in texts] == inputs["cl100k"]["ids"]
    trained["bpe"].to_huggingface(out / "tokenizer.json")
    assert tokenmill.Tokenizer.from_huggingface(out / "tokenizer.json").encode(texts[0]) == trained["bpe"].encode(
        texts[0]
    )
    print(f"smoke test: tokenmill {tokenmill.__version__} from {Path(tokenmill.__file__).parent}: all passed")


if __name__ == "__main__":
    main(sys.argv[1])
