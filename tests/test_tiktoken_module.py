"""`tokenmill.tiktoken` against tiktoken itself: every method, on real and generated text, for
OpenAI's encodings and for encodings built with the constructor. No network: both libraries
read the vocabularies from a cache filled from PyPI packages (see vocab_files.py)."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vocab_files import fill_tiktoken_cache

import tokenmill
import tokenmill.tiktoken as tm
from tokenmill.tiktoken import load as tm_load

ALL = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
MAIN = ["cl100k_base", "o200k_base", "o200k_harmony"]
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", autouse=True)
def offline_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for both libraries; any attempt to download fails the test. Undone after this module."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    fill_tiktoken_cache(cache)
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a test tried to download {args}")

    mp = pytest.MonkeyPatch()
    mp.setattr(tm_load.urllib.request, "urlopen", no_network)
    yield cache
    mp.undo()
    if saved is None:
        del os.environ["TIKTOKEN_CACHE_DIR"]
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = saved


def pair(name: str) -> tuple[tm.Encoding, Any]:
    return tm.get_encoding(name), tiktoken.get_encoding(name)


def outcome(call: Callable[[], Any]) -> Any:
    """The result, or the kind of error: ValueError and KeyError compare equal across libraries."""
    try:
        result = call()
    except (ValueError, KeyError, AssertionError) as e:
        return next(k.__name__ for k in (KeyError, ValueError, AssertionError) if isinstance(e, k))
    if hasattr(result, "tolist"):
        return ("array", str(result.dtype), result.tolist())
    return result


def same(ours: Callable[[tm.Encoding], Any], enc: tm.Encoding, ref: Any) -> None:
    assert outcome(lambda: ours(enc)) == outcome(lambda: ours(ref))


# -- registry and model tables ------------------------------------------------------------------
def test_registry_and_model_tables() -> None:
    from tiktoken import model as tk_model

    from tokenmill.tiktoken import model as tm_model

    assert set(ALL) <= set(tm.list_encoding_names())
    assert set(tm.list_encoding_names()) == set(tiktoken.list_encoding_names())
    assert tm_model.MODEL_TO_ENCODING == tk_model.MODEL_TO_ENCODING
    assert list(tm_model.MODEL_PREFIX_TO_ENCODING.items()) == list(tk_model.MODEL_PREFIX_TO_ENCODING.items())
    for model in ["gpt-4o", "gpt-4o-2024-05-13", "o1", "o3-mini", "gpt-4.1-nano", "gpt-5", "gpt-5-mini",
                  "gpt-oss-120b", "gpt-3.5-turbo-0301", "ft:gpt-4o-mini:org", "text-davinci-003", "gpt2"]:  # fmt: skip
        assert tm.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)
    assert tm.encoding_for_model("gpt-oss-20b").name == "o200k_harmony"
    assert tm.encoding_for_model("gpt-4") is tm.get_encoding("cl100k_base")
    with pytest.raises(KeyError):
        tm.encoding_for_model("no-such-model")
    with pytest.raises(ValueError, match="Unknown encoding"):
        tm.get_encoding("cl100k")
    with pytest.raises(ValueError):
        tm.get_encoding(100)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ALL)
def test_metadata(name: str) -> None:
    enc, ref = pair(name)
    assert (enc.name, enc.n_vocab, enc.max_token_value, enc.eot_token) == (
        ref.name,
        ref.n_vocab,
        ref.max_token_value,
        ref.eot_token,
    )
    assert enc._pat_str == ref._pat_str and enc._special_tokens == ref._special_tokens
    assert enc._mergeable_ranks == ref._mergeable_ranks
    assert enc.special_tokens_set == ref.special_tokens_set
    assert enc.token_byte_values() == ref.token_byte_values()
    assert repr(enc) == repr(ref)
    for token in [0, 100, enc.eot_token, enc.n_vocab - 1]:
        assert enc.is_special_token(token) == ref.is_special_token(token)
    with pytest.raises(AssertionError):
        enc.is_special_token("0")  # type: ignore[arg-type]


# -- encoding real text -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_real_text(name: str, stdlib_text: str, multilingual_text: str) -> None:
    enc, ref = pair(name)
    docs = [stdlib_text[i : i + 3000] for i in range(0, 120_000, 3000)] + multilingual_text.splitlines()
    assert enc.encode_ordinary_batch(docs) == ref.encode_ordinary_batch(docs)
    assert enc.encode_batch(docs, num_threads=2, allowed_special="all") == ref.encode_batch(docs, allowed_special="all")
    ids = ref.encode(multilingual_text)
    assert enc.encode(multilingual_text) == ids
    assert enc.encode_to_numpy(multilingual_text).tolist() == ids
    assert enc.decode(ids) == ref.decode(ids) == multilingual_text
    assert enc.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
    assert enc.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    batch = ref.encode_batch(docs[:5])
    assert enc.decode_batch(batch) == ref.decode_batch(batch)
    assert enc.decode_bytes_batch(batch) == ref.decode_bytes_batch(batch)
    assert enc._encode_only_native_bpe(docs[0]) == ref._encode_only_native_bpe(docs[0])
    assert enc.decode(enc.encode("hello  ")) == "hello  "


# -- special tokens -----------------------------------------------------------------------------
SPECIAL_TEXT = st.lists(
    st.sampled_from(
        ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|reserved_200018|>", "<|start|>", "<|end|>",
         "<|endoftext", "<|", "|>", "not-special", "x", " ", "\n", "hello", "\ud800", "\udfff", "中", "'s", "é"]
    )
    | st.text(max_size=4),
    max_size=12,
).map("".join)  # fmt: skip
ALLOWED = st.sampled_from(["all", set(), {"<|endoftext|>"}, {"<|endofprompt|>", "not-special"}, {"<|start|>"}])
DISALLOWED = st.sampled_from(
    ["all", (), None, {"<|endoftext|>"}, {"not-special"}, frozenset({"x", "<|endofprompt|>"}), {""}, ["<|end|>"]]
)


@pytest.mark.parametrize("name", MAIN)
@QUICK
@given(text=SPECIAL_TEXT, allowed=ALLOWED, disallowed=DISALLOWED)
def test_generated_special_token_rules(name: str, text: str, allowed: Any, disallowed: Any) -> None:
    enc, ref = pair(name)
    kwargs = {"allowed_special": allowed, "disallowed_special": disallowed}
    same(lambda e: e.encode(text, **kwargs), enc, ref)
    if disallowed is not None:  # tiktoken's encode_batch cannot take None (ours can)
        same(lambda e: e.encode_batch([text, "plain"], **kwargs), enc, ref)
    if text.encode("utf-8", "surrogatepass") == text.encode("utf-8", "replace"):
        # tiktoken's encode_to_numpy and encode_with_unstable raise for lone surrogates; ours encode them as U+FFFD.
        same(lambda e: e.encode_to_numpy(text, **kwargs), enc, ref)
        same(lambda e: e.encode_with_unstable(text[-8:], **kwargs)[0], enc, ref)
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)


def test_disallowed_special_error_is_useful() -> None:
    enc = tm.get_encoding("cl100k_base")
    with pytest.raises(tokenmill.DisallowedSpecialError, match="<\\|endoftext\\|>.*allowed_special"):
        enc.encode("a <|endoftext|>")
    with pytest.raises(ValueError, match="'not-special', which disallowed_special names"):
        enc.encode("this is not-special", disallowed_special={"not-special"})
    # Both allowed and disallowed: disallowed wins, as in tiktoken.
    with pytest.raises(ValueError):
        enc.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}, disallowed_special={"<|endoftext|>"})
    assert enc.encode("<|endoftext|>", disallowed_special=None) == enc.encode_ordinary("<|endoftext|>")


def test_harmony_gives_one_id_two_spellings() -> None:
    enc, ref = pair("o200k_harmony")
    text = "<|reserved_200018|><|endofprompt|><|start|>x"
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert enc.encode(text, allowed_special="all")[:2] == [200018, 200018]
    assert enc.decode([200018]) == ref.decode([200018]) == "<|endofprompt|>"
    assert enc.encode_single_token("<|reserved_200018|>") == enc.encode_single_token("<|endofprompt|>") == 200018
    assert enc.n_vocab == 201088


# -- single tokens, pieces and raw bytes --------------------------------------------------------
@pytest.mark.parametrize("name", MAIN + ["gpt2", "p50k_edit"])
def test_single_tokens(name: str) -> None:
    enc, ref = pair(name)
    for token in [*range(0, enc.n_vocab, 997), *enc._special_tokens.values(), enc.n_vocab, 100256]:
        same(lambda e, t=token: e.decode_single_token_bytes(t), enc, ref)
        same(lambda e, t=token: e.decode_bytes([1, t]), enc, ref)
    for piece in [b"hello", "hello", b" world", "<|endoftext|>", b"\xff", b"not one token", "", b"\xe4\xb8"]:
        same(lambda e, p=piece: e.encode_single_token(p), enc, ref)
    with pytest.raises(KeyError):
        enc.encode_single_token(b"not one token")
    with pytest.raises(KeyError):
        enc.decode([enc.n_vocab + 10])
    with pytest.raises(tokenmill.TokenIdError):
        enc.decode_single_token_bytes(enc.n_vocab + 10)
    with pytest.raises(KeyError):  # tiktoken: OverflowError
        enc.decode_single_token_bytes(-1)


def broken_utf8() -> st.SearchStrategy[bytes]:
    """UTF-8 text with stray, missing or cut bytes, and raw bytes."""
    text = st.text(st.sampled_from("ab \n中é👍'\t"), max_size=10).map(lambda t: t.encode())
    cut = st.tuples(text, st.integers(0, 12)).map(lambda p: p[0][: p[1]])
    junk = st.lists(st.sampled_from([b"\x80", b"\xff", b"\xe4", b"\xe4\xb8", b"\xf0\x9f", b" ", b"\n"]), max_size=4)
    return st.one_of(st.binary(max_size=16), st.tuples(text, junk, cut).map(lambda p: p[0] + b"".join(p[1]) + p[2]))


@pytest.mark.parametrize("name", MAIN)
@QUICK
@given(data=broken_utf8())
def test_generated_raw_bytes(name: str, data: bytes) -> None:
    enc, ref = pair(name)
    assert enc._encode_bytes(data) == ref._encode_bytes(data)
    assert enc.decode_bytes(enc._encode_bytes(data)) == data
    if data:
        assert enc._encode_single_piece(data) == ref._encode_single_piece(data)


def test_raw_bytes_examples() -> None:
    enc, ref = pair("cl100k_base")
    for data in [b" \xec\x8b\xa4\xed", b"hello \xff\xfe world", b"today\n \n\x80", b"\x80" * 9, b"a<|endoftext|>\xff"]:
        assert enc._encode_bytes(data) == ref._encode_bytes(data)
    assert enc._encode_single_piece("helloqqqq") == ref._encode_single_piece("helloqqqq")


# -- encode_with_unstable -----------------------------------------------------------------------
def unstable_result(enc: Any, text: str, **kwargs: Any) -> tuple[list[int], list[tuple[int, ...]]]:
    stable, completions = enc.encode_with_unstable(text, **kwargs)
    assert all(type(c) is list for c in completions)  # lists, as tiktoken's
    return stable, sorted(tuple(c) for c in completions)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=25, deadline=None)
@given(text=st.text(st.sampled_from("ab fx\n\t.'中é1<|>"), max_size=12))
def test_generated_unstable_tail(name: str, text: str) -> None:
    enc, ref = pair(name)
    assert unstable_result(enc, text, disallowed_special=()) == unstable_result(ref, text, disallowed_special=())


def test_unstable_tail_examples() -> None:
    for name in ["cl100k_base", "r50k_base"]:
        enc, ref = pair(name)
        for text in ["hello fanta", "x\n ", "today\n  ", "a<|endoftext|>", "a<|endoftext|>b c", "", "é", "  !"]:
            got = unstable_result(enc, text, allowed_special="all")
            assert got == unstable_result(ref, text, allowed_special="all"), text
            stable, completions = got
            assert text.encode().startswith(enc.decode_bytes(stable))
            assert all(enc.decode_bytes(stable + list(c)).startswith(text.encode()) for c in completions)


# -- encodings built with the constructor -------------------------------------------------------
CUSTOM_SPECIALS = {"<a>": 60000, "<a>b": 60001, "<|x|>": 60002, "<|also-x|>": 60002}


@functools.cache
def custom(pat_str: str, module: Any) -> Any:
    """r50k_base's ranks with another regex and special tokens that overlap and share an id."""
    base = tiktoken.get_encoding("r50k_base")._mergeable_ranks
    return module.Encoding("custom", pat_str=pat_str, mergeable_ranks=base, special_tokens=CUSTOM_SPECIALS)


