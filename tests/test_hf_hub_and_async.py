"""`Tokenizer.from_pretrained` (a Hub repository's `tokenizer.json`, fetched by huggingface_hub),
`tokenmill.transformers.from_pretrained` with a Hub id, and `Tokenizer.async_encode`.

The machine has no network: the Hub is a cache built here in huggingface_hub's layout
(`models--{org}--{name}/refs/{revision}` holding a commit hash,
`models--{org}--{name}/snapshots/{hash}/...`), read with `HF_HUB_OFFLINE=1`, which is how
huggingface_hub serves a repository it fetched before."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_hf_tokenizer_api import TEXTS, _bert, _byte_level

import tokenmill
import tokenmill.transformers
from tokenmill.tokenizers import Tokenizer
from tokenmill.tokenizers.tokenizer import HubError

hf = pytest.importorskip("tokenizers")
hub = pytest.importorskip("huggingface_hub")

MAIN = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"
FIELDS = ["ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask", "word_ids"]


def _repo(cache: Path, repo_id: str, files: dict[str, Path], commit: str = MAIN, ref: str = "main") -> Path:
    """Puts `files` (name in the repository → file to copy) in the cache as `repo_id` at `commit`,
    with `ref` pointing to it; returns the snapshot directory."""
    root = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = root / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name, source in files.items():
        shutil.copyfile(source, snapshot / name)
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / ref).write_text(commit, encoding="utf-8")
    return snapshot


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hub cache, offline: huggingface_hub reads its settings when imported, so the
    module's constants are set as well as the environment."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


@pytest.fixture(scope="module")
def byte_level(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE with a template, trained by tokenizers."""
    return _byte_level(tmp_path_factory.mktemp("byte-level"))


def _same(ours: Any, theirs: Any) -> None:
    for field in FIELDS:
        assert getattr(ours, field) == getattr(theirs, field), field


# -- Tokenizer.from_pretrained ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bert", "byte_level"])
def test_from_pretrained_reads_the_cached_file(hub_cache: Path, byte_level: Path, kind: str) -> None:
    source = _bert() if kind == "bert" else byte_level
    _repo(hub_cache, f"org/{kind}", {"tokenizer.json": source})
    ours = Tokenizer.from_pretrained(f"org/{kind}")
    theirs = hf.Tokenizer.from_file(str(source))
    assert ours.get_vocab() == theirs.get_vocab()
    for text in TEXTS:
        _same(ours.encode(text), theirs.encode(text))
    _same(ours.encode(TEXTS[0], TEXTS[3]), theirs.encode(TEXTS[0], TEXTS[3]))
    ids = theirs.encode(TEXTS[3]).ids
    assert ours.decode(ids) == theirs.decode(ids)
    # The tokenizer is the cached file's, read by from_file: saving writes the same document.
    assert json.loads(ours.to_str()) == json.loads(Tokenizer.from_file(source).to_str())


def test_from_pretrained_takes_a_revision_and_a_token(hub_cache: Path, byte_level: Path) -> None:
    _repo(hub_cache, "org/model", {"tokenizer.json": _bert()})
    _repo(hub_cache, "org/model", {"tokenizer.json": byte_level}, commit=OTHER, ref="v2")
    bert = hf.Tokenizer.from_file(str(_bert()))
    other = hf.Tokenizer.from_file(str(byte_level))
    text = "Hello world"
    assert Tokenizer.from_pretrained("org/model").encode(text).ids == bert.encode(text).ids
    assert Tokenizer.from_pretrained("org/model", revision="v2").encode(text).ids == other.encode(text).ids
    assert Tokenizer.from_pretrained("org/model", revision=OTHER).encode(text).ids == other.encode(text).ids
    # A token is passed on (the cache does not need it, but it must not be refused).
    made = Tokenizer.from_pretrained("org/model", revision="main", token="hf_not_a_real_token")
    assert made.encode(text).ids == bert.encode(text).ids


