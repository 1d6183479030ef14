"""Model inputs equal Hugging Face `tokenizers`' on the same vocabulary and settings: ids, type
ids, masks, offsets, words and overflowing windows, for every post-processor type, truncation
strategy and side, and padding."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

import tokenmill

SPECIALS = ["<s>", "</s>", "<pad>", "<|endoftext|>"]
# As the other comparisons with Hugging Face: its character tables differ from ours on
# unassigned code points.
ASSIGNED = st.characters(exclude_categories=("Cs", "Cn"))


@pytest.fixture(scope="module")
def pair_of(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str, multilingual_text: str):  # type: ignore[no-untyped-def]
    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train_from_iterator([stdlib_text[:200_000], multilingual_text], trainer)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    hf.save(str(path))
    return path


def fresh(path) -> tuple[tokenmill.Tokenizer, HFTokenizer]:  # type: ignore[no-untyped-def]
    return tokenmill.Tokenizer.from_huggingface(path), HFTokenizer.from_file(str(path))


def configure(name: str, tok: tokenmill.Tokenizer, hf: HFTokenizer) -> None:
    s, e = hf.token_to_id("<s>"), hf.token_to_id("</s>")
    template = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1", special_tokens=[("<s>", s), ("</s>", e)]
    )
    if name == "template":
        hf.post_processor = template
        tok.set_template("<s> $A </s>", "<s> $A </s> $B:1 </s>:1")
    elif name == "bos-only":
        hf.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[("<s>", s)]
        )
        tok.set_template("<s> $A", "<s> $A <s>:1 $B:1")
    elif name == "bert":
        hf.post_processor = processors.BertProcessing(("</s>", e), ("<s>", s))
        tok.post_processor = {"type": "bert", "cls": s, "sep": e}
    elif name.startswith("roberta"):
        prefix = name.endswith("prefix")
        hf.post_processor = processors.RobertaProcessing(("</s>", e), ("<s>", s), add_prefix_space=prefix)
        tok.post_processor = {"type": "roberta", "cls": s, "sep": e, "trim_offsets": True, "add_prefix_space": prefix}
    elif name == "bytelevel":
        hf.post_processor = processors.ByteLevel(trim_offsets=True)
        tok.post_processor = {"type": "byte_level", "trim_offsets": True, "add_prefix_space": True}
    elif name == "sequence":
        hf.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=True), template])
        tok.set_template("<s> $A </s>", "<s> $A </s> $B:1 </s>:1")
        ours = tok.post_processor
        tok.post_processor = {
            "type": "sequence",
            "processors": [{"type": "byte_level", "trim_offsets": True, "add_prefix_space": True}, ours],
        }


def fields(e: Any, depth: int = 0) -> dict[str, Any]:
    out = {
        "ids": e.ids,
        "type_ids": e.type_ids,
        "attention_mask": e.attention_mask,
        "special_tokens_mask": e.special_tokens_mask,
        "offsets": [tuple(o) for o in e.offsets],
        "word_ids": e.word_ids,
        "sequence_ids": e.sequence_ids,
    }
    if depth < 2:
        out["overflowing"] = [fields(o, depth + 1) for o in e.overflowing]
    return out


PROCESSORS = ["none", "template", "bos-only", "bert", "roberta", "roberta-prefix", "bytelevel", "sequence"]
TEXTS = [
    "Hello world, this is a test of the model-input stage.",
    "東京は日本の首都で、人口は約1400万人です。 Emoji: 👍🏽 👨‍👩‍👧‍👦 done.\r\n\tTabs",
    "  leading spaces and <|endoftext|> a special token   ",
    "Combining: e\u0301 a\u0308 and ZWJ\u200dtext",
    "",
]


@pytest.mark.parametrize("processor", PROCESSORS)
def test_single_and_pair_without_truncation(pair_of, processor: str, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = fresh(pair_of)
    configure(processor, tok, hf)
    for text in [*TEXTS, multilingual_text]:
        for add in (True, False):
            assert fields(tok.encode_for_model(text, add_special_tokens=add)) == fields(
                hf.encode(text, add_special_tokens=add)
            ), (text, add)
            assert fields(tok.encode_for_model(text, TEXTS[0], add_special_tokens=add)) == fields(
                hf.encode(text, TEXTS[0], add_special_tokens=add)
            )


@pytest.mark.parametrize("processor", ["none", "template", "bert", "roberta", "sequence"])
@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
@pytest.mark.parametrize("direction", ["right", "left"])
def test_truncation_with_stride_and_padding(pair_of, processor: str, strategy: str, direction: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = fresh(pair_of)
    configure(processor, tok, hf)
    hf.enable_truncation(max_length=14, stride=3, strategy=strategy, direction=direction)
    tok.enable_truncation(14, stride=3, strategy=strategy, direction=direction)
    pad = hf.token_to_id("<pad>")
    hf.enable_padding(pad_id=pad, pad_token="<pad>", pad_to_multiple_of=8, direction=direction)
    tok.enable_padding(pad_id=pad, pad_token="<pad>", pad_to_multiple_of=8, direction=direction)
    long_a = " ".join(TEXTS[:2]) * 2
    long_b = TEXTS[3] * 2
    for a, b in [(long_a, None), (long_a, long_b), (TEXTS[0], long_b), (long_b, TEXTS[0])]:
        try:
            expected = fields(hf.encode(a, b))
        except Exception:  # Hugging Face refuses (e.g. only_second without a pair)
            with pytest.raises(tokenmill.TokenmillError):
                tok.encode_for_model(a, b)
            continue
        assert fields(tok.encode_for_model(a, b)) == expected, (a, b)
    batch = [TEXTS[0], long_a, TEXTS[2]]
    for pairs in (None, [long_b] * 3):
        try:
            expected_batch = hf.encode_batch(batch if pairs is None else list(zip(batch, pairs, strict=True)))
        except Exception:
            with pytest.raises(tokenmill.TokenmillError):
                tok.encode_batch_for_model(batch, pairs)
            continue
        got = tok.encode_batch_for_model(batch, pairs)
        assert [fields(e) for e in got] == [fields(e) for e in expected_batch]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60, alphabet=ASSIGNED), st.text(max_size=30, alphabet=ASSIGNED))
def test_generated_text_with_template_and_windows(pair_of, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = fresh_cached(pair_of)
    assert fields(tok.encode_for_model(a, b)) == fields(hf.encode(a, b))
    assert fields(tok.encode_for_model(a)) == fields(hf.encode(a))


_CACHE: dict[str, tuple[tokenmill.Tokenizer, HFTokenizer]] = {}


def fresh_cached(path) -> tuple[tokenmill.Tokenizer, HFTokenizer]:  # type: ignore[no-untyped-def]
    if str(path) not in _CACHE:
        tok, hf = fresh(path)
        configure("sequence", tok, hf)
        hf.enable_truncation(max_length=9, stride=2)
        tok.enable_truncation(9, stride=2)
        _CACHE[str(path)] = (tok, hf)
    return _CACHE[str(path)]


@pytest.mark.parametrize("processor", ["template", "bos-only", "bert", "roberta-prefix", "bytelevel", "sequence"])
def test_tokenizer_json_keeps_post_processor_truncation_and_padding(pair_of, tmp_path, processor: str) -> None:  # type: ignore[no-untyped-def]
    """Settings saved by Hugging Face are read on import and written on export."""
    tok, hf = fresh(pair_of)
    configure(processor, tok, hf)
    hf.enable_truncation(max_length=20, stride=4, strategy="only_first", direction="left")
    pad = hf.token_to_id("<pad>")
    hf.enable_padding(pad_id=pad, pad_token="<pad>", length=24, direction="left")
    hf.save(str(tmp_path / "with_settings.json"))
    loaded = tokenmill.Tokenizer.from_huggingface(tmp_path / "with_settings.json")
    assert loaded.truncation == {"max_length": 20, "stride": 4, "strategy": "only_first", "side": "left"}
    assert loaded.padding is not None and loaded.padding["length"] == 24
    long_text = " ".join(TEXTS[:3]) * 3
    for a, b in [(TEXTS[0], None), (long_text, None), (long_text, "short pair")]:
        assert fields(loaded.encode_for_model(a, b)) == fields(hf.encode(a, b))
    # ...and kept by tokenmill's own file, and written back for Hugging Face.
    loaded.save(tmp_path / "tm.json")
    again = tokenmill.Tokenizer.load(tmp_path / "tm.json")
    assert again.post_processor == loaded.post_processor and again.padding == loaded.padding
    again.to_huggingface(tmp_path / "back.json")
    # The three sections are written back as Hugging Face wrote them.
    theirs = json.loads((tmp_path / "with_settings.json").read_text())
    ours = json.loads((tmp_path / "back.json").read_text())
    for section in ("post_processor", "truncation", "padding"):
        assert ours[section] == theirs[section], section
    back = HFTokenizer.from_file(str(tmp_path / "back.json"))
    for a, b in [(TEXTS[1], None), (long_text, "short pair")]:
        assert fields(back.encode(a, b)) == fields(hf.encode(a, b))
    # Settings can be switched off.
    loaded.no_truncation()
    loaded.no_padding()
    assert len(loaded.encode_for_model(long_text)) > 24


def test_a_llama3_style_bos_template_survives_import(pair_of, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, hf = fresh(pair_of)
    bos = hf.token_to_id("<|endoftext|>")
    hf.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="<|endoftext|> $A",
                pair="<|endoftext|> $A <|endoftext|>:1 $B:1",
                special_tokens=[("<|endoftext|>", bos)],
            ),
        ]
    )
    hf.save(str(tmp_path / "llama.json"))
    tok = tokenmill.Tokenizer.from_huggingface(tmp_path / "llama.json")
    assert tok.encode_for_model("hello").ids[0] == bos
    assert (
        tok.encode_for_model("hello", add_special_tokens=False).ids == hf.encode("hello", add_special_tokens=False).ids
    )
    assert tok("hello")["input_ids"] == hf.encode("hello").ids


def test_bad_settings_are_clear_errors(pair_of) -> None:  # type: ignore[no-untyped-def]
    tok, _ = fresh(pair_of)
    with pytest.raises(tokenmill.ConfigError, match="not in the vocabulary"):
        tok.set_template("[CLS] $A [SEP]")
    tok.set_template("<s> $A </s>", "<s> $A </s> $B:1 </s>:1")
    with pytest.raises(tokenmill.ConfigError, match="shorter than the 2 special tokens"):
        tok.enable_truncation(1)
    with pytest.raises(tokenmill.ConfigError, match="stride"):
        tok.enable_truncation(8, stride=8)
    with pytest.raises(tokenmill.ConfigError, match="must use"):
        tok.set_template("<s> $A $A")
    tok.enable_truncation(5, stride=2)
    with pytest.raises(tokenmill.ConfigError, match="stride"):
        tok.encode_for_model("a b c d e f g h i j", "k l m n o p q r")  # 1 token left for each
    with pytest.raises(tokenmill.ConfigError, match="padding"):
        tok(["a", "a b c"], return_tensors="np")


CALLS = [
    {},
    {"padding": True},
    {"padding": "max_length", "max_length": 40},
    {"truncation": True, "max_length": 12},
    {"truncation": True, "max_length": 12, "stride": 3, "return_overflowing_tokens": True, "padding": True},
    {"truncation": "only_first", "max_length": 16, "padding": True, "pad_to_multiple_of": 8},
    {"padding": True, "return_offsets_mapping": True, "return_special_tokens_mask": True, "return_length": True},
    {"padding": True, "padding_side": "left", "truncation": True, "max_length": 10},
    {"add_special_tokens": False, "padding": True},
]


@pytest.mark.parametrize("kwargs", CALLS)
@pytest.mark.parametrize("tensors", [None, "np"])
def test_call_equals_transformers(pair_of, tmp_path, kwargs: dict[str, Any], tensors: str | None) -> None:  # type: ignore[no-untyped-def]
    import numpy as np
    from transformers import PreTrainedTokenizerFast

    tok, hf = fresh(pair_of)
    configure("template", tok, hf)
    hf.save(str(tmp_path / "t.json"))
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "t.json"), pad_token="<pad>")
    tok.enable_padding(pad_token="<pad>")
    tok.no_padding()  # the call's arguments decide; the pad token is remembered from before
    texts = [TEXTS[0], TEXTS[1] * 2, TEXTS[3]]
    pairs = ["a short second text", "another", TEXTS[2]]
    for args in ((texts[0],), (texts,), (texts, pairs)):
        if tensors == "np" and not (kwargs.get("padding") or len(args[0]) == 1 or isinstance(args[0], str)):
            continue
        if tensors == "np" and isinstance(args[0], str) and kwargs.get("return_overflowing_tokens"):
            continue
        kwargs = {**kwargs, "return_token_type_ids": True}
        try:
            expected = dict(fast(*args, return_tensors=tensors, **kwargs))
        except Exception:
            with pytest.raises(tokenmill.TokenmillError):
                tok(*args, return_tensors=tensors, **kwargs)
            continue
        if tensors == "np" and any(np.asarray(v).dtype == object for v in expected.values()):
            # transformers gives ragged object arrays here; tokenmill says how to get real ones.
            with pytest.raises(tokenmill.ConfigError, match="differ in length"):
                tok(*args, return_tensors=tensors, **kwargs)
            continue
        got = tok(*args, return_tensors=tensors, **kwargs)
        assert sorted(got) == sorted(expected), args
        for key, value in expected.items():
            assert plain(got[key]) == plain(value), key


def plain(value: Any) -> Any:
    """Arrays, tuples and lists as nested lists, to compare outputs of either shape."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def test_absurd_padding_is_refused(pair_of) -> None:  # type: ignore[no-untyped-def]
    tok, _ = fresh(pair_of)
    for kwargs in ({"length": 2**40}, {"pad_to_multiple_of": 2**63}):
        with pytest.raises(tokenmill.ConfigError, match="larger than"):
            tok.enable_padding(pad_token="<pad>", **kwargs)
    with pytest.raises(tokenmill.ConfigError):
        tok(["a"], padding="max_length", max_length=2**62)


