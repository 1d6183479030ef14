"""Hugging Face's splitting pre-tokenizers (Whitespace, WhitespaceSplit, Punctuation, Digits,
CharDelimiterSplit, Split with every behaviour and `invert`, FixedLength, ByteLevel's regex and
Sequences of them) and its WordLevel model, run by tokenmill on files `tokenizers` trains here
(character-level BPE, WordPiece, WordLevel, byte-level BPE): ids, token strings, offsets and
decoding equal to `tokenizers`' own, on real text and generated strings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

import tokenmill

BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]

# Each pre-tokenizer on its own, and sequences as files combine them.
PRE_TOKENIZERS: dict[str, Callable[[], pre_tokenizers.PreTokenizer]] = {
    "Whitespace": pre_tokenizers.Whitespace,
    "WhitespaceSplit": pre_tokenizers.WhitespaceSplit,
    "Bert": pre_tokenizers.BertPreTokenizer,
    "CharDelimiterSplit": lambda: pre_tokenizers.CharDelimiterSplit(" "),
    "FixedLength": lambda: pre_tokenizers.FixedLength(4),
    "UnicodeScripts": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.UnicodeScripts()]
    ),
    **{f"Punctuation-{b}": (lambda b=b: pre_tokenizers.Punctuation(b)) for b in BEHAVIORS},  # type: ignore[misc]
    **{
        f"Split-{b}-{invert}": (lambda b=b, invert=invert: pre_tokenizers.Split(Regex(r"\s+|[,.]"), b, invert))  # type: ignore[misc]
        for b in BEHAVIORS
        for invert in (False, True)
    },
    "Split-string": lambda: pre_tokenizers.Split(" ", "merged_with_next"),
    "Sequence": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.Punctuation()]
    ),
    "Digits-contiguous": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=False)]
    ),
}

TRICKY = st.sampled_from(
    [" ", "  ", "\t", "\n", "a", "the", "Hello", ",", ".", "!!", "'s", "1", "2024", "٣", "é", "e\u0301", "中文"]
    + ["😀", "-", "_"]
)


def _train(kind: str, pre: pre_tokenizers.PreTokenizer, text: str) -> Tokenizer:
    if kind == "bpe":
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False)
    elif kind == "wordlevel":
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        trainer = trainers.WordLevelTrainer(
            vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False
        )
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        trainer = trainers.WordPieceTrainer(
            vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False
        )
        tok.decoder = decoders.WordPiece()
    else:  # byte-level BPE: the file's splits before a ByteLevel step
        tok = Tokenizer(models.BPE())
        trainer = trainers.BpeTrainer(
            vocab_size=600,
            special_tokens=["<|end|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        pre = pre_tokenizers.Sequence([pre, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel()
    tok.pre_tokenizer = pre
    tok.train_from_iterator(text.splitlines(), trainer=trainer)
    return tok


@pytest.fixture(scope="module")
def corpus(stdlib_text: str, multilingual_text: str) -> str:
    return stdlib_text[:150_000] + "\n" + multilingual_text


def _pair(kind: str, name: str, corpus: str, tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    hf = _train(kind, PRE_TOKENIZERS[name](), corpus)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    hf.save(str(path))
    return tokenmill.Tokenizer.from_huggingface(path), Tokenizer.from_file(str(path))


@pytest.fixture(
    scope="module", params=[(k, n) for k in ("bpe", "wordpiece", "wordlevel", "byte_level") for n in PRE_TOKENIZERS]
)
def pair(request: pytest.FixtureRequest, corpus: str, tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    kind, name = request.param
    return _pair(kind, name, corpus, tmp_path_factory)


def _check(tok: tokenmill.Tokenizer, hf: Tokenizer, text: str) -> None:
    theirs = hf.encode(text, add_special_tokens=False)
    ours = tok.encode_for_model(text, add_special_tokens=False)
    assert ours.ids == theirs.ids, text[:200]
    assert ours.tokens == theirs.tokens
    assert ours.offsets == theirs.offsets
    for skip in (False, True):
        assert tok.decode(ours.ids, skip_special_tokens=skip) == hf.decode(theirs.ids, skip_special_tokens=skip)


def test_real_text(pair, stdlib_text: str, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    for text in [multilingual_text, stdlib_text[-20_000:], *multilingual_text.splitlines()[:30]]:
        _check(tok, hf, text)


@settings(max_examples=60, deadline=None)
@given(text=st.lists(TRICKY, max_size=12).map("".join))
def test_generated_text(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, hf = pair
    _check(tok, hf, text)


def test_saved_files_keep_the_pre_tokenizer(
    corpus: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = "Numbers 12,345.67 and words—split, merged!"
    for kind in ("wordpiece", "byte_level", "wordlevel"):
        tok, hf = _pair(kind, "Sequence", corpus, tmp_path_factory)
        tok.save(tmp_path / "own.json")
        again = tokenmill.Tokenizer.load(tmp_path / "own.json")
        assert again.encode(text) == hf.encode(text).ids
        ids = hf.encode(text).ids
        assert again.decode(ids) == hf.decode(ids, skip_special_tokens=False)
        tok.to_huggingface(tmp_path / "tokenizer.json")
        again = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
        assert again.encode(text).ids == hf.encode(text).ids
        assert again.decode(ids) == hf.decode(ids)


@pytest.mark.parametrize("kind", ["wordlevel", "bpe"])
def test_files_written_back(
    kind: str, corpus: str, tmp_path_factory: pytest.TempPathFactory, multilingual_text: str
) -> None:
    """WordLevel and character-level BPE tokenizers written by `to_huggingface` encode and
    decode as the file they came from, for every pre-tokenizer set-up."""
    for name in PRE_TOKENIZERS:
        tok, hf = _pair(kind, name, corpus, tmp_path_factory)
        path = tmp_path_factory.mktemp("back") / "tokenizer.json"
        tok.to_huggingface(path)
        again = Tokenizer.from_file(str(path))
        for text in multilingual_text.splitlines()[:20]:
            ids = hf.encode(text).ids
            assert again.encode(text).ids == ids, name
            assert again.decode(ids) == hf.decode(ids)


def test_a_wordlevel_unknown_token_only_in_the_vocabulary_is_written_back(tmp_path: Path) -> None:
    """An unknown token that is no added token (only the model's vocabulary has it) stays in
    the vocabulary written back: tokenizers refuses a WordLevel model whose unk_token is missing."""
    hf = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(tmp_path / "w.json"))
    tok = tokenmill.Tokenizer.from_huggingface(tmp_path / "w.json")
    assert repr(tok).startswith("<tokenmill.Tokenizer WordLevel")
    tok.to_huggingface(tmp_path / "again.json")
    again = Tokenizer.from_file(str(tmp_path / "again.json"))
    for text in ("hello there world", "unknown words only", "world"):
        assert again.encode(text).ids == hf.encode(text).ids == tok.encode(text)
        assert tokenmill.Tokenizer.from_huggingface(tmp_path / "again.json").encode(text) == tok.encode(text)


def test_unicode_scripts_on_every_code_point() -> None:
    """tokenizers' script table is older than today's Unicode: every code point, next to
    characters of six scripts and in runs of its neighbours, is cut as tokenizers cuts it."""
    pre = pre_tokenizers.UnicodeScripts()
    spec = "hf:" + json.dumps({"type": "UnicodeScripts"})
    code_points = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for k in range(0, len(code_points), 2048):
        chunk = [chr(c) for c in code_points[k : k + 2048]]
        texts = ["".join(chunk)] + [anchor.join(["", *chunk, ""]) for anchor in ["a", "中", "1", "\u0301", "а", "ا"]]
        for text in texts:
            assert tokenmill.split(spec, text) == [p for p, _ in pre.pre_tokenize_str(text)], hex(code_points[k])


def test_components_tokenmill_cannot_run_are_refused_by_name(corpus: str, tmp_path: Path) -> None:
    hf = _train("wordpiece", pre_tokenizers.Whitespace(), corpus[:20_000])
    doc = json.loads(hf.to_str())
    for pre, named in [
        ({"type": "Nonesuch"}, "Nonesuch"),
        ({"type": "Metaspace", "replacement": "_"}, "Metaspace"),
        ({"type": "Split", "pattern": {"Regex": "("}, "behavior": "Removed", "invert": False}, "("),
        ({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways", "invert": False}, "Sideways"),
    ]:
        doc["pre_tokenizer"] = pre
        path = tmp_path / "tokenizer.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(tokenmill.FormatError, match=named.replace("(", r"\(")) as e:
            tokenmill.Tokenizer.from_huggingface(path)
        assert str(path) in str(e.value)


COMPOSING = st.sampled_from(
    ["e", "\u0301", "\u0327", "\u0323", "\u1100", "\u1161", "\u11a8", "가", "\uff76", "\uff9e", "ﬁ", "é", "x", " "]
    + ["Å", "\u212b", "\u0344", "\u0f73", "ǅ", "\u0958", "\u1e9b", "\u0300"]
)


@pytest.fixture(scope="module", params=["NFC", "NFKC", "NFD", "NFKD"])
def unicode_form_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    from tokenizers import normalizers

    # One token per byte: the offsets show where each normalized byte came from.
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = getattr(normalizers, request.param)()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    path = tmp_path_factory.mktemp("nf") / "tokenizer.json"
    hf.save(str(path))
    return hf, tokenmill.Tokenizer.from_huggingface(path)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(COMPOSING, min_size=1, max_size=8).map("".join))
def test_offsets_where_unicode_forms_compose_and_decompose(unicode_form_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    """Composed, decomposed and reordered characters get tokenizers' offsets: each normalized
    character from one source character (a composition from its first part, an added part
    from the character it came out of)."""
    hf, tok = unicode_form_pair
    theirs, ours = hf.encode(text), tok.encode_for_model(text)
    assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets)


# Hugging Face normalizers in arbitrary chains (tokenmill runs them as `hf:` + their JSON).
def _hf_normalizers() -> dict[str, Callable[[], object]]:
    from tokenizers import normalizers as n

    return {
        "Strip": lambda: n.Strip(),
        "Strip-left": lambda: n.Strip(left=True, right=False),
        "NFD-StripAccents": lambda: n.Sequence([n.NFD(), n.StripAccents()]),
        "Replace-string": lambda: n.Replace("``", '"'),
        "Replace-regex": lambda: n.Replace(Regex(" {2,}"), " "),
        "Replace-digits": lambda: n.Replace(Regex("[0-9]+"), "#"),
        "Prepend": lambda: n.Prepend("▁"),
        "NFKC-Lowercase": lambda: n.Sequence([n.NFKC(), n.Lowercase()]),
        "ByteLevel": lambda: n.ByteLevel(),
        # ALBERT's converter, without its Precompiled map.
        "Albert": lambda: n.Sequence(
            [
                n.Replace("``", '"'),
                n.Replace("''", '"'),
                n.NFKD(),
                n.StripAccents(),
                n.Lowercase(),
                n.Replace(Regex(" {2,}"), " "),
            ]
        ),
        "Strip-Replace-Prepend": lambda: n.Sequence(
            [n.Strip(), n.Replace(Regex(" {2,}"), "▁"), n.Replace(" ", "▁"), n.Prepend("▁")]
        ),
    }


def byte_tokenizer(normalizer: str) -> Tokenizer:
    """One token per byte behind the named normalizer chain: ids and offsets show where each
    normalized byte came from."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = _hf_normalizers()[normalizer]()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return hf


NORMALIZED = st.sampled_from(
    [" ", "  ", "\t", "a", "The", "ÉTÉ", "e\u0301", "ﬁ", "``", "''", "1", "2024", "Σ", "中", "😀", "\u3000", "x"]
)


@pytest.fixture(scope="module", params=sorted(_hf_normalizers()))
def normalizer_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple:  # type: ignore[type-arg]
    hf = byte_tokenizer(request.param)
    path = tmp_path_factory.mktemp("norm") / "tokenizer.json"
    hf.save(str(path))
    return hf, tokenmill.Tokenizer.from_huggingface(path), path


@settings(max_examples=150, deadline=None)
@given(text=st.lists(NORMALIZED, max_size=10).map("".join))
def test_normalizer_chains_equal_tokenizers(normalizer_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    hf, tok, _ = normalizer_pair
    theirs, ours = hf.encode(text), tok.encode_for_model(text)
    assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets)
    assert tok.normalize(text) == hf.normalizer.normalize_str(text)


def test_normalizer_chains_on_real_text_and_saved(normalizer_pair, multilingual_text: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hf, tok, _ = normalizer_pair
    for text in [multilingual_text, *multilingual_text.splitlines()[:20]]:
        theirs, ours = hf.encode(text), tok.encode_for_model(text)
        assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets)
    tok.save(tmp_path / "tok.json")
    again = tokenmill.Tokenizer.load(tmp_path / "tok.json")
    assert again.encode_ordinary(multilingual_text) == tok.encode_ordinary(multilingual_text)
    tok.to_huggingface(tmp_path / "tokenizer.json")
    exported = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert exported.encode(multilingual_text).ids == hf.encode(multilingual_text).ids


def test_strip_accents_and_lowercase_on_every_code_point(tmp_path: Path) -> None:
    """tokenizers' tables of combining marks and of lowercase letters, character by character."""
    from tokenizers import normalizers as n

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = n.Sequence([n.StripAccents(), n.Lowercase()])
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = tokenmill.Tokenizer.from_huggingface(tmp_path / "tokenizer.json")
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    differ = [c for c in chars if tok.normalize(c) != hf.normalizer.normalize_str(c)]
    assert [f"U+{ord(c):04X}" for c in differ] == []
