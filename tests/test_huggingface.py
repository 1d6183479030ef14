"""Hugging Face tokenizer.json and GPT-2 vocab.json + merges.txt: loading gives the library's ids;
tokenizers written by tokenmill load in `tokenizers` and `transformers` and encode identically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers
from tokenizers import Tokenizer as HFTokenizer
from vocab_files import vocabulary_path

import tokenmill
from tokenmill.pretokenize_patterns import CL100K_ONIGURUMA

SPECIALS = ["<|endoftext|>", "<|pad|>"]

PRE_TOKENIZERS = {
    "bytelevel": lambda: pre_tokenizers.ByteLevel(add_prefix_space=False),
    "bytelevel-prefix": lambda: pre_tokenizers.ByteLevel(add_prefix_space=True),
    "split-cl100k": lambda: pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CL100K_ONIGURUMA), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    ),
    "split-custom": lambda: pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"[A-Za-z]+|[0-9]{1,2}"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    ),
}


def hf_trained(kind: str, texts: list[str]) -> HFTokenizer:
    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = PRE_TOKENIZERS[kind]()
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


@pytest.fixture(scope="module", params=sorted(PRE_TOKENIZERS))
def loaded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, stdlib_text: str, multilingual_text: str
):  # type: ignore[no-untyped-def]
    hf = hf_trained(request.param, [stdlib_text[:300_000], multilingual_text])
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    hf.save(str(path))
    return tokenmill.Tokenizer.from_huggingface(path), hf


def hf_ids(hf: HFTokenizer, text: str) -> list[int]:
    return hf.encode(text, add_special_tokens=False).ids


def test_loaded_tokenizer_equals_hf_on_real_text(loaded, stdlib_text: str, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = loaded
    for text in [
        stdlib_text[300_000:400_000],
        multilingual_text,
        *multilingual_text.splitlines(),
        "a<|endoftext|>b <|pad|>",
    ]:
        assert tok.encode(text, allowed_special="all") == hf_ids(hf, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn")), max_size=60))
def test_loaded_tokenizer_equals_hf_on_generated_text(loaded, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = loaded
    assert tok.encode(text, allowed_special="all") == hf_ids(hf, text)


def test_gpt2_vocab_and_merges(tmp_path: Path, stdlib_text: str, multilingual_text: str) -> None:
    hf = hf_trained("bytelevel", [stdlib_text[:300_000]])
    vocab, merges = hf.model.save(str(tmp_path))
    tok = tokenmill.Tokenizer.from_gpt2(vocab, merges)
    assert tok.pattern == "gpt2"
    for text in [stdlib_text[300_000:350_000], multilingual_text]:
        assert tok.encode(text, allowed_special="all") == hf_ids(hf, text)


@pytest.fixture(scope="module")
def cl100k() -> tokenmill.Tokenizer:
    return tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base")


def test_export_of_tiktoken_vocabulary(
    cl100k: tokenmill.Tokenizer, tmp_path: Path, stdlib_text: str, multilingual_text: str
) -> None:
    path = tmp_path / "cl100k.json"
    cl100k.to_huggingface(path)
    hf = HFTokenizer.from_file(str(path))
    for text in [stdlib_text[:60_000], multilingual_text, "x<|endoftext|>y"]:
        assert hf_ids(hf, text) == cl100k.encode(text, allowed_special="all")
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_file=str(path))
    assert fast.encode(multilingual_text, add_special_tokens=False) == cl100k.encode(multilingual_text)
    again = tokenmill.Tokenizer.from_huggingface(path)
    assert again.pattern == "cl100k" and again.encode(stdlib_text[:60_000]) == cl100k.encode(stdlib_text[:60_000])


@pytest.fixture(scope="module")
def cl100k_hf(cl100k: tokenmill.Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> HFTokenizer:
    path = tmp_path_factory.mktemp("export") / "cl100k.json"
    cl100k.to_huggingface(path)
    return HFTokenizer.from_file(str(path))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn")), max_size=60))
def test_export_of_tiktoken_vocabulary_on_generated_text(
    cl100k: tokenmill.Tokenizer, cl100k_hf: HFTokenizer, text: str
) -> None:
    # Hugging Face matches added tokens anywhere in text, as tiktoken does with allowed_special="all"
    # (generated text can spell "<|fim_prefix|>").
    assert hf_ids(cl100k_hf, text) == cl100k.encode(text, allowed_special="all")


@pytest.mark.parametrize("pattern", ["gpt2", "o200k", "whitespace"])
def test_export_of_trained_vocabulary(tmp_path: Path, stdlib_text: str, multilingual_text: str, pattern: str) -> None:
    tok = tokenmill.train_bpe(
        [stdlib_text[:200_000], multilingual_text],
        vocab_size=700,
        pattern=pattern,
        special_tokens=SPECIALS,
        normalizer="nfc",
    )
    path = tmp_path / "t.json"
    tok.to_huggingface(path)
    hf = HFTokenizer.from_file(str(path))
    for text in [stdlib_text[200_000:260_000], multilingual_text, "a<|pad|>b"]:
        assert hf_ids(hf, text) == tok.encode(text, allowed_special="all")
    back = tokenmill.Tokenizer.from_huggingface(path)
    assert back.merges == tok.merges and back.special_tokens == tok.special_tokens


def test_unsupported_and_broken_files(tmp_path: Path) -> None:
    wordlevel = HFTokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    wl = tmp_path / "wl.json"
    wordlevel.save(str(wl))
    assert tokenmill.Tokenizer.from_huggingface(wl).encode("a") == wordlevel.encode("a").ids
    # Without its unknown token, an unknown word is an error, as tokenizers raises one.
    no_unk = HFTokenizer(models.WordLevel({"a": 0}))
    no_unk.save(str(wl))
    loaded = tokenmill.Tokenizer.from_huggingface(wl)
    assert loaded.encode("a") == no_unk.encode("a").ids
    with pytest.raises(Exception, match="WordLevel"):
        no_unk.encode("b")
    with pytest.raises(tokenmill.OutOfVocabularyError, match='word "b" is not in the vocabulary'):
        loaded.encode("b")
    wordpiece = HFTokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    wp = tmp_path / "wp.json"
    wordpiece.save(str(wp))
    # No pre-tokenizer: the whole text is one word, as tokenizers reads it.
    loaded = tokenmill.Tokenizer.from_huggingface(wp)
    for text in ["a", "aa", "a a", "", "b"]:
        assert loaded.encode(text) == wordpiece.encode(text).ids, text
    broken = tmp_path / "broken.json"
    broken.write_text('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [')
    with pytest.raises(tokenmill.FormatError, match="broken.json: not a valid JSON file"):
        tokenmill.Tokenizer.from_huggingface(broken)
    charlevel = tmp_path / "char.json"
    charlevel.write_text(
        json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "Whitespace"}})
    )
    # Characters the vocabulary lacks, with no unknown token, are left out (as tokenizers does).
    loaded = tokenmill.Tokenizer.from_huggingface(charlevel)
    for text in ["a", "a b a", "bab", ""]:
        assert loaded.encode(text) == HFTokenizer.from_file(str(charlevel)).encode(text).ids, text
    charlevel.write_text(
        json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "Nonesuch"}})
    )
    with pytest.raises(tokenmill.FormatError, match="Nonesuch"):
        tokenmill.Tokenizer.from_huggingface(charlevel)
    chars = tokenmill.train_bpe(["abc abd"], num_merges=1, byte_level=False)
    with pytest.raises(tokenmill.ConfigError, match="byte-level"):
        chars.to_huggingface(tmp_path / "out.json")


# Llama 3 and Qwen as Hugging Face ships them: byte-level BPE with a merge list, whose long
# pieces (runs of CJK characters) go to the backtracking encoder like tiktoken vocabularies do.
CJK_RUNS = st.lists(
    st.one_of(st.sampled_from(["日本語", "のテキスト", "中文字符", "、", "。", " ", "漢"]), st.text(max_size=4)),
    max_size=20,
).map("".join)


@pytest.fixture(scope="module", params=["llama3", "qwen3"])
def merge_list_model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from vocab_files import open_model_encoding, open_model_vocabulary

    ranks, special = open_model_vocabulary(request.param)
    path = tmp_path_factory.mktemp("merges") / "tokenizer.json"
    tokenmill.Tokenizer.from_tiktoken(ranks, pattern=request.param, special_tokens=special).to_huggingface(path)
    loaded = tokenmill.Tokenizer.from_huggingface(path)
    assert not loaded._core.is_rank_based  # the merge-list route, not the ranks
    return loaded, open_model_encoding(request.param)


def test_merge_list_models_equal_tiktoken_on_long_pieces(merge_list_model, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, reference = merge_list_model
    docs = [multilingual_text[i : i + 2000] for i in range(0, len(multilingual_text), 2000)]
    assert tok.encode_batch(docs) == [reference.encode_ordinary(d) for d in docs]


@settings(max_examples=200, deadline=None)
@given(text=CJK_RUNS)
def test_merge_list_models_equal_tiktoken_on_generated_cjk(merge_list_model, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, reference = merge_list_model
    assert tok.encode_ordinary(text) == reference.encode_ordinary(text)


def test_long_tokens_encode_as_tiktoken_does(merge_list_model) -> None:  # type: ignore[no-untyped-def]
    """Every token over 12 bytes, as text, through both routes (merge list and ranks): long
    pieces skip the whole-piece look-up, so the tokens merging cannot reach (Llama 3 has 122
    such long ones) must still come out whole, as tiktoken's rule has them."""
    from vocab_files import open_model_vocabulary

    tok, reference = merge_list_model
    ranks, special = open_model_vocabulary(reference.name)
    by_ranks = tokenmill.Tokenizer.from_tiktoken(ranks, pattern=reference.name, special_tokens=special)
    texts = []
    for raw in reference.token_byte_values():
        if len(raw) > 12:
            try:
                texts.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                continue
    assert len(texts) > 1000
    expected = [reference.encode_ordinary(t) for t in texts]
    assert tok.encode_batch(texts) == expected
    assert by_ranks.encode_batch(texts) == expected


