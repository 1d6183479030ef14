"""Hugging Face `tokenizer.json` (byte-level BPE) and GPT-2's `vocab.json` + `merges.txt`.

Byte-level BPE files spell each byte as a printable character: bytes that are printable in
Latin-1 stand for themselves, the other 68 are moved to code points from U+0100 on, in order.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tokenmill import _core
from tokenmill._files import input_file, write_atomically
from tokenmill.pretokenize_patterns import CHAIN_PREFIX, HF_PREFIX, ONIGURUMA_PATTERNS, preset_for_pattern


def _byte_to_char() -> list[str]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = [""] * 256
    for b in printable:
        table[b] = chr(b)
    moved = 0
    for b in range(256):
        if not table[b]:
            table[b] = chr(0x100 + moved)
            moved += 1
    return table


BYTE_TO_CHAR = _byte_to_char()
CHAR_TO_BYTE = {c: b for b, c in enumerate(BYTE_TO_CHAR)}


def token_to_text(token: bytes) -> str:
    return "".join(BYTE_TO_CHAR[b] for b in token)


def text_to_token(text: str, where: str) -> bytes:
    try:
        return bytes(CHAR_TO_BYTE[c] for c in text)
    except KeyError as e:
        raise _core.FormatError(
            f"{where}: token {text!r} has {e.args[0]!r}, which is not a byte-level character "
            "(only byte-level BPE files are supported)"
        ) from None


_NORMALIZERS = {"NFC": "nfc", "NFD": "nfd", "NFKC": "nfkc", "NFKD": "nfkd", "Lowercase": "lowercase_chars"}


def _flat_normalizers(node: Any) -> list[Any]:
    if node is None:
        return []
    if node.get("type") == "Sequence":
        return [n for child in node.get("normalizers", []) for n in _flat_normalizers(child)]
    return [node]


def _normalizer_spec(node: Any, where: str) -> list[str]:
    steps = _flat_normalizers(node)
    out: list[str] = []
    i = 0
    while i < len(steps):
        kind = steps[i].get("type")
        if steps[i : i + 2] == _PREFIX_SPACE:
            out.append("prefix_space")
            i += 2
            continue
        if kind == "BertNormalizer":
            from tokenmill.formats.wordpiece import bert_normalizer

            n = steps[i]
            spec = bert_normalizer(
                clean_text=bool(n.get("clean_text", True)),
                handle_chinese_chars=bool(n.get("handle_chinese_chars", True)),
                strip_accents=n.get("strip_accents"),
                lowercase=bool(n.get("lowercase", True)),
            )
            out.extend(step for step in spec.split("+") if step != "none")
            i += 1
            continue
        if kind not in _NORMALIZERS:
            # Not a sequence of our own steps: Hugging Face's normalizers as the file spells
            # them, run by tokenmill's implementation of each (`hf:` and the JSON), which names
            # a component it does not run.
            return ["hf:" + json.dumps(node, separators=(",", ":"), ensure_ascii=False)]
        out.append(_NORMALIZERS[kind])
        i += 1
    if len(out) > 1 and any(step.startswith("nf") for step in out):
        # A normal form chained with other steps: tokenmill's own steps give such a chain coarse
        # offsets; Hugging Face's, each character's own.
        return ["hf:" + json.dumps(node, separators=(",", ":"), ensure_ascii=False)]
    return out


def _pre_tokenizer(node: Any, where: str) -> tuple[str, bool, bool]:
    """(pattern, keep_gaps, add_prefix_space) for a byte-level pre-tokenizer: a preset or regex
    where the file spells one, Hugging Face's own splitting steps (`hf:`) otherwise."""
    if node is None:
        raise _core.FormatError(f"{where}: no pre_tokenizer; only byte-level BPE files are supported")
    steps = node["pretokenizers"] if node.get("type") == "Sequence" else [node]
    try:
        return _known_shape(steps, where)
    except _core.FormatError:
        if not steps or steps[-1].get("type") != "ByteLevel" or len(steps) == 1:
            raise
    # Other splitting steps before the ByteLevel one, which must come last: a step after it would
    # see GPT-2's byte spelling of the text ("Ġ" for a space), which tokenmill never builds.
    *before, byte_level = steps
    if byte_level.get("add_prefix_space", False):
        raise _core.FormatError(
            f"{where}: ByteLevel add_prefix_space after a Split (or another pre-tokenizer) is not supported: "
            "it puts a space before every piece"
        )
    return hf_splits([*before, byte_level], where), False, False


