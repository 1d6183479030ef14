"""Vocabularies loaded from tiktoken files give exactly tiktoken's ids."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vocab_files import OPEN_MODELS, open_model_encoding, tiktoken_encoding, vocabulary_path

import tokenmill

# OpenAI's encodings, and open models' vocabularies with their own split patterns (given as the
# regex their tokenizer.json spells, which tokenmill recognizes and runs on its preset splitter).
ENCODINGS = ["cl100k_base", "o200k_base", *OPEN_MODELS]


@pytest.fixture(scope="module", params=ENCODINGS)
def pair(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    if request.param in OPEN_MODELS:
        enc = open_model_encoding(request.param)
        tok = tokenmill.Tokenizer.from_tiktoken(
            enc._mergeable_ranks, pattern=enc._pat_str, special_tokens=enc._special_tokens
        )
        assert tok.pattern == OPEN_MODELS[request.param], "the model's regex runs on its preset"
        return tok, enc
    path = vocabulary_path(request.param)
    return tokenmill.Tokenizer.from_tiktoken(path, pattern=request.param), tiktoken_encoding(request.param, path)


def machine_texts() -> list[str]:
    """Real files on every Debian machine: licences, documentation, configuration."""
    texts = []
    for pattern in ("/usr/share/common-licenses/*", "/etc/*.conf", "/usr/share/doc/*/copyright"):
        for p in sorted(Path("/").glob(pattern.lstrip("/")))[:40]:
            if p.is_file():
                texts.append(p.read_text(encoding="utf-8", errors="replace"))
    return texts


def test_metadata_equals_tiktoken(pair) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    assert tok.n_vocab == enc.n_vocab
    assert tok.special_tokens == enc._special_tokens
    assert tok.special_tokens_set == enc.special_tokens_set
    if "<|endoftext|>" in enc._special_tokens:
        assert tok.eot_token == enc.eot_token
    else:
        with pytest.raises(tokenmill.ConfigError, match="no <|endoftext|>"):
            _ = tok.eot_token
    assert tok.token_byte_values() == enc.token_byte_values()


def test_real_text(pair, stdlib_text: str, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    texts = [stdlib_text, multilingual_text, *multilingual_text.splitlines(), *machine_texts()]
    for text in texts:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    docs = [stdlib_text[i : i + 4096] for i in range(0, len(stdlib_text), 4096)]
    assert tok.encode_ordinary_batch(docs, num_threads=2) == enc.encode_ordinary_batch(docs)


TRICKY = st.sampled_from(
    [
        " ",
        "  ",
        "   ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "\u3000",
        "\xa0",
        "a",
        "A",
        "é",
        "e\u0301",
        "ß",
        "ǅ",
        "中文",
        "日本",
        "한국",
        "Привет",
        "123",
        "4567",
        "١٢٣",
        "'s",
        "'S",
        "'ll",
        "'LL",
        "'Re",
        "'ve",
        "'m",
        "'d",
        "'t",
        "ſ",
        "don't",
        "I'M",
        "!",
        "?!",
        "...",
        "/",
        "//",
        "\\",
        "👍",
        "👍🏽",
        "👨‍👩‍👧",
        "🇯🇵",
        "<|endoftext|>",
        "<|endoftext",
        "|>",
        "<|",
        "endoftext",
        "<|fim_prefix|>",
        "x",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(TRICKY, max_size=30).map("".join))
def test_generated_tricky_text(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn")), max_size=80))
def test_generated_unicode(pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def two_specials(enc) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """`<|endoftext|>` (or the encoding's first special token) and its last special token."""
    names = sorted(enc._special_tokens, key=enc._special_tokens.get)
    return ("<|endoftext|>" if "<|endoftext|>" in names else names[0]), names[-1]


def test_special_token_rules(pair) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    first, last = two_specials(enc)
    text = f"hello {first} world {last}"
    with pytest.raises(ValueError):
        enc.encode(text)
    with pytest.raises(tokenmill.DisallowedSpecialError):
        tok.encode(text)
    for kwargs in (
        {"allowed_special": "all"},
        {"allowed_special": {first}, "disallowed_special": ()},
        {"disallowed_special": ()},
    ):
        assert tok.encode(text, **kwargs) == enc.encode(text, **kwargs)
    assert tok.encode_batch([text, "x"], allowed_special="all") == enc.encode_batch([text, "x"], allowed_special="all")
    with pytest.raises(tokenmill.DisallowedSpecialError):
        tok.encode(text, allowed_special={first})


def test_decode_helpers(pair, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    ids = enc.encode(multilingual_text)
    assert tok.decode(ids) == enc.decode(ids)
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)
    assert tok.decode_tokens_bytes(ids) == enc.decode_tokens_bytes(ids)
    assert tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids)
    assert tok.decode_single_token_bytes(ids[3]) == enc.decode_single_token_bytes(ids[3])
    broken = ids[:1] + enc.encode("中")[:1]
    for errors in ("replace", "ignore", "backslashreplace"):
        assert tok.decode(broken, errors=errors) == enc.decode(broken, errors=errors)