CUSTOM_PATTERNS = [
    r"""\w+|\s+|[^\w\s]+""",
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    r"""\p{L}+|\p{N}|[^\p{L}\p{N}]""",
]


@pytest.mark.parametrize("pat_str", CUSTOM_PATTERNS)
@QUICK
@given(text=SPECIAL_TEXT | st.text(st.sampled_from("<a>b |x-also"), max_size=20), allowed=ALLOWED)
def test_generated_custom_encoding(pat_str: str, text: str, allowed: Any) -> None:
    enc, ref = custom(pat_str, tm), custom(pat_str, tiktoken)
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    for disallowed in ("all", (), {"<a>"}):
        same(lambda e, d=disallowed: e.encode(text, allowed_special=allowed, disallowed_special=d), enc, ref)
    ids = ref.encode(text, allowed_special="all")
    if all(i != 60002 for i in ids):  # tiktoken decodes the shared id as either spelling
        assert enc.decode(ids) == ref.decode(ids)
    data = text.encode("utf-8", "replace")[:-1]
    assert enc._encode_bytes(data) == ref._encode_bytes(data)


def test_custom_encoding_checks_and_pickles() -> None:
    ranks = tiktoken.get_encoding("r50k_base")._mergeable_ranks
    args = {"pat_str": CUSTOM_PATTERNS[0], "mergeable_ranks": ranks, "special_tokens": {"<|pickle|>": 100_000}}
    with pytest.raises(AssertionError):
        tm.Encoding("x", explicit_n_vocab=50257, **args)
    with pytest.raises(tokenmill.ConfigError):
        tm.Encoding("x", explicit_n_vocab=100_001, **args)
    tm.Encoding("x", explicit_n_vocab=None, **{**args, "special_tokens": {}})
    enc = tm.Encoding("custom", **args)
    back = pickle.loads(pickle.dumps(enc))
    ref = tiktoken.Encoding("custom", **args)
    assert back.encode("<|pickle|> hi ", allowed_special="all") == ref.encode("<|pickle|> hi ", allowed_special="all")
    assert back.encode("<|pickle|>", allowed_special="all") == [100_000]
    assert back.decode(back.encode("hello ")) == "hello "  # a regex pattern keeps a trailing space
    assert back._pat_str == args["pat_str"] and back.name == "custom"
    named = tm.get_encoding("cl100k_base")
    assert len(pickle.dumps(named)) < 100 and pickle.loads(pickle.dumps(named)).encode("hi") == named.encode("hi")