def test_from_pretrained_asks_huggingface_hub_as_tokenizers_does(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call tokenizers makes: `hf_hub_download(repo_id=, filename="tokenizer.json",
    revision=)`, with `token=` only when one is given."""
    _repo(hub_cache, "org/model", {"tokenizer.json": _bert()})
    calls: list[dict[str, Any]] = []
    real = hub.hf_hub_download

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(hub, "hf_hub_download", spy)
    Tokenizer.from_pretrained("org/model")
    Tokenizer.from_pretrained("org/model", "main", "secret")
    assert calls == [
        {"repo_id": "org/model", "filename": "tokenizer.json", "revision": "main"},
        {"repo_id": "org/model", "filename": "tokenizer.json", "revision": "main", "token": "secret"},
    ]


def test_a_missing_repository_is_a_clear_error(hub_cache: Path) -> None:
    with pytest.raises(HubError, match=r"org/absent@main: cannot get tokenizer.json") as caught:
        Tokenizer.from_pretrained("org/absent")
    # A tokenmill error, and an OSError as huggingface_hub's own errors are (tokenizers raises those).
    assert isinstance(caught.value, tokenmill.CorpusError)
    assert isinstance(caught.value, OSError)
    assert isinstance(caught.value.__cause__, hub.errors.LocalEntryNotFoundError)
    assert "not in the local cache" in str(caught.value)


def test_a_missing_revision_or_file_is_a_clear_error(hub_cache: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    _repo(hub_cache, "org/model", {"tokenizer.json": _bert()})
    _repo(hub_cache, "org/slow", {"config.json": config})
    with pytest.raises(HubError, match=r"org/model@v9: cannot get tokenizer.json"):
        Tokenizer.from_pretrained("org/model", revision="v9")
    with pytest.raises(HubError, match=r"org/slow@main: cannot get tokenizer.json"):
        Tokenizer.from_pretrained("org/slow")


def test_a_malformed_repository_id_is_a_config_error(hub_cache: Path) -> None:
    with pytest.raises(tokenmill.ConfigError, match="not a Hugging Face Hub repository id"):
        Tokenizer.from_pretrained("a/b/c/../d")


def test_without_huggingface_hub_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "huggingface_hub", None)  # import fails
    with pytest.raises(tokenmill.ConfigError, match="pip install huggingface_hub"):
        Tokenizer.from_pretrained("org/model")


def test_huggingface_hub_is_not_imported_by_tokenmill() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tokenmill, tokenmill.tokenizers, tokenmill.transformers; print('huggingface_hub' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- tokenmill.transformers.from_pretrained with a Hub id ---------------------------------------

BERT_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def test_transformers_from_pretrained_takes_a_hub_id(hub_cache: Path, tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    _repo(hub_cache, "org/bert", {name: _bert().parent / name for name in BERT_FILES})
    local = tmp_path / "bert"
    local.mkdir()
    for name in BERT_FILES:
        shutil.copyfile(_bert().parent / name, local / name)
    stock = transformers.AutoTokenizer.from_pretrained(str(local))
    ours = tokenmill.transformers.from_pretrained("org/bert")
    assert type(ours._tokenizer).__module__.startswith("tokenmill")
    assert type(ours) is type(stock)
    assert ours.all_special_tokens == stock.all_special_tokens
    assert dict(ours(TEXTS, padding=True, truncation=True)) == dict(stock(TEXTS, padding=True, truncation=True))
    firsts, seconds = ["Where is Tokyo?", "Hello"], ["東京 is in Japan.", "world"]
    assert dict(ours(firsts, seconds, padding=True)) == dict(stock(firsts, seconds, padding=True))


def test_transformers_from_pretrained_fetches_the_tokenizer_files_only(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("transformers")
    _repo(hub_cache, "org/bert", {name: _bert().parent / name for name in BERT_FILES})
    calls: list[dict[str, Any]] = []
    real = hub.snapshot_download

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(hub, "snapshot_download", spy)
    tok = tokenmill.transformers.from_pretrained("org/bert", revision=MAIN, token="secret", model_max_length=7)
    assert tok.model_max_length == 7  # the other arguments go to transformers
    (call,) = calls
    assert call["repo_id"] == "org/bert" and call["revision"] == MAIN and call["token"] == "secret"
    assert {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"} <= set(call["allow_patterns"])
    assert not any(p.endswith((".safetensors", ".bin", "*")) and "/" not in p for p in call["allow_patterns"])


def test_transformers_from_pretrained_errors(hub_cache: Path, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    config = tmp_path / "tokenizer_config.json"
    config.write_text("{}", encoding="utf-8")
    _repo(hub_cache, "org/slow", {"tokenizer_config.json": config})
    with pytest.raises(HubError, match="org/absent: cannot get the tokenizer files"):
        tokenmill.transformers.from_pretrained("org/absent")
    with pytest.raises(tokenmill.ConfigError, match="org/slow: no tokenizer.json"):
        tokenmill.transformers.from_pretrained("org/slow")
    with pytest.raises(tokenmill.ConfigError, match="neither a directory nor a Hugging Face Hub repository id"):
        tokenmill.transformers.from_pretrained(str(tmp_path / "missing"))
    # A path that is not there stays a path (no Hub lookup for a Path).
    with pytest.raises(tokenmill.ConfigError, match="no tokenizer.json"):
        tokenmill.transformers.from_pretrained(tmp_path / "missing")


# -- async_encode -------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_async_encode_equals_encode() -> None:
    ours = Tokenizer.from_file(_bert())
    theirs = hf.Tokenizer.from_file(str(_bert()))
    for tok in (ours, theirs):
        tok.no_padding()
    for text in TEXTS:
        got = await ours.async_encode(text)
        _same(got, ours.encode(text))
        _same(got, theirs.encode(text))
        # tokenizers' own async_encode agrees except for offsets, which it gives in UTF-8 bytes
        # (0.23.3 calls the core's `encode`, not `encode_char_offsets`: huggingface/tokenizers
        # pull request 2369); tokenmill's are characters, as `encode`'s and as documented.
        async_theirs = await theirs.async_encode(text)
        for field in FIELDS:
            if field != "offsets" or text.isascii():
                assert getattr(got, field) == getattr(async_theirs, field), field
    got = await ours.async_encode("my name is john", "my pair")
    _same(got, theirs.encode("my name is john", "my pair"))
    got = await ours.async_encode("my name is john", add_special_tokens=False)
    _same(got, theirs.encode("my name is john", add_special_tokens=False))
    words = ["my", "name", "is", "john"]
    got = await ours.async_encode(words, ["pair"], is_pretokenized=True)
    _same(got, theirs.encode(words, ["pair"], is_pretokenized=True))


@pytest.mark.asyncio
async def test_async_encode_runs_concurrently_and_keeps_settings() -> None:
    ours = Tokenizer.from_file(_bert())
    theirs = hf.Tokenizer.from_file(str(_bert()))
    for tok in (ours, theirs):
        tok.enable_truncation(8, stride=2)
        tok.enable_padding(length=8)
    texts = [f"{text} number {i}" for i, text in enumerate(TEXTS * 4)]
    results = await asyncio.gather(*(ours.async_encode(text) for text in texts))
    for text, got in zip(texts, results, strict=True):
        expected = theirs.encode(text)
        _same(got, expected)
        assert [o.ids for o in got.overflowing] == [o.ids for o in expected.overflowing]


@pytest.mark.asyncio
async def test_async_encode_raises_as_encode() -> None:
    ours = Tokenizer.from_file(_bert())
    with pytest.raises(TypeError):
        await ours.async_encode("not a list of words", is_pretokenized=True)


@pytest.mark.asyncio
async def test_pretokenized_numpy_arrays_as_tokenizers_takes_them() -> None:
    """A NumPy array of words is a pre-tokenized sequence, as in tokenizers (its async suite
    passes one to `async_encode_batch`)."""
    np = pytest.importorskip("numpy")
    ours = Tokenizer.from_file(_bert())
    theirs = hf.Tokenizer.from_file(str(_bert()))
    for tok in (ours, theirs):
        tok.no_padding()
    words = np.array(["my", "name", "is", "john"], dtype=object)
    _same(ours.encode(words, is_pretokenized=True), theirs.encode(words, is_pretokenized=True))
    _same(await ours.async_encode(words, is_pretokenized=True), theirs.encode(words, is_pretokenized=True))
    batch = np.array([["my", "name"], ["is", "john"]], dtype=object)
    for got, expected in zip(
        await ours.async_encode_batch(batch, is_pretokenized=True),
        theirs.encode_batch(batch, is_pretokenized=True),
        strict=True,
    ):
        _same(got, expected)
    # A fixed-width string array too: the same tokens. (tokenizers 0.23.3 gives such an array's
    # words offsets that are not within them, (0, 5) for "name"; tokenmill's are as for a list.)
    words = np.array(["my", "name", "is", "john"])
    got = ours.encode(words, is_pretokenized=True)
    assert got.ids == theirs.encode(words, is_pretokenized=True).ids
    assert got.offsets == ours.encode(list(words), is_pretokenized=True).offsets