def test_numpy_surrogates_pickle(pair, multilingual_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    arr = tok.encode_to_numpy(multilingual_text)
    assert arr.dtype.name == "uint32" and arr.tolist() == enc.encode(multilingual_text)
    ordinary = tok.encode_ordinary_to_numpy(multilingual_text + "<|endoftext|>")
    assert ordinary.tolist() == enc.encode_ordinary(multilingual_text + "<|endoftext|>") and ordinary.flags.writeable
    assert tok.encode("a\ud800b\udfff") == enc.encode("a\ud800b\udfff")
    assert pickle.loads(pickle.dumps(tok)).encode(multilingual_text) == enc.encode(multilingual_text)


def test_arrays_without_numpy_are_a_clear_error() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import tokenmill\n"
        "tok = tokenmill.train_bpe(['hello world'], vocab_size=260)\n"
        "try:\n    tok.encode_to_numpy('hello')\nexcept tokenmill.ConfigError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "arrays need numpy" in out.stdout, out.stderr


def test_worst_cases_stay_linear(pair) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    # Compared with tiktoken on sizes it handles quickly; run alone at full size.
    for text in ["a" * 20_000, "".join(chr(0x61 + (i * 7) % 26) for i in range(20_000)), " " * 20_000]:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    big = {
        "a": "a" * 1_000_000,
        "letters": "".join(chr(0x61 + (i * 7) % 26) for i in range(1_000_000)),
        "spaces": " " * 1_000_000,
        "specials": (two_specials(enc)[0] + "x") * 10_000,
    }
    for text in big.values():
        assert tok.decode(tok.encode(text, allowed_special="all")) == text
    special_id = enc._special_tokens[two_specials(enc)[0]]
    assert tok.encode(big["specials"], allowed_special="all").count(special_id) == 10_000


def test_save_tiktoken_writes_the_same_file(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    out = tmp_path / "copy.tiktoken"
    tok.save_tiktoken(out)
    if enc.name in OPEN_MODELS:
        from tiktoken.load import load_tiktoken_bpe

        assert load_tiktoken_bpe(str(out)) == enc._mergeable_ranks
        return
    original = vocabulary_path(enc.name)
    assert sorted(out.read_bytes().splitlines()) == sorted(original.read_bytes().splitlines())
    again = tokenmill.Tokenizer.from_tiktoken(out, pattern=enc.name)
    assert again.encode("round trip ✓") == enc.encode("round trip ✓")


def test_ranks_mapping_and_trained_vocab_round_trip(tmp_path: Path, stdlib_text: str) -> None:
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(vocabulary_path("cl100k_base")))
    tok = tokenmill.Tokenizer.from_tiktoken(ranks, pattern="cl100k")
    assert tok.encode("hello world") == [15339, 1917]
    trained = tokenmill.train_bpe([stdlib_text[:200_000]], vocab_size=800, pattern="o200k")
    trained.save_tiktoken(tmp_path / "t.tiktoken")
    back = tokenmill.Tokenizer.from_tiktoken(tmp_path / "t.tiktoken", pattern="o200k", special_tokens={})
    sample = stdlib_text[200_000:260_000]
    assert back.encode(sample) == trained.encode(sample)


def test_bad_tiktoken_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nIg== 1\nnot_base64!! 2\n")
    with pytest.raises(tokenmill.FormatError, match=r"bad.tiktoken:3: .*bad base64"):
        tokenmill.Tokenizer.from_tiktoken(bad, pattern="cl100k")
    bad.write_text("IQ== 0\nIg== 0\n")
    with pytest.raises(tokenmill.FormatError, match=r"bad.tiktoken:2: .*rank 0 already used on line 1"):
        tokenmill.Tokenizer.from_tiktoken(bad, pattern="cl100k")
    bad.write_text('{"version": "1.0"}\n')
    with pytest.raises(tokenmill.FormatError, match=r"bad.tiktoken:1: .*expected '<base64 token> <rank>'"):
        tokenmill.Tokenizer.from_tiktoken(bad, pattern="cl100k")
    with pytest.raises(tokenmill.CorpusError, match="missing.tiktoken"):
        tokenmill.Tokenizer.from_tiktoken(tmp_path / "missing.tiktoken", pattern="cl100k")
    good = {bytes([b]): b for b in range(256)}
    with pytest.raises(tokenmill.PatternError, match="unknown preset"):
        tokenmill.Tokenizer.from_tiktoken(good, pattern="cl100k_bsae")
    with pytest.raises(tokenmill.PatternError):
        tokenmill.Tokenizer.from_tiktoken(good, pattern="(unclosed")
    with pytest.raises(tokenmill.ConfigError, match="lacks the single byte"):
        tokenmill.Tokenizer.from_tiktoken({b"a": 0}, pattern="cl100k")


# Split patterns of the user's own (not presets): tokenmill runs them on a DFA engine, with
# GPT-2's `\s+(?!\S)` look-ahead handled outside it; tiktoken runs them on a backtracking one.
USER_PATTERNS = [
    # DeepSeek V3's word pattern, with its CJK and number rules folded in as alternatives.
    r"\p{N}{1,3}|[一-龥぀-ゟ゠-ヿ]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    # Llama 3's with four-digit numbers.
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,4}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    # The look-ahead first, and text left between matches (dropped, as tiktoken drops it).
    r"\s+(?!\S)|[A-Za-z]+|\d",
    # Possessive and a look-behind: the backtracking engine, in both libraries.
    r"\p{L}++|(?<=\d)\d|\s",
]