def hf_splits(steps: list[Any], where: str) -> str:
    """The `hf:` pre-tokenizer spec for Hugging Face splitting steps, checked by Rust (a
    FormatError naming the step tokenmill cannot run)."""
    spec = HF_PREFIX + json.dumps({"type": "Sequence", "pretokenizers": steps}, ensure_ascii=False)
    try:
        _core.split(spec, "")
    except (_core.ConfigError, _core.PatternError) as e:
        raise _core.FormatError(f"{where}: {e}") from None
    return spec


def hf_pre_tokenizer(pattern: str) -> dict[str, Any] | None:
    """The `tokenizer.json` pre-tokenizer for `bert`, `none` (null) or an `hf:` spec; a
    ConfigError for patterns that are none of these."""
    if pattern.startswith(HF_PREFIX):
        return json.loads(pattern[len(HF_PREFIX) :])
    if pattern == "bert":
        return {"type": "BertPreTokenizer"}
    if pattern == "none":
        return None
    raise _core.ConfigError(f"pre-tokenizer {pattern!r} has no Hugging Face spelling here")


def _known_shape(steps: list[Any], where: str) -> tuple[str, bool, bool]:
    """(pattern, keep_gaps, add_prefix_space) for the shapes with a preset, regex or chain."""
    splits = [step for step in steps if step.get("type") == "Split"]
    if len(splits) > 1:
        return _chain(steps, splits, where)
    pattern, keep_gaps, prefix, byte_level = "none", False, False, False
    for step in steps:
        kind = step.get("type")
        if kind == "ByteLevel":
            byte_level = True
            prefix = bool(step.get("add_prefix_space", False))
            if prefix and pattern != "none":
                # After a Split, Hugging Face puts a space before every piece, not once per text.
                raise _core.FormatError(f"{where}: ByteLevel add_prefix_space after a Split is not supported")
            if step.get("use_regex", True):
                if pattern != "none":
                    raise _core.FormatError(f"{where}: a Split and a ByteLevel regex together are not supported")
                pattern = "gpt2"
        elif kind == "Split" and not byte_level:
            regex = step.get("pattern", {}).get("Regex")
            if regex is None:
                raise _core.FormatError(f"{where}: Split on a literal string is not supported")
            behavior, invert = step.get("behavior"), step.get("invert", False)
            if behavior == "Isolated" and not invert:
                preset = preset_for_pattern(regex)
                pattern, keep_gaps = (preset, False) if preset else (regex, True)
            elif behavior == "Removed" and invert:
                pattern, keep_gaps = preset_for_pattern(regex) or regex, False
            else:
                raise _core.FormatError(f"{where}: Split with behavior {behavior!r}, invert={invert} is not supported")
        elif kind == "WhitespaceSplit" and not byte_level:
            pattern = "whitespace"
        else:
            raise _core.FormatError(f"{where}: pre-tokenizer {kind!r} is not supported here")
    if not byte_level:
        raise _core.FormatError(f"{where}: no ByteLevel step; only byte-level BPE files are supported")
    return pattern, keep_gaps, prefix


def _chain(steps: list[Any], splits: list[Any], where: str) -> tuple[str, bool, bool]:
    """Several Splits in a row (DeepSeek's files have three), each cutting the pieces of the one
    before: tokenmill's `chain:` pre-tokenizer. Only Isolated splits, before a ByteLevel step
    without its own regex or prefix space."""
    if [s.get("type") for s in steps] != ["Split"] * len(splits) + ["ByteLevel"]:
        kinds = [s.get("type") for s in steps]
        raise _core.FormatError(f"{where}: pre-tokenizers {kinds} are not supported (Splits, then ByteLevel)")
    byte_level = steps[-1]
    if byte_level.get("use_regex", True) or byte_level.get("add_prefix_space", False):
        raise _core.FormatError(f"{where}: ByteLevel after several Splits must have use_regex and add_prefix_space off")
    patterns = []
    for split in splits:
        regex = split.get("pattern", {}).get("Regex")
        if regex is None or split.get("behavior") != "Isolated" or split.get("invert", False):
            raise _core.FormatError(f"{where}: in a chain of Splits, each must be an Isolated regex: {split}")
        patterns.append(preset_for_pattern(regex) or regex)
    return CHAIN_PREFIX + json.dumps(patterns, ensure_ascii=False, separators=(",", ":")), False, False


