"""Special tokens: tiktoken's rules for allowed/disallowed text, aliases (two strings, one id),
ids far from the rest, and many special tokens at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from vocab_files import tiktoken_encoding, vocabulary_path

import tokenmill
from tokenmill import ConfigError, DisallowedSpecialError

BYTES = {bytes([b]): b for b in range(256)}


@pytest.fixture(scope="module")
def pair():  # type: ignore[no-untyped-def]
    path = vocabulary_path("cl100k_base")
    enc = tiktoken_encoding("cl100k_base", path)
    ours = tokenmill.Tokenizer.from_tiktoken(path, pattern="cl100k_base")
    return enc, ours


CASES = [
    ("hi <|endoftext|>", {"<|endoftext|>"}, {"<|endoftext|>"}),
    ("hi <|endoftext|>", "all", {"<|endoftext|>"}),
    ("hi <|endoftext|>", set(), None),
    ("hi <|endoftext|>", None, None),
    ("say not-a-special here", set(), {"not-a-special"}),
    ("say nothing here", set(), {"not-a-special"}),
    ("a <|fim_prefix|> b <|endoftext|>", {"<|endoftext|>"}, "all"),
    ("a <|fim_prefix|> b <|endoftext|>", {"<|endoftext|>", "<|fim_prefix|>"}, "all"),
    ("a <|fim_prefix|> b", set(), set()),
]


@pytest.mark.parametrize(("text", "allowed", "disallowed"), CASES)
def test_special_arguments_behave_as_in_tiktoken(pair, text, allowed, disallowed) -> None:  # type: ignore[no-untyped-def]
    enc, ours = pair
    kwargs = {}
    if allowed is not None:
        kwargs["allowed_special"] = allowed
    kwargs["disallowed_special"] = disallowed if disallowed is not None else ()
    try:
        expected: object = enc.encode(text, **kwargs)
    except ValueError:
        expected = ValueError
    if expected is ValueError:
        with pytest.raises(DisallowedSpecialError):
            ours.encode(text, **kwargs)
    else:
        assert ours.encode(text, **kwargs) == expected
    # None is accepted for "none" on both arguments.
    assert ours.encode("x <|endoftext|>", allowed_special=None, disallowed_special=None) == enc.encode_ordinary(
        "x <|endoftext|>"
    )


def test_two_strings_may_share_an_id() -> None:
    specials = {"<|endofprompt|>": 300, "<|reserved_300|>": 300, "<|x|>": 301}
    tok = tokenmill.Tokenizer.from_tiktoken(BYTES, pattern="cl100k", special_tokens=specials)
    assert tok.encode("<|endofprompt|><|reserved_300|><|x|>", allowed_special="all") == [300, 300, 301]
    assert tok.decode([300]) == "<|endofprompt|>"  # the first string given
    assert tok.special_tokens == specials
    assert tok.vocab_size == 256 + 2 and tok.n_vocab == 302
    import pickle

    back = pickle.loads(pickle.dumps(tok))
    assert back.special_tokens == specials
    with pytest.raises(ConfigError, match="already taken"):
        tokenmill.Tokenizer.from_tiktoken(BYTES, pattern="cl100k", special_tokens={"<|a|>": 65})


@pytest.mark.parametrize(
    "special_tokens",
    [{"<x>": 2**32 - 1}, {"<x>": -1}, {"<x>": 2**64}, {"": 300}, {"\ud800": 300}, {"<x>": "300"}, {"<x>": True}],
)
def test_bad_special_tokens_are_config_errors(special_tokens) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError):
        tokenmill.Tokenizer.from_tiktoken(BYTES, pattern="cl100k", special_tokens=special_tokens)


def _peak_rss_mib(code: str) -> float:
    """Runs `code` in a fresh interpreter and returns its peak resident memory in MiB."""
    script = code + "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return int(out.stdout.split()[-1]) / 1024


def test_memory_follows_the_number_of_tokens_not_the_largest_id(tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = _peak_rss_mib("import tokenmill")
    code = textwrap.dedent(
        f"""
        import tokenmill
        ranks = {{bytes([b]): b for b in range(256)}}
        ranks[b"far"] = 50_000_000
        tok = tokenmill.Tokenizer.from_tiktoken(ranks, pattern="cl100k",
                                                special_tokens={{"<x>": 4_000_000_000, "<y>": 10**9}})
        assert tok.encode("far<x>", allowed_special="all") == [50_000_000, 4_000_000_000]
        assert tok.decode([10**9, 50_000_000]) == "<y>far"
        assert tok.n_vocab == 4_000_000_001
        tok.save({str(tmp_path / "t.json")!r})
        back = tokenmill.Tokenizer.load({str(tmp_path / "t.json")!r})
        assert back.encode("far<y>", allowed_special="all") == [50_000_000, 10**9]
        assert len(back.vocab_listing().splitlines()) == 1 + 256 + 3
        """
    )
    assert _peak_rss_mib(code) - base < 60


def test_many_special_tokens(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # 100k special tokens: every look-up is hashed, so this stays a fraction of a second.
    specials = {f"<|s{i}|>": 1000 + i for i in range(100_000)}
    tok = tokenmill.Tokenizer.from_tiktoken(BYTES, pattern="cl100k", special_tokens=specials)
    text = "a<|s99999|>b<|s0|><|s5|"
    assert tok.encode(text, allowed_special="all") == [97, 100_999, 98, 1000, *tok.encode_ordinary("<|s5|")]
    tok.save(tmp_path / "t.json")
    assert tokenmill.Tokenizer.load(tmp_path / "t.json").special_tokens == specials
    trained = tokenmill.train_bpe(["some text here"] * 5, vocab_size=256 + 100_000 + 5, special_tokens=list(specials))
    assert trained.special_tokens["<|s7|>"] == 7


def _calls_made(work) -> int:  # type: ignore[no-untyped-def]
    """Python and C-level calls made while `work()` runs: a count of operations, not a timing."""
    calls = 0

    def count(frame, event, arg) -> None:  # type: ignore[no-untyped-def]
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


def test_special_token_work_grows_linearly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    def work(n: int) -> None:
        specials = {f"<|s{i}|>": 1000 + i for i in range(n)}
        tok = tokenmill.Tokenizer.from_tiktoken(BYTES, pattern="cl100k", special_tokens=specials)
        tok.encode("a<|s1|>b", allowed_special="all")
        assert len(tok.special_tokens) == n and len(tok.vocab_listing().splitlines()) == 1 + 256 + n
        tok.save(tmp_path / f"{n}.json")
        tokenmill.Tokenizer.load(tmp_path / f"{n}.json").decode([1000, 97])

    small, large = _calls_made(lambda: work(5_000)), _calls_made(lambda: work(40_000))
    assert large < 8 * small * 1.2, (small, large)