@pytest.fixture(scope="module", params=USER_PATTERNS)
def user_pair(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(vocabulary_path("cl100k_base")))
    tok = tokenmill.Tokenizer.from_tiktoken(ranks, pattern=request.param, special_tokens={})
    return tok, tiktoken.Encoding("user", pat_str=request.param, mergeable_ranks=ranks, special_tokens={})


@settings(max_examples=300, deadline=None)
@given(text=st.lists(TRICKY, max_size=30).map("".join))
def test_user_patterns_equal_tiktoken(user_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = user_pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_user_patterns_on_real_text(user_pair, multilingual_text: str, stdlib_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = user_pair
    for text in [multilingual_text, stdlib_text[:300_000], *machine_texts()[:20]]:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_an_empty_token_loads_as_tiktoken_loads_it(tmp_path: Path, stdlib_text: str) -> None:
    """Whisper's multilingual vocabulary has a token of no bytes, written `=`; tiktoken reads it
    (as b"") and so does tokenmill: it holds its id, decodes to nothing, and text never gives it."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    source = vocabulary_path("cl100k_base")
    empty_rank = len(load_tiktoken_bpe(str(source)))
    path = tmp_path / "with_empty.tiktoken"
    path.write_bytes(source.read_bytes() + b"= %d\n" % empty_rank)
    ranks = load_tiktoken_bpe(str(path))
    assert ranks[b""] == empty_rank
    enc = tiktoken.Encoding(
        "empty", pat_str=tiktoken_encoding("cl100k_base", source)._pat_str, mergeable_ranks=ranks, special_tokens={}
    )
    for tok in (
        tokenmill.Tokenizer.from_tiktoken(path, pattern="cl100k_base", special_tokens={}),
        tokenmill.Tokenizer.from_tiktoken(ranks, pattern="cl100k_base", special_tokens={}),
    ):
        assert tok.n_vocab == enc.n_vocab
        assert tok.decode_single_token_bytes(empty_rank) == enc.decode_single_token_bytes(empty_rank) == b""
        assert tok.decode([15339, empty_rank, 1917]) == enc.decode([15339, empty_rank, 1917])
        text = stdlib_text[:50_000]
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