# GPT-2's printable spelling of the bytes UTF-8 never produces (0xC0, 0xC1, 0xF5-0xFF).
NEVER_IN_UTF8 = ["À", "Á"] + [chr(b) for b in range(0xF5, 0x100)]


def test_a_vocabulary_without_the_bytes_utf8_never_produces_loads(
    tmp_path: Path, stdlib_text: str, multilingual_text: str
) -> None:
    """GPT-NeoX's byte-level vocabulary lacks those 13 bytes; `tokenizers` loads it, and so must
    tokenmill, with the same ids on every text (text never holds those bytes)."""
    hf = hf_trained("bytelevel", [stdlib_text[:100_000], multilingual_text])
    doc = json.loads(hf.to_str())
    vocab = doc["model"]["vocab"]
    assert all(c in vocab for c in NEVER_IN_UTF8)
    for c in NEVER_IN_UTF8:
        del vocab[c]
    doc["model"]["merges"] = [m for m in doc["model"]["merges"] if not set("".join(m)) & set(NEVER_IN_UTF8)]
    path = tmp_path / "neox.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    theirs = HFTokenizer.from_file(str(path))
    tok = tokenmill.Tokenizer.from_huggingface(path)
    for text in (multilingual_text[:20_000], stdlib_text[-20_000:], "ÿÀ õ\u00ff and \U0001f600"):
        assert tok.encode(text) == hf_ids(theirs, text)
    # Raw bytes that hold one of them have no tokens: a clear error, not a wrong id.
    with pytest.raises(tokenmill.ConfigError, match="0xff"):
        tok._core.encode_piece_bytes(b"ab\xff")
    # A token that spells a missing byte cannot be merged to: refused when loading.
    doc["model"]["vocab"]["a" + NEVER_IN_UTF8[-1]] = max(vocab.values()) + 1
    path.write_text(json.dumps(doc, ensure_ascii=False))
    with pytest.raises(tokenmill.TokenmillError, match="lacks as a token"):
        tokenmill.Tokenizer.from_huggingface(path)