def open_tokenizer_json(path: str | os.PathLike[str]) -> tuple[_core.TokenizerJson, dict[str, Any]]:
    """A `tokenizer.json` read by Rust in one pass, and its component sections (everything but
    the model's vocabulary and merges and the added tokens) as a dict."""
    p = input_file(path, "a tokenizer.json")
    document = _core.TokenizerJson(p)
    sections = json.loads(document.sections)
    if not isinstance(sections.get("model"), dict):
        raise _core.FormatError(f"{p}: not a Hugging Face tokenizer.json (the model is not an object)")
    return document, sections


def read_tokenizer_json(document: _core.TokenizerJson, data: dict[str, Any], where: str) -> _core.CoreTokenizer:
    """A byte-level BPE tokenizer from a `tokenizer.json`: its components are read here, its
    vocabulary, merges and added tokens (which become special tokens) in Rust."""
    model = data["model"]
    if model.get("type", "BPE") != "BPE":
        raise _core.FormatError(f"{where}: model type {model.get('type')!r} is not BPE")
    # A continuing-subword prefix and an end-of-word suffix are read in Rust; `dropout` by the
    # caller (`files.from_huggingface`), once the tokenizer is made.
    pattern, keep_gaps, prefix = _pre_tokenizer(data.get("pre_tokenizer"), where)
    normalizer = _normalizer_spec(data.get("normalizer"), where)
    if prefix and normalizer and normalizer[0].startswith("hf:"):
        raise _core.FormatError(
            f"{where}: ByteLevel add_prefix_space after the normalizers {normalizer[0][3:]} is not supported"
        )
    normalizer += ["prefix_space"] if prefix else []
    return document.byte_level_bpe(
        pattern=pattern,
        keep_gaps=keep_gaps,
        normalizer="+".join(normalizer) or "none",
        whole_piece_first=bool(model.get("ignore_merges", False)),
        # Without an unknown token, tokenizers leaves out bytes the vocabulary lacks; with one, a
        # vocabulary lacking bytes is refused (it would stand for them).
        drop_unknown=model.get("unk_token") is None,
    )


def read_wordlevel(document: _core.TokenizerJson, data: dict[str, Any], where: str) -> _core.CoreTokenizer:
    """A WordLevel tokenizer from a `tokenizer.json`: each piece the pre-tokenizer cuts is a word
    of the vocabulary or the unknown token."""
    unk_token = data["model"].get("unk_token", "<unk>")
    if not isinstance(unk_token, str):
        raise _core.FormatError(f"{where}: model.unk_token must be a string, not {unk_token!r}")
    pre = data.get("pre_tokenizer")
    steps = [] if pre is None else pre["pretokenizers"] if pre.get("type") == "Sequence" else [pre]
    return document.wordlevel(
        unk_token=unk_token,
        normalizer="+".join(_normalizer_spec(data.get("normalizer"), where)) or "none",
        pretokenizer=hf_splits(steps, where) if steps else "none",
    )