def test_settings_are_typed_objects_checked_when_made() -> None:
    """Truncation and padding are made (and checked) once, in Rust; equal settings are equal
    and hash alike, so a call's settings can key a cache."""
    t = tokenmill._core.Truncation(16, stride=2, strategy="only_first", direction="left")
    assert t == tokenmill._core.Truncation(16, stride=2, strategy="only_first", direction="left")
    assert hash(t) == hash(tokenmill._core.Truncation(16, stride=2, strategy="only_first", direction="left"))
    assert t != tokenmill._core.Truncation(16)
    assert t.as_dict() == {"max_length": 16, "stride": 2, "strategy": "only_first", "side": "left"}
    p = tokenmill._core.Padding(0, "<pad>", length=8, direction="left")
    assert p.as_dict() == {
        "length": 8,
        "multiple_of": None,
        "pad_id": 0,
        "pad_type_id": 0,
        "pad_token": "<pad>",
        "side": "left",
    }
    for bad in (
        lambda: tokenmill._core.Truncation(-1),
        lambda: tokenmill._core.Truncation(True),
        lambda: tokenmill._core.Truncation(8, stride="2"),
        lambda: tokenmill._core.Truncation(8, strategy="shortest"),
        lambda: tokenmill._core.Padding(0, "<pad>", length=0),
        lambda: tokenmill._core.Padding(2**32, "<pad>"),
        lambda: tokenmill._core.Padding(0, "<pad>", direction="up"),
    ):
        with pytest.raises(tokenmill.ConfigError):
            bad()