def test_skipping_special_tokens_keeps_added_tokens_that_are_not_special(
    tmp_path: Path, stdlib_text: str, multilingual_text: str
) -> None:
    """Qwen 3's `<think>` is an added token but not `special`: Hugging Face matches it in text and
    keeps it when decoding skips special tokens; so must tokenmill, in `decode`, in a stream,
    and through its own file and a written tokenizer.json."""
    from tokenizers import AddedToken

    hf = hf_trained("bytelevel", [stdlib_text[:100_000], multilingual_text])
    hf.add_tokens([AddedToken("<think>", special=False), AddedToken("</think>", special=False)])
    path = tmp_path / "qwen_like.json"
    hf.save(str(path))
    hf = HFTokenizer.from_file(str(path))
    text = "<|endoftext|><think>hmm</think> The answer is 42.<|endoftext|>"
    ids = hf.encode(text).ids
    tok = tokenmill.Tokenizer.from_huggingface(path)
    assert tok.encode(text, allowed_special="all") == ids
    tok.save(tmp_path / "own.json")
    tok.to_huggingface(tmp_path / "back.json")
    for loaded in (
        tok,
        tokenmill.Tokenizer.load(tmp_path / "own.json"),
        tokenmill.Tokenizer.from_huggingface(tmp_path / "back.json"),
    ):
        for skip in (False, True):
            expected = hf.decode(ids, skip_special_tokens=skip)
            assert loaded.decode(ids, skip_special_tokens=skip) == expected, skip
            stream = loaded.decode_stream(skip_special_tokens=skip)
            assert "".join(stream.step(i) for i in ids) + stream.finish() == expected, skip
    assert "<think>" in tok.decode(ids, skip_special_tokens=True)
    assert "<|endoftext|>" not in tok.decode(ids, skip_special_tokens=True)


