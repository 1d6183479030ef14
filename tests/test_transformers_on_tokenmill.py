"""transformers on tokenmill: `AutoTokenizer.from_pretrained(directory,
tokenizer_object=tokenmill.tokenizers.Tokenizer.from_file(directory / "tokenizer.json"))` (or
`tokenmill.transformers.from_pretrained(directory)`) gives a transformers tokenizer whose every call
equals the stock one's — `__call__` with padding, truncation, stride, overflow, offsets and tensors,
`batch_decode`, `convert_ids_to_tokens`, `apply_chat_template`, `save_pretrained` — on BERT's
published files, a byte-level BPE with a template and a chat template, a SentencePiece-style BPE
(Llama's conversion) and a Unigram model; and `datasets.Dataset.map` runs it in worker processes."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import MULTILINGUAL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hf_tokenizer_api import TEXTS, _bert, _byte_level, _unigram

import tokenmill.transformers

transformers = pytest.importorskip("transformers")

CHATML = (
    "{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}"
)


def _directory(kind: str, root: Path) -> Path:
    """A model directory as transformers saves one: tokenizer.json and tokenizer_config.json."""
    where = root / kind
    where.mkdir()
    if kind == "bert":
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
            shutil.copy(_bert().parent / name, where / name)
        return where
    if kind == "llama":
        spm = pytest.importorskip("sentencepiece")
        with open(root / "tokenizer.model", "wb") as out:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(MULTILINGUAL * 20),
                model_writer=out,
                model_type="bpe",
                vocab_size=600,
                byte_fallback=True,
                character_coverage=1.0,
            )
        shutil.copy(root / "tokenizer.model", where / "tokenizer.model")
        transformers.LlamaTokenizerFast.from_pretrained(str(where), legacy=False).save_pretrained(str(where))
        return where
    made = _byte_level(root) if kind == "byte_level" else _unigram(root)
    shutil.move(made, where / "tokenizer.json")
    config: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 64}
    if kind == "byte_level":
        config |= {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "chat_template": CHATML}
    else:
        config |= {"unk_token": "<unk>", "pad_token": "<pad>"}
    (where / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return where


@pytest.fixture(scope="module", params=["bert", "byte_level", "llama", "unigram"])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    where = _directory(request.param, tmp_path_factory.mktemp("model"))
    stock = transformers.AutoTokenizer.from_pretrained(str(where))
    ours = tokenmill.transformers.from_pretrained(where)
    assert type(ours._tokenizer).__module__.startswith("tokenmill")
    for tok in (ours, stock):
        if tok.pad_token is None:  # Llama's has none: padding needs one
            tok.pad_token = tok.unk_token
    return ours, stock


def _as_lists(batch: Any) -> dict[str, Any]:
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in batch.items()}


CALLS = [
    {},
    {"padding": True},
    {"padding": "max_length", "max_length": 24, "truncation": True},
    {"truncation": True, "max_length": 14, "stride": 2, "return_overflowing_tokens": True},
    {"return_offsets_mapping": True, "return_special_tokens_mask": True, "return_length": True},
    {"padding": True, "truncation": True, "return_tensors": "np"},
    {"add_special_tokens": False, "padding": "longest", "pad_to_multiple_of": 8},
    {"split_special_tokens": True, "return_offsets_mapping": True},
]


@pytest.mark.parametrize("options", CALLS)
def test_calls_equal_the_stock_tokenizers(pair: tuple[Any, Any], options: dict[str, Any]) -> None:
    ours, stock = pair
    texts = [t for t in TEXTS if t] + MULTILINGUAL[:3]
    assert _as_lists(ours(texts, **options)) == _as_lists(stock(texts, **options))
    assert _as_lists(ours(texts[0], texts[1], **options)) == _as_lists(stock(texts[0], texts[1], **options))
    assert _as_lists(ours(texts[:3], texts[3:6], **options)) == _as_lists(stock(texts[:3], texts[3:6], **options))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=40), min_size=1, max_size=4), st.booleans())
def test_hypothesis_texts_and_decoding(pair: tuple[Any, Any], texts: list[str], skip: bool) -> None:
    ours, stock = pair
    assert _as_lists(ours(texts, padding=True)) == _as_lists(stock(texts, padding=True))
    ids = stock(texts)["input_ids"]
    assert ours.batch_decode(ids, skip_special_tokens=skip) == stock.batch_decode(ids, skip_special_tokens=skip)
    assert [ours.convert_ids_to_tokens(i) for i in ids] == [stock.convert_ids_to_tokens(i) for i in ids]
    assert [ours.tokenize(t) for t in texts] == [stock.tokenize(t) for t in texts]


def test_chat_templates_and_saving(pair: tuple[Any, Any], tmp_path: Path) -> None:
    ours, stock = pair
    if stock.chat_template is not None:
        messages = [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi! 東京"}]
        for generation in (False, True):
            kwargs = {"add_generation_prompt": generation}
            assert ours.apply_chat_template(messages, **kwargs) == stock.apply_chat_template(messages, **kwargs)
            text = stock.apply_chat_template(messages, tokenize=False, **kwargs)
            assert ours.apply_chat_template(messages, tokenize=False, **kwargs) == text
    ours.save_pretrained(str(tmp_path / "ours"))
    stock.save_pretrained(str(tmp_path / "stock"))
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        mine, theirs = tmp_path / "ours" / name, tmp_path / "stock" / name
        assert mine.exists() == theirs.exists(), name
        if theirs.exists():
            assert _close(
                json.loads(mine.read_text(encoding="utf-8")), json.loads(theirs.read_text(encoding="utf-8"))
            ), name
    again = tokenmill.transformers.from_pretrained(tmp_path / "ours")
    assert again(TEXTS[0])["input_ids"] == stock(TEXTS[0])["input_ids"]


def _close(a: Any, b: Any) -> bool:
    """Equal JSON, floats to 1e-12: tokenizers' JSON reader rounds Unigram scores in their last
    digits on the way through, tokenmill keeps the file's."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_datasets_map_in_worker_processes(pair: tuple[Any, Any]) -> None:
    datasets = pytest.importorskip("datasets")
    ours, stock = pair
    data = datasets.Dataset.from_dict({"text": [t for t in TEXTS if t] * 8})

    def tokenize(tok: Any) -> Any:
        return data.map(lambda b: tok(b["text"], truncation=True, max_length=16), batched=True, num_proc=2)

    assert tokenize(ours)["input_ids"] == tokenize(stock)["input_ids"]
