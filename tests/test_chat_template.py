"""Chat templates: the same text and ids as transformers' `apply_chat_template` for the built-in
templates and for real templates a PyPI package ships (chat-bricks: Qwen3, DeepSeek-R1), with
multi-turn chats, system messages, tools and the generation prompt; assistant masks; errors."""

from __future__ import annotations

import ast
import importlib.util
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

import tokenmill
from tokenmill.chat import BUILTIN_TEMPLATES

MARKERS = [
    "<|im_start|>",
    "<|im_end|>",
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<s>",
    "</s>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
]
CHATS = [
    [{"role": "user", "content": "hello"}],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello there"},
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "  tell me  "},
    ],
    [
        {"role": "user", "content": "東京は？"},
        {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nA city."},
        {"role": "user", "content": "emoji 👍🏽 ok"},
        {"role": "assistant", "content": "sure"},
    ],
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def real_templates() -> dict[str, str]:
    """Chat templates from the chat-bricks package, read from its source (not imported)."""
    spec = importlib.util.find_spec("chat_bricks")
    assert spec is not None and spec.origin is not None, "test dependency chat-bricks is missing"
    source = (Path(spec.origin).parent / "registry" / "builtin.py").read_text(encoding="utf-8")
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            kw = {k.arg: k.value for k in node.keywords}
            name, template = kw.get("name"), kw.get("chat_template")
            if isinstance(name, ast.Constant) and isinstance(template, ast.Constant):
                found[name.value] = template.value
    return found


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str):  # type: ignore[no-untyped-def]
    from transformers import PreTrainedTokenizerFast

    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500,
        special_tokens=MARKERS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train_from_iterator([stdlib_text[:100_000]], trainer)
    d = tmp_path_factory.mktemp("chat")
    hf.save(str(d / "tokenizer.json"))
    config = {"bos_token": "<|begin_of_text|>", "eos_token": "</s>", "chat_template": BUILTIN_TEMPLATES["llama3"]}
    (d / "tokenizer_config.json").write_text(json.dumps(config))
    fast = PreTrainedTokenizerFast(
        tokenizer_file=str(d / "tokenizer.json"), bos_token="<|begin_of_text|>", eos_token="</s>"
    )
    return tokenmill.Tokenizer.from_huggingface(d / "tokenizer.json"), fast


def expected_ids(fast, chat, template, **kwargs):  # type: ignore[no-untyped-def]
    out = fast.apply_chat_template(chat, chat_template=template, tokenize=True, **kwargs)
    return list(out["input_ids"]) if hasattr(out, "keys") else list(out)


TEMPLATES = {**{f"builtin-{k}": v for k, v in BUILTIN_TEMPLATES.items() if k != "mistral"}, **real_templates()}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("generation_prompt", [False, True])
def test_same_text_and_ids_as_transformers(pair, name: str, generation_prompt: bool) -> None:  # type: ignore[no-untyped-def]
    tok, fast = pair
    template = TEMPLATES[name]
    for chat in CHATS:
        for tools in (None, TOOLS):
            kwargs = dict(add_generation_prompt=generation_prompt, tools=tools)
            text = tok.apply_chat_template(chat, chat_template=template, tokenize=False, **kwargs)
            assert text == fast.apply_chat_template(chat, chat_template=template, tokenize=False, **kwargs)
            ids = tok.apply_chat_template(chat, chat_template=template, **kwargs)
            assert ids == expected_ids(fast, chat, template, **kwargs)


def test_mistral_builtin_alternation(pair) -> None:  # type: ignore[no-untyped-def]
    tok, fast = pair
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "q"}]
    template = BUILTIN_TEMPLATES["mistral"]
    assert tok.apply_chat_template(chat, chat_template="mistral", tokenize=False) == fast.apply_chat_template(
        chat, chat_template=template, tokenize=False
    )
    assert tok.apply_chat_template(chat, chat_template="mistral", tokenize=False).startswith(
        "<|begin_of_text|>[INST] hi"
    )
    with pytest.raises(tokenmill.ConfigError, match="alternate"):
        tok.apply_chat_template(chat[1:], chat_template="mistral")