def test_a_call_with_other_settings_leaves_the_tokenizers_own(pair_of) -> None:  # type: ignore[no-untyped-def]
    tok, _ = fresh(pair_of)
    tok.enable_truncation(6)
    text = " ".join(TEXTS)
    assert len(tok(text, truncation=True, max_length=10)["input_ids"]) == 10
    # As transformers: a call's arguments replace the tokenizer's settings (none: no truncation).
    assert len(tok(text)["input_ids"]) > 10
    assert len(tok.encode_for_model(text)) == 6
    assert tok.truncation == {"max_length": 6, "stride": 0, "strategy": "longest_first", "side": "right"}
    # The same call again is served by the core the first one made, and gives the same.
    assert tok(text, truncation=True, max_length=10) == tok(text, truncation=True, max_length=10)
    tok.no_truncation()
    assert tok.truncation is None and len(tok.encode_for_model(text)) > 10


@pytest.mark.parametrize(
    "kwargs", [{"truncation": True}, {"padding": "max_length"}, {"truncation": True, "padding": "max_length"}]
)
def test_a_missing_max_length_is_the_models_own_limit(pair_of, tmp_path, kwargs: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    """As in transformers, truncation or padding to max length without `max_length` use the
    `model_max_length` of the tokenizer_config.json beside the tokenizer.json; without one, the
    error says where the limit would come from."""
    from transformers import PreTrainedTokenizerFast

    tok, hf = fresh(pair_of)
    configure("template", tok, hf)
    hf.save(str(tmp_path / "tokenizer.json"))
    config = {"model_max_length": 9, "pad_token": "<pad>", "tokenizer_class": "PreTrainedTokenizerFast"}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    ours = tokenmill.Tokenizer.from_huggingface(tmp_path / "tokenizer.json")
    ours.enable_padding(pad_token="<pad>")
    ours.no_padding()
    stock = PreTrainedTokenizerFast.from_pretrained(str(tmp_path))
    texts = [TEXTS[0], TEXTS[3], "a"]
    expected = dict(stock(texts, **kwargs))
    got = ours(texts, **kwargs)
    assert {k: plain(got[k]) for k in expected} == {k: plain(v) for k, v in expected.items()}
    (tmp_path / "tokenizer_config.json").unlink()
    with pytest.raises(tokenmill.ConfigError, match="model_max_length"):
        tokenmill.Tokenizer.from_huggingface(tmp_path / "tokenizer.json")(texts, **kwargs)