def test_token_strings_are_the_vocabularys(loaded, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    """`Encoding.tokens`, `id_to_token` and `tokenize` spell tokens as the file does (`Ġworld`),
    as `tokenizers` and transformers' `convert_ids_to_tokens` do; `token_to_id` reads them back."""
    tok, hf = loaded
    for text in [multilingual_text[:3000], "Hello world <|endoftext|> \t\n x"]:
        theirs = hf.encode(text, add_special_tokens=False)
        assert tok.encode_for_model(text, add_special_tokens=False).tokens == theirs.tokens
    for i in range(hf.get_vocab_size()):
        spelled = hf.id_to_token(i)
        assert tok.id_to_token(i) == spelled
        assert tok.token_to_id(spelled) == i
    assert tok.tokenize("Hello world") == hf.encode("Hello world", add_special_tokens=False).tokens


def saved_three_ways(hf: HFTokenizer, tmp: Path) -> tuple[HFTokenizer, list[tokenmill.Tokenizer]]:
    """`hf` saved and read back by tokenizers; tokenmill's tokenizer from that file, from its own
    file, and from the tokenizer.json it writes back."""
    path = tmp / "tokenizer.json"
    hf.save(str(path))
    tok = tokenmill.Tokenizer.from_huggingface(path)
    tok.save(tmp / "own.json")
    tok.to_huggingface(tmp / "back.json")
    loaded = [tok, tokenmill.Tokenizer.load(tmp / "own.json"), tokenmill.Tokenizer.from_huggingface(tmp / "back.json")]
    return HFTokenizer.from_file(str(path)), loaded


def test_added_tokens_that_take_in_whitespace(tmp_path: Path, stdlib_text: str, multilingual_text: str) -> None:
    """RoBERTa's `<mask>` takes in the spaces before it (`lstrip`); a token may take in those after
    it (`rstrip`): ids and offsets as `tokenizers` gives them, kept by tokenmill's file and written
    back to tokenizer.json."""
    from tokenizers import AddedToken

    hf = hf_trained("bytelevel", [stdlib_text[:100_000], multilingual_text])
    hf.add_special_tokens([AddedToken("<mask>", lstrip=True), AddedToken("<sep>", rstrip=True)])
    hf, loaded_all = saved_three_ways(hf, tmp_path)
    texts = ["Hello <mask>!", "a  \t<mask><mask> b<sep>  \n c", "<mask> x <sep>", "x<sep>", "  <mask>  "]
    for loaded in loaded_all:
        for text in texts:
            theirs = hf.encode(text, add_special_tokens=False)
            assert loaded.encode(text, allowed_special="all") == theirs.ids, text
            ours = loaded.encode_for_model(text, add_special_tokens=False)
            assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets), text


@settings(max_examples=150, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["<m>", "ony", "pony", " ", "_", "a", "1", "é", ",", "<m>ony", "\n", "ony<m>"]), max_size=10
    ).map("".join)
)
def test_single_word_added_tokens(single_word_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    """An added token marked `single_word` matches only with no word character (`\\w`) right
    before or after it, judged on the whole text as `tokenizers` judges it."""
    hf, loaded = single_word_pair
    theirs = hf.encode(text, add_special_tokens=False)
    for tok in loaded:
        ours = tok.encode_for_model(text, add_special_tokens=False)
        assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets), text


@pytest.fixture(scope="module")
def single_word_pair(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str, multilingual_text: str):  # type: ignore[no-untyped-def]
    from tokenizers import AddedToken

    hf = hf_trained("bytelevel", [stdlib_text[:50_000], multilingual_text])
    hf.add_special_tokens([AddedToken("ony", single_word=True), AddedToken("<m>", single_word=True, lstrip=True)])
    return saved_three_ways(hf, tmp_path_factory.mktemp("single"))