def test_own_template_from_tokenizer_config_and_pickling(pair) -> None:  # type: ignore[no-untyped-def]
    tok, fast = pair
    assert tok.chat_template == BUILTIN_TEMPLATES["llama3"] and tok.chat_tokens["bos_token"] == "<|begin_of_text|>"
    text = tok.apply_chat_template(CHATS[1], tokenize=False, add_generation_prompt=True)
    assert text == fast.apply_chat_template(
        CHATS[1], chat_template=BUILTIN_TEMPLATES["llama3"], tokenize=False, add_generation_prompt=True
    )
    again = pickle.loads(pickle.dumps(tok))
    assert again.apply_chat_template(CHATS[1], tokenize=False, add_generation_prompt=True) == text


def test_assistant_masks(pair) -> None:  # type: ignore[no-untyped-def]
    tok, fast = pair
    chat = CHATS[1]
    # With {% generation %} markers (built-in chatml): the same mask as transformers.
    ours = tok.apply_chat_template(chat, chat_template="chatml", return_assistant_mask=True)
    theirs = fast.apply_chat_template(
        chat, chat_template=BUILTIN_TEMPLATES["chatml"], return_dict=True, return_assistant_tokens_mask=True
    )
    assert ours["input_ids"] == list(theirs["input_ids"]) and ours["assistant_masks"] == list(theirs["assistant_masks"])
    assert sum(ours["assistant_masks"]) > 0
    # Without markers (llama3, Qwen3): the tokens of the assistant's text, found in the render.
    for template in (BUILTIN_TEMPLATES["llama3"], TEMPLATES["qwen3-instruct"]):
        out = tok.apply_chat_template(chat, chat_template=template, return_assistant_mask=True)
        masked = [i for i, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m]
        assert tok.decode(masked).strip() == "Hi! How can I help?"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=6))
def test_generated_contents(pair, contents: list[str]) -> None:  # type: ignore[no-untyped-def]
    tok, fast = pair
    chat = [{"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(contents)]
    for name in ("chatml", "llama3"):
        template = BUILTIN_TEMPLATES[name]
        assert tok.apply_chat_template(chat, chat_template=name, tokenize=False) == fast.apply_chat_template(
            chat, chat_template=template, tokenize=False
        )


def test_bad_templates_are_clear_errors(pair) -> None:  # type: ignore[no-untyped-def]
    tok, _ = pair
    with pytest.raises(tokenmill.ConfigError, match="does not compile"):
        tok.apply_chat_template(CHATS[0], chat_template="{% for m in messages %}")
    with pytest.raises(tokenmill.ConfigError, match="raised: no way"):
        tok.apply_chat_template(CHATS[0], chat_template="{{ raise_exception('no way') }}")
    bare = tokenmill.Tokenizer.from_tiktoken({bytes([b]): b for b in range(256)}, pattern="cl100k")
    with pytest.raises(tokenmill.ConfigError, match="no chat template"):
        bare.apply_chat_template(CHATS[0])
    with pytest.raises(tokenmill.ConfigError, match="list of dicts"):
        tok.apply_chat_template("hello")  # type: ignore[arg-type]


def test_named_templates_and_chat_template_jinja(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from transformers import PreTrainedTokenizerFast

    tok, fast = pair
    fast.save_pretrained(str(tmp_path))
    config_path = tmp_path / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["chat_template"] = [
        {"name": "default", "template": BUILTIN_TEMPLATES["chatml"]},
        {"name": "tool_use", "template": "{{ tools | tojson }}{% for m in messages %}[{{ m['content'] }}]{% endfor %}"},
    ]
    config_path.write_text(json.dumps(config))
    (tmp_path / "chat_template.jinja").unlink(missing_ok=True)
    ours = tokenmill.Tokenizer.from_huggingface(tmp_path / "tokenizer.json")
    theirs = PreTrainedTokenizerFast.from_pretrained(str(tmp_path))
    for tools in (None, TOOLS):
        text = ours.apply_chat_template(CHATS[1], tools=tools, tokenize=False)
        assert text == theirs.apply_chat_template(CHATS[1], tools=tools, tokenize=False)
    assert ours.apply_chat_template(CHATS[0], chat_template="tool_use", tokenize=False).startswith("null[")
    # A chat_template.jinja beside the files wins over the config's template.
    (tmp_path / "chat_template.jinja").write_text(BUILTIN_TEMPLATES["llama3"])
    ours = tokenmill.Tokenizer.from_huggingface(tmp_path / "tokenizer.json")
    assert ours.chat_template == BUILTIN_TEMPLATES["llama3"]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"tokenizer_config.json": json.dumps({"chat_template": [{"name": "default"}]})},
            r"chat_template\[0\] must be",
        ),
        ({"tokenizer_config.json": json.dumps({"chat_template": ["x"]})}, r"chat_template\[0\] must be"),
        ({"tokenizer_config.json": "{}", "chat_template.jinja": b"\xff{{ x }}"}, "not a readable UTF-8 template"),
    ],
)
def test_a_damaged_template_beside_a_tokenizer_is_a_format_error(tmp_path: Path, files: dict, message: str) -> None:  # type: ignore[type-arg]
    hf = HFTokenizer(models.BPE(vocab={"a": 0, "b": 1}, merges=[]))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel()
    hf.save(str(tmp_path / "tokenizer.json"))
    for name, content in files.items():
        path = tmp_path / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    with pytest.raises(tokenmill.FormatError, match=message):
        tokenmill.load(tmp_path)