# -- vocabulary files and the cache -------------------------------------------------------------
def test_loaders_equal_tiktokens(offline_cache: Path) -> None:
    import tiktoken.load as tk_load
    from tiktoken_ext import openai_public as tk_public

    from tokenmill.tiktoken import openai_public as tm_public

    assert tm_load.load_tiktoken_bpe(tm_public.R50K_URL, tm_public.R50K_SHA256) == tk_load.load_tiktoken_bpe(
        tm_public.R50K_URL, tm_public.R50K_SHA256
    )
    assert tm_public.gpt2() == tk_public.gpt2()
    assert tm_public.o200k_harmony() == tk_public.o200k_harmony()


def test_cache_key_hash_check_and_atomic_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "vocab.tiktoken"
    source.write_bytes(b"IQ== 0\nIg== 1\n")
    good = hashlib.sha256(source.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "other"))
    url = "https://example.invalid/vocab.tiktoken"
    fetched: list[str] = []

    def fake_read(blobpath: str) -> bytes:
        fetched.append(blobpath)
        return source.read_bytes()

    monkeypatch.setattr(tm_load, "read_file", fake_read)
    with pytest.raises(ValueError, match="SHA-256 is .* expected 00"):
        tm_load.load_tiktoken_bpe(url, expected_hash="00" * 32)
    assert not cache.exists() or not any(cache.iterdir())  # nothing cached
    assert tm_load.load_tiktoken_bpe(url, expected_hash=good) == {b"!": 0, b'"': 1}
    assert [p.name for p in cache.iterdir()] == [hashlib.sha1(url.encode()).hexdigest()]  # no temp files left
    assert tm_load.load_tiktoken_bpe(url, expected_hash=good) == {b"!": 0, b'"': 1}
    assert fetched == [url, url]  # the second load came from the cache
    # A damaged cached copy is fetched again.
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"damaged")
    tm_load.load_tiktoken_bpe(url, expected_hash=good)
    assert len(fetched) == 3
    # DATA_GYM_CACHE_DIR when TIKTOKEN_CACHE_DIR is unset; an empty value turns caching off.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    tm_load.load_tiktoken_bpe(url, expected_hash=good)
    assert (tmp_path / "other" / hashlib.sha1(url.encode()).hexdigest()).exists()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tm_load.cache_path(url) is None
    out = tmp_path / "dumped.tiktoken"
    tm_load.dump_tiktoken_bpe({b"!": 0, b'"': 1}, str(out))
    assert out.read_bytes() == source.read_bytes()


def test_a_fifo_at_the_cache_path_is_not_read(tmp_path: Path) -> None:
    """Something other than a regular file where the cached copy belongs (a FIFO, which would
    block a read for ever) is fetched over, not read. In a subprocess, bounded in time."""
    import subprocess
    import sys

    source = tmp_path / "v.tiktoken"
    source.write_text("YQ== 0\nYg== 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    code = (
        "import os, sys\n"
        "from tokenmill.tiktoken.load import cache_path, load_tiktoken_bpe\n"
        "os.mkfifo(cache_path(sys.argv[1]))\n"
        "print(sorted(load_tiktoken_bpe(sys.argv[1]).items()))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(source)], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[(b'a', 0), (b'b', 1)]"
    assert [p.is_file() for p in cache.iterdir()] == [True]