def write_wordlevel(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    """Writes a WordLevel tokenizer as a `tokenizer.json`: its normalizer and pre-tokenizer in
    Hugging Face's terms, the vocabulary, the unknown token, the decoder it was read with.

    >>> from tokenmill import Tokenizer
    >>> from tokenmill.tokenizers import Tokenizer as HFTokenizer, models, pre_tokenizers
    >>> words = HFTokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    >>> words.pre_tokenizer = pre_tokenizers.Whitespace()
    >>> words.save("wordlevel.json")
    >>> write_wordlevel("copy.json", Tokenizer.from_huggingface("wordlevel.json")._core)
    >>> Tokenizer.from_huggingface("copy.json").encode("hello world")
    [1, 2]
    """
    unk_token = json.loads(core.to_json())["model"]["unk_token"]
    _write_text_tokens(path, core, {"type": "WordLevel", "unk_token": unk_token})


def _write_char_bpe(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    """A character-level BPE tokenizer read from a file with Hugging Face's splitting
    pre-tokenizers (no SentencePiece whitespace rules) written back as such a file."""
    doc = json.loads(core.to_json())
    spec = doc.get("sentencepiece_normalizer") or {}
    if spec.get("rules") or any(
        spec.get(k) for k in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")
    ):
        raise _core.ConfigError(
            "to_huggingface: this character-level BPE model's whitespace rules have no Hugging Face form here"
        )
    config = json.loads(core.model_config_json())

    def text_of(i: int) -> str:
        return core.token_bytes(i).decode("utf-8")

    model = {
        "type": "BPE",
        "dropout": (doc.get("draw") or {}).get("p"),
        "unk_token": config.get("unk_token"),
        "continuing_subword_prefix": config.get("continuing_subword_prefix"),
        "end_of_word_suffix": config.get("end_of_word_suffix"),
        "fuse_unk": config.get("fuse_unk", False),
        "byte_fallback": config.get("byte_fallback", False),
        "ignore_merges": config.get("whole_piece_first", False),
        "merges": [[text_of(a), text_of(b)] for a, b in doc["model"]["merges"]],
    }
    _write_text_tokens(path, core, model)


def _write_text_tokens(path: str | os.PathLike[str], core: _core.CoreTokenizer, model: dict[str, Any]) -> None:
    """Writes a `tokenizer.json` of a tokenizer whose tokens are text (WordLevel, character-level
    BPE): `model` with the vocabulary filled in, and around it the normalizers, pre-tokenizer,
    added tokens, model inputs and the decoder it was read with."""
    specials = dict(core.special_tokens())

    def text_of(i: int) -> str:
        return core.token_bytes(i).decode("utf-8")

    description = json.loads(core.to_json())
    vocab = {text_of(i): i for i in core.ordinary_ids()}
    # Tokens of other kinds are the model's too: a WordLevel or BPE model's unknown token
    # (tokenizers refuses a model whose unk_token is missing from its vocabulary), byte tokens.
    for text, i, _kind in description.get("other_tokens", []):
        vocab.setdefault(text, i)
    vocab.update(specials)
    decoder = description.get("hf_decoder")
    if decoder is not None and decoder.get("type") == "JoinedWithSpaces":
        decoder = None  # what tokenizers does without one
    inputs = json.loads(core.hf_model_inputs_json(text_of))
    normalizers = hf_normalizers(core.normalizer)
    data = {
        "version": "1.0",
        "truncation": inputs["truncation"],
        "padding": inputs["padding"],
        "added_tokens": added_tokens(specials, core),
        "normalizer": {"type": "Sequence", "normalizers": normalizers} if normalizers else None,
        "pre_tokenizer": hf_pre_tokenizer(core.pattern),
        "post_processor": inputs["post_processor"],
        "decoder": decoder,
        "model": {**model, "vocab": vocab},
    }
    write_atomically(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))


# Our `prefix_space` step: a space before a text segment (between special tokens) that does
# not start with one. Hugging Face's ByteLevel `add_prefix_space` is not that: it runs in the
# pre-tokenizer, on every piece an earlier Split made ("a b" → " a", " b"). Normalizers run on
# each segment between added tokens, as ours do, so the step is written as two of them:
# prepend a space to a non-empty segment, then make two leading spaces one again.
_PREFIX_SPACE = [
    {"type": "Prepend", "prepend": " "},
    {"type": "Replace", "pattern": {"Regex": r"\A  "}, "content": " "},
]


def hf_normalizers(spec: str) -> list[dict[str, Any]]:
    """Hugging Face normalizers equal to our normalizer `spec`, or a ConfigError.

    >>> [n["type"] for n in hf_normalizers("nfc+prefix_space")]
    ['NFC', 'Prepend', 'Replace']
    """
    if spec.startswith("hf:"):
        node = json.loads(spec[3:])
        return list(node["normalizers"]) if node.get("type") == "Sequence" else [node]
    out: list[dict[str, Any]] = []
    for step in (s for s in spec.split("+") if s not in ("", "none")):
        if step == "strip_accents":
            # NFD + StripAccents would be the spelling, but Hugging Face's table of combining marks
            # is older than ours (Unicode 9 era): it keeps marks such as U+08CA that ours drops.
            raise _core.ConfigError(
                "normalizer step 'strip_accents' has no exact Hugging Face equivalent (its StripAccents "
                "keeps combining marks newer than its Unicode tables, such as U+08CA); this tokenizer "
                "cannot be exported"
            )
        if step == "prefix_space":
            out += _PREFIX_SPACE
        elif step == "lowercase":
            # Ours lowercases the string (a final capital sigma becomes "ς"), Hugging Face's each
            # character alone ("σ"): the ids would differ on Greek text.
            raise _core.ConfigError(
                "normalizer step 'lowercase' has no exact Hugging Face equivalent (its Lowercase maps a final "
                "'Σ' to 'σ', ours to 'ς'; 'lowercase_chars' is its equivalent); this tokenizer cannot be exported"
            )
        elif step == "lowercase_chars":
            out.append({"type": "Lowercase"})
        elif step.upper() in ("NFC", "NFD", "NFKC", "NFKD"):
            out.append({"type": step.upper()})
        else:
            raise _core.ConfigError(f"normalizer step {step!r} of {spec!r} has no Hugging Face equivalent")
    return out


def added_tokens(specials: dict[str, int], core: _core.CoreTokenizer | None = None) -> list[dict[str, Any]]:
    """Special tokens as `tokenizer.json` added tokens, by id (matched whole); those `core` keeps
    when decoding skips special tokens are not `special`, and those it lets take in the
    whitespace around them (`lstrip`, `rstrip`), matches only as words (`single_word`) or matches
    in the normalized text (`normalized`) say so."""
    strips = {} if core is None else {t: (left, right) for t, left, right in core.special_strips()}
    single = set() if core is None else set(core.single_word_specials())
    normalized = set() if core is None else set(core.normalized_specials())
    return [
        {
            "id": i,
            "content": t,
            "single_word": t in single,
            "lstrip": strips.get(t, (False, False))[0],
            "rstrip": strips.get(t, (False, False))[1],
            "normalized": t in normalized,
            "special": core is None or core.skipped_on_decode(i),
        }
        for t, i in sorted(specials.items(), key=lambda kv: kv[1])
    ]


def write_tokenizer_json(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    """Writes a byte-level BPE `tokenizer.json` that Hugging Face `tokenizers` loads and encodes
    the same way."""
    if not core.byte_level:
        if not (core.pattern.startswith(HF_PREFIX) or core.pattern == "none"):
            # tokenmill's own character-level BPE (regex pre-tokenizers, its rules for
            # characters it never saw) has no exact Hugging Face form.
            raise _core.ConfigError(
                "to_huggingface writes byte-level BPE, and character-level BPE read from a tokenizer.json; "
                "this tokenizer is character-level with tokenmill's own pre-tokenizer"
            )
        _write_char_bpe(path, core)
        return
    normalizers = hf_normalizers(core.normalizer)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    pattern = core.pattern
    pre: list[dict[str, Any]] = []
    if pattern.startswith(HF_PREFIX):
        node = json.loads(pattern[len(HF_PREFIX) :])
        for step in node["pretokenizers"] if node.get("type") == "Sequence" else [node]:
            if step.get("type") != "ByteLevel":
                pre.append(step)
            elif step.get("use_regex", True):
                # Its regex as a Split: the ByteLevel step written below maps bytes, once.
                regex = {"Regex": ONIGURUMA_PATTERNS["gpt2"]}
                pre.append({"type": "Split", "pattern": regex, "behavior": "Isolated", "invert": False})
    elif pattern == "whitespace":
        pre.append({"type": "WhitespaceSplit"})
    elif pattern.startswith(CHAIN_PREFIX):
        for part in json.loads(pattern[len(CHAIN_PREFIX) :]):
            regex = ONIGURUMA_PATTERNS.get(part, part)
            pre.append({"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False})
    elif pattern != "none":
        regex = ONIGURUMA_PATTERNS.get(pattern, pattern)
        isolated = pattern in ONIGURUMA_PATTERNS or core.keeps_gaps
        pre.append(
            {
                "type": "Split",
                "pattern": {"Regex": regex},
                "behavior": "Isolated" if isolated else "Removed",
                "invert": not isolated,
            }
        )
    pre.append(byte_level)
    specials = dict(core.special_tokens())
    # Special tokens go in the model's vocabulary too: Hugging Face keeps an added token's id only
    # when the model knows it, and would renumber it otherwise.
    vocab = {token_to_text(core.token_bytes(i)): i for i in core.ordinary_ids()}
    vocab.update({t: i for t, i in core.special_tokens()})

    def token_of(i: int) -> str:
        return core.token_bytes(i).decode("utf-8") if core.is_special(i) else token_to_text(core.token_bytes(i))

    merges = [[token_to_text(core.token_bytes(a)), token_to_text(core.token_bytes(b))] for a, b in core.merge_ids()]
    inputs = json.loads(core.hf_model_inputs_json(token_of))
    own = json.loads(core.to_json())
    data = {
        "version": "1.0",
        "truncation": inputs["truncation"],
        "padding": inputs["padding"],
        "added_tokens": added_tokens(specials, core),
        "normalizer": {"type": "Sequence", "normalizers": normalizers} if normalizers else None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre},
        "post_processor": inputs["post_processor"],
        # A file read without a decoder (its tokens' strings joined with spaces) is written so.
        "decoder": None
        if (own.get("hf_decoder") or {}).get("type") == "JoinedWithSpaces"
        else {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": (own.get("draw") or {}).get("p"),
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": core.whole_piece_first,
            "vocab": vocab,
            "merges": merges,
        },
    }
    write_atomically(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))
