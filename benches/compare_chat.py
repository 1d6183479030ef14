"""Chat templates: render and tokenize a 20-turn conversation with tokenmill and with
transformers' `apply_chat_template` (same template string, same vocabulary); checks equal output;
prints the ratio from one run (best of several repetitions).

    python benches/compare_chat.py [--template chatml|llama3] [--repeat 200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--template", default="llama3")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    from transformers import PreTrainedTokenizerFast

    import tokenmill
    from tokenmill.chat import BUILTIN_TEMPLATES

    sys.path.insert(0, str(Path(__file__).parent))
    from compare_encode import vocabulary_file

    tok = tokenmill.Tokenizer.from_tiktoken(vocabulary_file("cl100k_base"), pattern="cl100k_base")
    path = Path(tempfile.mkdtemp()) / "tokenizer.json"
    tok.to_huggingface(path)
    fast = PreTrainedTokenizerFast(tokenizer_file=str(path), bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    tok.set_chat_tokens(bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    template = BUILTIN_TEMPLATES[args.template]
    chat = []
    for turn in range(20):
        role = "user" if turn % 2 == 0 else "assistant"
        chat.append({"role": role, "content": f"Turn {turn}: " + "some words of a conversation, " * 12})

    def ours() -> list[int]:
        return tok.apply_chat_template(chat, chat_template=template, add_generation_prompt=True)

    def theirs() -> list[int]:
        out = fast.apply_chat_template(chat, chat_template=template, add_generation_prompt=True)
        return list(out["input_ids"]) if hasattr(out, "keys") else list(out)

    assert ours() == theirs(), "outputs differ"
    best = {}
    for name, run in (("tokenmill", ours), ("transformers", theirs)) * 3:
        start = time.perf_counter()
        for _ in range(args.repeat):
            run()
        best[name] = min(best.get(name, 1e9), (time.perf_counter() - start) / args.repeat)
    print(
        f"20-turn chat, {args.template}: tokenmill {best['tokenmill'] * 1e6:.0f} us, "
        f"transformers {best['transformers'] * 1e6:.0f} us ({best['transformers'] / best['tokenmill']:.1f}x)"
    )


if __name__ == "__main__":
    main()