HOSTILE_TEMPLATES = [
    ("{{ 10 ** (10 ** 8) }}", "larger than a chat template needs"),
    ("{{ 'a' * 10**10 }}", "too long"),
    ("{{ messages * 10**9 }}", "too long"),
    ("{% for i in range(10**10) %}{% endfor %}", "OverflowError"),
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
    ("{{ messages[0].content + 5 }}", "TypeError"),
    ("{% include 'other.jinja' %}", "the chat template failed"),
    ("{% set x = [] %}{{ x.append(x) }}", "the chat template failed"),
    ("{{ 1 / 0 }}", "ZeroDivisionError"),
]


@pytest.mark.parametrize(("template", "message"), HOSTILE_TEMPLATES)
def test_a_hostile_template_is_a_template_error_bounded_in_time_and_memory(template: str, message: str) -> None:
    tok = tokenmill.train_bpe(iter(["hello world"]), vocab_size=260)
    with pytest.raises(tokenmill.TokenmillError, match=message):
        tok.apply_chat_template([{"role": "user", "content": "hi"}], chat_template=template, tokenize=False)


def test_small_arithmetic_in_a_template_still_works() -> None:
    tok = tokenmill.train_bpe(iter(["hello world"]), vocab_size=260)
    template = "{{ 2 ** 10 }} {{ '-' * 3 }} {{ (messages * 2) | length }} {{ 7 * 6 }}"
    assert tok.apply_chat_template([{"role": "user", "content": "hi"}], chat_template=template, tokenize=False) == (
        "1024 --- 2 42"
    )


@pytest.mark.parametrize(
    "options",
    [
        {"truncation": True, "max_length": 8},
        {"return_tensors": "np"},
        {"return_tensors": "np", "return_dict": True},
        {"tokenizer_kwargs": {"return_length": True}, "return_dict": True},
    ],
)
def test_tokenizing_options_are_honoured_as_transformers_honours_them(pair, options: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    import numpy as np

    tok, fast = pair
    chat, template = CHATS[0], BUILTIN_TEMPLATES["llama3"]
    ours = tok.apply_chat_template(chat, chat_template=template, **options)
    theirs = fast.apply_chat_template(chat, chat_template=template, **options)
    if hasattr(theirs, "keys") and not options.get("return_dict"):
        theirs = theirs["input_ids"]  # transformers 5 returns a dict unless told otherwise
    if hasattr(theirs, "keys"):
        assert sorted(ours) == sorted(k for k in theirs if k != "token_type_ids")
        for key in ours:
            assert np.asarray(ours[key]).tolist() == np.asarray(theirs[key]).tolist(), key
    else:
        assert type(ours) is type(theirs)
        assert np.asarray(ours).tolist() == np.asarray(theirs).tolist()


def test_messages_from_a_generator_and_tools_checked_as_transformers_checks_them(pair) -> None:  # type: ignore[no-untyped-def]
    tok, _ = pair
    chat = CHATS[0]
    assert tok.apply_chat_template(iter(chat), chat_template="chatml", tokenize=False) == tok.apply_chat_template(
        chat, chat_template="chatml", tokenize=False
    )
    for tools in ("get_weather", [5], {"type": "function"}):
        with pytest.raises(tokenmill.ConfigError, match="tools should"):
            tok.apply_chat_template(chat, chat_template="chatml", tools=tools)
