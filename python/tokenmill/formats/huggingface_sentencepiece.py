"""SentencePiece tokenizers (Unigram, both ways; BPE, written) as Hugging Face `tokenizer.json` files.

A SentencePiece model's normalizer is a character map applied by longest match, then whitespace
rules: spaces at the ends of the text go, runs of spaces become one, a space (the "dummy prefix")
goes in front, and every space is written `▁`. Hugging Face spells the map as a `Precompiled`
normalizer holding the same blob, and the rest as steps of its own:

    Precompiled(map)                      the character map
    Replace(/\\A +/, "")                  leading spaces go
    Replace(/[ ▁]+\\z/, "")               trailing spaces go, and trailing ▁s of the text itself,
                                          as SentencePiece drops them
    Replace(/ {2,}/, " ")                 runs of spaces become one
    Replace(" ", "▁")                     spaces are written ▁
    Prepend("▁")                          the dummy prefix, on a text that is not empty
    Metaspace(prepend_scheme="never", split=True)    cut before each ▁ (pre-tokenizer)

(without the removal of extra spaces, the dummy prefix goes first, before the map: see
`_normalizers`).

`to_tokenizer_json` writes that pipeline (the steps for the flags that are on); it equals
SentencePiece (and so tokenmill) on every text whose normalized form Hugging Face gets right,
and the normalized form is right on every text except as listed:

- Hugging Face's Unigram lattice holds every vocabulary entry, SentencePiece's only normal and
  user-defined pieces: a text that spells a byte piece (``<0x41>``) or an unused piece gets
  that piece from Hugging Face and its characters from SentencePiece.
- Control pieces (``<s>``, ``</s>``) are written as special added tokens, as transformers'
  converters write them: Hugging Face matches them in text, SentencePiece never does.
- Added tokens split the text before normalization, and each stretch between them is
  normalized alone; so a text holding a control piece has its whitespace rules (and dummy
  prefix) applied to each stretch. User-defined pieces are therefore not written as added
  tokens but left to the lattice, where their score of 0 wins as SentencePiece's -0.1 does;
  unlike SentencePiece, the map applies to their text (the symbols one picks rarely have rules).
- Hugging Face's `Precompiled` applies the map to each grapheme cluster: a cluster shorter than
  6 bytes whose first character has a rule is replaced whole by that rule's output (ĳ + U+A827
  → "ij", the mark lost; CR LF → one space), where SentencePiece maps character by character,
  longest match first. No other step can undo that.
- With ▁ as a suffix (`treat_whitespace_as_suffix`), SentencePiece appends it to a text the map
  deletes entirely ("\\x14" → "▁"); here such a text stays empty. (Without the removal of extra
  spaces the dummy prefix goes in before the map, which gets this case right for prefixes.)
- Two cuts with the same score (a run of one character, "0" * 27): Hugging Face's Viterbi
  keeps another of them than SentencePiece's.
- A rule of the map whose output holds two spaces in a row keeps them in SentencePiece and is
  collapsed here (no rule of SentencePiece's built-in maps does that).

For a BPE model the last step is Hugging Face's BPE with byte fallback and fused unknowns,
its merges every split of a piece into two pieces ranked by the piece's score. Two more
differences: user-defined pieces are added tokens (there is no lattice for them to win in), so
they cut the text before normalization as control pieces do; and pieces of equal score get
distinct ranks (SentencePiece's trainer never gives two pieces one score). Unused pieces have
no Hugging Face form and are refused. Such files are written only; reading them back is to do.

`read_tokenizer_json` reads Unigram files. One whose pre-tokenizer is a single `Metaspace` (or
none) — the files transformers' converters wrote until version 5 (`Strip` + `Replace(/ {2,}/, "▁")`
+ `Metaspace(prepend_scheme="always")`, XLM-R's, ALBERT's with NFKD and StripAccents), and these
written by `to_tokenizer_json` — or transformers 5's `WhitespaceSplit` + `Metaspace("always")`
runs exactly as `tokenizers` runs it, every difference above included: its normalizers through
Hugging Face's chain in Rust (`Precompiled` a grapheme cluster at a time), Metaspace's ▁ and
prefix (before each word, for the pair), a piece starting at each ▁, and Hugging Face's cut of
each piece (f64 sums over every vocabulary entry). Files with ▁ as a suffix, and other Metaspace
schemes after `WhitespaceSplit`, are read onto SentencePiece's rules instead, which differ from
Hugging Face's in ways `_whitespace_shape` lists.

>>> from tokenmill import Tokenizer
>>> tok = Tokenizer.from_sentencepiece("spm.model")
>>> tok.to_huggingface("tokenizer.json")
>>> Tokenizer.from_huggingface("tokenizer.json").encode("Hello world") == tok.encode("Hello world")
True
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from typing import Any

from tokenmill import _core
from tokenmill._files import write_atomically
from tokenmill.formats import huggingface as hf
from tokenmill.formats import sentencepiece as spm
from tokenmill.formats.sentencepiece_tokenizer import METASPACE, normalizer_parts


def _regex(pattern: str) -> dict[str, str]:
    return {"Regex": pattern}


def _replace(pattern: dict[str, str], content: str) -> dict[str, Any]:
    return {"type": "Replace", "pattern": pattern, "content": content}


# The whitespace steps `to_tokenizer_json` writes (after the map), by SentencePiece flag.
_LEADING = _replace(_regex(r"\A +"), "")
_TRAILING = _replace(_regex(r"[ " + METASPACE + r"]+\z"), "")
_RUNS = _replace(_regex(" {2,}"), " ")
_ESCAPE = _replace({"String": " "}, METASPACE)
_DUMMY_PREFIX = {"type": "Prepend", "prepend": METASPACE}
_DUMMY_SUFFIX = _replace(_regex(r"\z"), METASPACE)  # a Replace of the empty match at the end: none on ""


def _rule_starts(spec: dict[str, Any]) -> Callable[[str], bool]:
    """Whether some rule of the SentencePiece normalizer `spec` (its rules, or the precompiled
    map it keeps) has a key starting with a given text."""
    kept = spec.get("precompiled_charsmap")
    if kept:
        return _core.PrecompiledCharsmap(base64.b64decode(kept)).starts_key
    keys = [key for key, _ in spec.get("rules", [])]
    return lambda prefix: any(key.startswith(prefix) for key in keys)


def _normalizers(
    spec: dict[str, Any], precompiled: dict[str, Any] | None, rule_starts: Callable[[str], bool]
) -> list[dict[str, Any]]:
    """The normalizers for SentencePiece's flags in `spec` after the map step `precompiled`,
    whose keys `rule_starts` knows.
    Without the removal of extra spaces, SentencePiece adds the dummy prefix to any text that is
    not empty, even one the map deletes entirely: the prefix then goes before the map."""
    steps = _whitespace_steps(spec)
    mapped = [*([precompiled] if precompiled else []), *steps]
    if spec["remove_extra_whitespaces"] or not spec["add_dummy_prefix"]:
        return mapped
    # The dummy must pass the map unchanged: a space (escaped with the others) or a ▁ that starts
    # no rule's key. (nmt_nfkc maps ▁ to a space, and no key of it starts with a space.)
    for dummy in (" ", METASPACE) if spec["escape_whitespaces"] else (" ",):
        if not rule_starts(dummy):
            if spec.get("treat_whitespace_as_suffix"):
                return [_replace(_regex(r"\z"), dummy), *mapped[:-1]]
            return [{"type": "Prepend", "prepend": dummy}, *mapped[:-1]]
    return mapped


def _whitespace_steps(spec: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    if spec["remove_extra_whitespaces"]:
        if not spec["escape_whitespaces"]:  # the trailing ▁s of the text go only when spaces are ▁s
            steps += [_LEADING, _replace(_regex(r" +\z"), ""), _RUNS]
        else:
            steps += [_LEADING, _TRAILING, _RUNS]
    if spec["escape_whitespaces"]:
        steps.append(_ESCAPE)
    if spec["add_dummy_prefix"]:
        if spec.get("treat_whitespace_as_suffix"):
            steps.append(_DUMMY_SUFFIX if spec["escape_whitespaces"] else _replace(_regex(r"\z"), " "))
        else:
            steps.append(_DUMMY_PREFIX if spec["escape_whitespaces"] else {"type": "Prepend", "prepend": " "})
    return steps


def _tokens_by_id(doc: dict[str, Any]) -> dict[int, tuple[str, str]]:
    """id -> (text, kind) for every token of a tokenmill description."""
    out: dict[int, tuple[str, str]] = {}
    for i, b64 in enumerate(doc["model"]["tokens"]):
        if b64 is not None:
            out[i] = (base64.b64decode(b64).decode("utf-8"), "normal")
    for i, b64 in doc["model"].get("far_tokens", []):
        out[i] = (base64.b64decode(b64).decode("utf-8"), "normal")
    for text, i in doc.get("special_tokens", []):
        out[i] = (text, "special")
    for text, i, kind in doc.get("other_tokens", []):
        out[i] = (text, kind)
    return out


def to_tokenizer_json(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    """Writes a Unigram or SentencePiece BPE tokenizer as a `tokenizer.json` (the pipeline in
    the module docstring, with Hugging Face's Unigram or BPE model at the end).

    >>> from tokenmill import Tokenizer
    >>> to_tokenizer_json("unigram.json", Tokenizer.from_sentencepiece("spm.model")._core)
    >>> Tokenizer.from_huggingface("unigram.json").tokenize("Hello world")
    ['▁H', 'ell', 'o', '▁world']
    """
    doc = json.loads(core.to_json())
    # Read from a tokenizer.json and run as Hugging Face runs it: written back with its own chain.
    exact = doc["model"].get("huggingface_scores") is not None
    words = False  # the file's pre-tokenizers were WhitespaceSplit + Metaspace
    steps, sentencepiece = normalizer_parts(doc)
    # Steps before the whitespace rules (Hugging Face's own, read from such a file, or tokenmill's
    # such as a trained model's NFKC) go in front of the map.
    leading: list[dict[str, Any]] = hf.hf_normalizers(steps)
    tokens = _tokens_by_id(doc)
    missing = sorted(set(range(len(tokens))) - set(tokens))
    if missing:
        raise _core.ConfigError(
            f"a Hugging Face Unigram vocabulary numbers its pieces 0, 1, 2, ...; no id {missing[0]}"
        )
    spec = sentencepiece or {
        "rules": [],
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
        "escape_whitespaces": False,
    }
    precompiled = None
    # The map read from a `.model` file as it was; rules go into a map built here.
    charsmap = spec.get("precompiled_charsmap")
    if not charsmap and spec["rules"]:
        charsmap = base64.b64encode(spm.build_charsmap(dict(spec["rules"]))).decode("ascii")
    if charsmap:
        precompiled = {"type": "Precompiled", "precompiled_charsmap": charsmap}
    normalizers = leading + _normalizers(spec, precompiled, _rule_starts(spec))
    pretokenizer = doc["pretokenizer"]
    if exact:
        # The file's own chain (all of it in `leading`), and its Metaspace back from the prefix scheme
        # and the split before each ▁.
        scheme = {"none": "never"}.get(spec.get("metaspace_prefix", "none"), spec.get("metaspace_prefix"))
        pretokenizer = "metaspace" if pretokenizer == _SPLIT_AT_METASPACE else "metaspace_unsplit"
        normalizers = leading
        words = bool(leading) and leading[-1] == _METASPACE_WORDS
        if words:
            normalizers, scheme = leading[:-1], "always"
    # "metaspace_runs" (runs of ▁ kept with the word after them) is a cut that changes nothing:
    # the text stays one piece for Hugging Face.
    if pretokenizer not in ("metaspace", "metaspace_suffix", "metaspace_unsplit", "metaspace_runs", "none") or doc.get(
        "pretokenizer_keeps_gaps"
    ):
        raise _core.ConfigError(f"pre-tokenizer {pretokenizer!r} before a Unigram model has no Hugging Face form here")
    pre = None
    if spec["escape_whitespaces"]:
        # Cutting before each ▁ is what SentencePiece's one lattice gives when no piece holds an inner ▁
        # (tokenmill's "metaspace"); otherwise, and with ▁ as a suffix, the text stays one piece.
        pre = {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": scheme if exact else "never"}
        pre["split"] = pretokenizer == "metaspace"
    if exact and words:
        metaspace = {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always", "split": True}
        pre = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]}

    added = [_added(i, text) for i, (text, kind) in sorted(tokens.items()) if kind in ("control", "special")]
    if doc["model"]["type"] == "bpe":
        # BPE has no lattice to let a user-defined piece win: it is an added token, matched in
        # the normalized text as SentencePiece matches it.
        user_defined = doc["model"].get("user_defined", [])
        added += [_added(i, tokens[i][0], special=False, normalized=False) for i in user_defined]
        added.sort(key=lambda entry: entry["id"])
    decoders: list[dict[str, Any]] = [_replace({"String": METASPACE}, " ")] if spec["escape_whitespaces"] else []
    if doc["model"].get("byte_fallback", False):
        decoders += [{"type": "ByteFallback"}, {"type": "Fuse"}]
    if spec["add_dummy_prefix"] and not spec.get("treat_whitespace_as_suffix"):
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    if exact and doc.get("hf_decoder"):
        decoders = [doc["hf_decoder"]]

    def token_of(i: int) -> str:
        return tokens[i][0]

    inputs = json.loads(core.hf_model_inputs_json(token_of))
    data = {
        "version": "1.0",
        "truncation": inputs["truncation"],
        "padding": inputs["padding"],
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": normalizers} if normalizers else None,
        "pre_tokenizer": pre,
        "post_processor": inputs["post_processor"],
        "decoder": {"type": "Sequence", "decoders": decoders} if decoders else None,
        "model": _unigram_model(doc, tokens) if doc["model"]["type"] == "unigram" else _bpe_model(core, doc, tokens),
    }
    write_atomically(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def _unigram_model(doc: dict[str, Any], tokens: dict[int, tuple[str, str]]) -> dict[str, Any]:
    scores = doc["model"].get("huggingface_scores") or doc["model"]["scores"]
    return {
        "type": "Unigram",
        "unk_id": next(i for i, (_, kind) in tokens.items() if kind == "unknown"),
        "vocab": [[tokens[i][0], scores[i] if i < len(scores) else 0.0] for i in range(len(tokens))],
        "byte_fallback": doc["model"].get("byte_fallback", False),
    }


def _bpe_model(core: _core.CoreTokenizer, doc: dict[str, Any], tokens: dict[int, tuple[str, str]]) -> dict[str, Any]:
    """SentencePiece BPE as Hugging Face BPE: the merges are every split of a piece into two
    pieces, ranked by the piece's score. Hugging Face gives each merge its own rank where
    SentencePiece lets position decide between pieces of equal score; SentencePiece's trainer
    gives every piece its own score, so trained models are unaffected."""
    if doc["model"].get("scores") is None:
        raise _core.ConfigError("this BPE model is not SentencePiece's; huggingface.py writes its tokenizer.json")
    if any(kind == "unused" for _, kind in tokens.values()):
        raise _core.ConfigError(
            "Hugging Face's BPE has no unused pieces (SentencePiece splits them back after merging)"
        )
    unknown = next(text for text, kind in tokens.values() if kind == "unknown")
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": unknown,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": doc["model"].get("fuse_unk", False),
        "byte_fallback": doc["model"].get("byte_fallback", False),
        "ignore_merges": False,
        "vocab": {text: i for i, (text, _) in sorted(tokens.items())},
        "merges": [[left.decode("utf-8"), right.decode("utf-8")] for left, right in core.merges()],
    }


def _added(i: int, text: str, *, special: bool = True, normalized: bool = False) -> dict[str, Any]:
    entry = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": normalized, "special": special}
    return {"id": i, "content": text, **entry}


# --- Reading. A file's whitespace steps (the normalizers after `Precompiled`, and the
# pre-tokenizers) are matched against the shapes below; each gives SentencePiece's flags.


def _flags(dummy: bool, remove: bool, escape: bool, suffix: bool = False) -> dict[str, bool]:
    return {
        "add_dummy_prefix": dummy,
        "remove_extra_whitespaces": remove,
        "escape_whitespaces": escape,
        "treat_whitespace_as_suffix": suffix,
    }


def _metaspace(step: dict[str, Any], where: str) -> tuple[str, bool]:
    """(prepend scheme, split) of a Metaspace pre-tokenizer, in old files' spelling too."""
    if step.get("replacement", METASPACE) != METASPACE:
        raise _core.FormatError(f"{where}: Metaspace with replacement {step.get('replacement')!r} is not supported")
    scheme = step.get("prepend_scheme")
    if scheme is None:
        scheme = "always" if step.get("add_prefix_space", True) else "never"
    return scheme, bool(step.get("split", True))


def _step_name(step: dict[str, Any]) -> str:
    return json.dumps(step, ensure_ascii=False)


def _whitespace_shape(
    normalizers: list[dict[str, Any]],
    precompiled: dict[str, Any] | None,
    rule_starts: Callable[[str], bool],
    pre: list[dict[str, Any]],
    where: str,
) -> tuple[dict[str, bool], str]:
    """SentencePiece's flags and tokenmill's pre-tokenizer for a file's normalizers (its map
    step is `precompiled`, whose keys `rule_starts` knows) and pre-tokenizers.

    - tokenmill's own steps (`_whitespace_steps`) with `Metaspace(prepend_scheme="never")` or
      no pre-tokenizer: exact.
    - transformers' `SpmConverter`: `Strip(right)` (or both sides) and `Replace(/ {2,}/, "▁")`, then
      `Metaspace(prepend_scheme="always")`: the flags with all three rules on. Not exact: `Strip`
      removes any Unicode whitespace at the end (SentencePiece only spaces), a text that starts
      with a ▁ gets no dummy prefix, and ▁s at the end of the text stay.
    - transformers 5's T5 and its kin: `WhitespaceSplit` then `Metaspace(prepend_scheme="always")`,
      no whitespace normalizers: the same flags. Not exact: any Unicode whitespace the map left
      (a tab, U+2028) separates words and goes, where SentencePiece keeps it as a character.
    """
    metaspaces = [s for s in pre if s.get("type") == "Metaspace"]
    others = [s for s in pre if s.get("type") not in ("Metaspace", "WhitespaceSplit")]
    if others:
        raise _core.FormatError(
            f"{where}: pre-tokenizer {others[0].get('type')!r} before a Unigram model is not supported"
        )
    if len(metaspaces) > 1 or (pre and pre[-1].get("type") != "Metaspace"):
        raise _core.FormatError(f"{where}: pre-tokenizers {[s.get('type') for s in pre]} are not supported")
    scheme, split = _metaspace(metaspaces[0], where) if metaspaces else ("never", False)
    pretokenizer = "metaspace" if split else "none"
    whitespace_split = len(pre) == 2
    if scheme == "never" and not whitespace_split:
        for dummy in (False, True):
            for remove in (False, True):
                for escape in (False, True):
                    for suffix in (False, True) if dummy else (False,):
                        flags = _flags(dummy, remove, escape, suffix)
                        expected = _normalizers(flags, precompiled, rule_starts)
                        if normalizers == expected and (escape or not metaspaces):
                            return flags, pretokenizer
    elif scheme in ("always", "first"):
        steps = normalizers[1:] if normalizers and normalizers[0] is precompiled else list(normalizers)
        if whitespace_split and not steps:
            return _flags(True, True, True), pretokenizer
        if steps and steps[0].get("type") == "Strip" and steps[0].get("right", steps[0].get("strip_right")):
            steps = steps[1:]
        runs = {"type": "Replace", "pattern": {"Regex": " {2,}"}}
        if not whitespace_split and [{k: s.get(k) for k in runs} for s in steps] == [runs]:
            if steps[0].get("content") in (" ", METASPACE):
                return _flags(True, True, True), pretokenizer
    what = [_step_name(s) for s in normalizers if s is not precompiled] + [_step_name(s) for s in pre]
    raise _core.FormatError(
        f"{where}: the whitespace steps {', '.join(what) or '(none)'} have no SentencePiece equivalent "
        "(tokenmill reads Precompiled + Metaspace pipelines as SentencePiece converters write them)"
    )


def read_tokenizer_json(document: _core.TokenizerJson, data: dict[str, Any], where: str) -> _core.CoreTokenizer:
    """A tokenizer from a Unigram `tokenizer.json` (read by Rust; `data` is its component
    sections): `Precompiled` map, whitespace steps of a shape `_whitespace_shape` knows,
    `Metaspace`, `Unigram`. Added tokens become special tokens (the unknown piece stays the
    unknown piece; pass ``allowed_special="all"`` to `encode` to match them in text as Hugging
    Face does), `<0xXX>` pieces byte tokens when the model falls back to bytes. `FormatError`
    names the part tokenmill cannot express.

    >>> from tokenmill import Tokenizer
    >>> Tokenizer.from_sentencepiece("spm.model").to_huggingface("unigram.json")
    >>> document, sections = hf.open_tokenizer_json("unigram.json")
    >>> read_tokenizer_json(document, sections, "unigram.json").model_type
    'unigram'
    """
    model = data["model"]
    size, has_scores = document.vocab_shape
    if not has_scores:
        raise _core.FormatError(f"{where}: a Unigram model's vocab is a list of [piece, score]")
    unk_id = model.get("unk_id")
    if unk_id is not None and (isinstance(unk_id, bool) or not isinstance(unk_id, int) or not 0 <= unk_id < size):
        raise _core.FormatError(f"{where}: unk_id {unk_id!r} is not the id of one of the model's {size} pieces")
    steps = hf._flat_normalizers(data.get("normalizer"))
    pre = data.get("pre_tokenizer")
    pre_steps = [] if pre is None else pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    if pre_steps and all(s.get("type") != "Metaspace" for s in pre_steps):
        # Splitting pre-tokenizers without a Metaspace (ByteLevel, Whitespace, Split…):
        # tokenizers' own pipeline.
        return _read_behind_splits(document, model, unk_id, data.get("normalizer"), pre_steps, where)
    words = [s.get("type") for s in pre_steps] == ["WhitespaceSplit", "Metaspace"]
    if words and _metaspace(pre_steps[1], where) == ("always", True):
        # transformers 5's T5: words split at whitespace, a ▁ before each, a piece at each ▁.
        return _read_as_huggingface(document, model, unk_id, [*steps, _METASPACE_WORDS], pre_steps[1:], where)
    if len(pre_steps) <= 1 and all(s.get("type") == "Metaspace" for s in pre_steps):
        if unk_id is None:
            # Without an unknown piece, tokenizers' own cut (which then refuses unknown text).
            return _read_as_huggingface(document, model, unk_id, steps, pre_steps, where)
        try:
            return _read_as_huggingface(document, model, unk_id, steps, pre_steps, where)
        except _core.FormatError as e:
            # A step Hugging Face's chain cannot run here (a Replace of the empty match at the
            # end, as tokenmill's own files spell ▁ as a suffix): read onto SentencePiece's rules.
            if "not one tokenmill runs exactly" not in str(e):
                raise
    # Steps before the map (ALBERT's converter: quotes, NFKD, StripAccents, Lowercase) run as
    # Hugging Face runs them; the map and the whitespace steps after it are SentencePiece's.
    at = next((i for i, step in enumerate(steps) if step.get("type") == "Precompiled"), 0)
    leading, steps = steps[:at], steps[at:]
    decomposing = [s["type"] for s in leading if s.get("type") in ("NFD", "NFKD")]
    if decomposing:
        # Hugging Face's Precompiled maps a grapheme cluster of 6 bytes or more character by
        # character: after a decomposition that is every Hangul syllable (and most accented
        # letters), which SentencePiece's rules recompose; tokenmill follows SentencePiece's map.
        raise _core.FormatError(
            f"{where}: normalizer {decomposing[0]} before Precompiled is not supported (Hugging Face then "
            "maps decomposed grapheme clusters character by character, which tokenmill does not copy)"
        )
    if unk_id is None:
        raise _core.FormatError(
            f"{where}: a Unigram model without an unknown piece (unk_id null) is read only "
            "with one Metaspace pre-tokenizer or none"
        )
    leading_spec = "hf:" + json.dumps({"type": "Sequence", "normalizers": leading}) if leading else "none"
    for step in steps:
        if step.get("type") not in ("Precompiled", "Replace", "Strip", "Prepend"):
            raise _core.FormatError(f"{where}: normalizer {step.get('type')!r} before a Unigram model is not supported")
    maps = [step for step in steps if step.get("type") == "Precompiled"]
    if len(maps) > 1:
        raise _core.FormatError(f"{where}: more than one Precompiled normalizer is not supported")
    # The map is kept as it is (the normalizer walks it), not expanded into rules.
    blob = base64.b64decode(maps[0].get("precompiled_charsmap") or "") if maps else b""
    charsmap = None
    if blob:
        try:
            charsmap = _core.PrecompiledCharsmap(blob)  # checked once, handed to the tokenizer as it is
        except _core.FormatError as e:
            raise _core.FormatError(f"{where}: {e}") from None
    flags, pretokenizer = _whitespace_shape(
        steps, maps[0] if maps else None, charsmap.starts_key if charsmap else lambda _: False, pre_steps, where
    )
    return _unigram(
        document,
        where,
        unk_id=unk_id,
        byte_fallback=bool(model.get("byte_fallback", False)),
        **flags,
        precompiled_charsmap=charsmap,
        pretokenizer=pretokenizer,
        steps=leading_spec,
    )


def _unigram(document: _core.TokenizerJson, where: str, **settings: Any) -> _core.CoreTokenizer:
    """`document.unigram(**settings)`, any error a FormatError naming the file."""
    try:
        return document.unigram(**settings)
    except _core.TokenmillError as e:
        if isinstance(e, _core.FormatError) and str(e).startswith(where):
            raise
        raise _core.FormatError(f"{where}: {e}") from None


# tokenmill's normalizer step for WhitespaceSplit + Metaspace(prepend_scheme="always"): whitespace
# dropped, a ▁ before each word that lacks one (`normalize_huggingface.rs`).
_METASPACE_WORDS = {"type": "MetaspaceWords"}

# Hugging Face's Metaspace split: a piece starts at each ▁.
_SPLIT_AT_METASPACE = hf.HF_PREFIX + json.dumps(
    {"type": "Split", "pattern": {"String": METASPACE}, "behavior": "MergedWithNext", "invert": False},
    ensure_ascii=False,
)


def _read_behind_splits(
    document: _core.TokenizerJson,
    model: dict[str, Any],
    unk_id: int | None,
    normalizer: Any,
    pre_steps: list[dict[str, Any]],
    where: str,
) -> _core.CoreTokenizer:
    """A Unigram file behind Hugging Face's splitting pre-tokenizers (no Metaspace), run as
    `tokenizers` runs it: its normalizers, its splits, and Hugging Face's cut of each piece — in
    the piece's byte-level spelling behind a `ByteLevel` step (the tutorial's NFKC + ByteLevel
    Unigram), whose vocabulary is spelled so."""
    kinds = [s.get("type") for s in pre_steps]
    byte_level = "ByteLevel" in kinds
    if byte_level and kinds.index("ByteLevel") != len(kinds) - 1:
        # A step after it would see the byte-level spelling, which tokenmill never builds.
        raise _core.FormatError(f"{where}: a pre-tokenizer after ByteLevel before a Unigram model is not supported")
    steps = hf._flat_normalizers(normalizer)
    splits = [dict(s) for s in pre_steps]
    if byte_level and splits[-1].get("add_prefix_space", True):
        if len(splits) > 1:
            raise _core.FormatError(
                f"{where}: ByteLevel add_prefix_space after another pre-tokenizer is not supported: "
                "it puts a space before every piece"
            )
        # As the first pre-tokenizer, a space before each stretch of normalized text.
        steps.append({"type": "SpaceBefore"})
        splits[-1]["add_prefix_space"] = False
    return _hf_unigram(document, model, unk_id, steps, hf.hf_splits(splits, where), where, byte_level=byte_level)


def _read_as_huggingface(
    document: _core.TokenizerJson,
    model: dict[str, Any],
    unk_id: int | None,
    steps: list[dict[str, Any]],
    pre_steps: list[dict[str, Any]],
    where: str,
) -> _core.CoreTokenizer:
    """A Unigram file whose pre-tokenizer is one `Metaspace` (or none), run exactly as
    `tokenizers` runs it: its normalizers as Hugging Face's (`Precompiled` a grapheme cluster at
    a time), then Metaspace's ▁ for each space and its prefix, a piece starting at each ▁ when it
    splits, and Hugging Face's cut of each piece (`Unigram::huggingface` in Rust)."""
    scheme, split = _metaspace(pre_steps[0], where) if pre_steps else ("never", False)
    if steps and steps[-1] == _METASPACE_WORDS:
        scheme = "never"  # the step put the ▁s in
    pretokenizer = _SPLIT_AT_METASPACE if split else "none"
    return _hf_unigram(
        document, model, unk_id, steps, pretokenizer, where, escape_whitespaces=bool(pre_steps), metaspace_prefix=scheme
    )


def _hf_unigram(
    document: _core.TokenizerJson,
    model: dict[str, Any],
    unk_id: int | None,
    steps: list[dict[str, Any]],
    pretokenizer: str,
    where: str,
    **whitespace: Any,
) -> _core.CoreTokenizer:
    """A Unigram tokenizer cut as `tokenizers` cuts (`Unigram::huggingface` in Rust): the file's
    normalizer `steps` as Hugging Face runs them, then `pretokenizer`, and SentencePiece's
    whitespace rules off but for what `whitespace` turns on (Metaspace's ▁s, byte level)."""
    chain = "none"
    if steps:
        chain = hf.HF_PREFIX + json.dumps({"type": "Sequence", "normalizers": steps}, ensure_ascii=False)
    settings: dict[str, Any] = {
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
        "escape_whitespaces": False,
        "treat_whitespace_as_suffix": False,
        **whitespace,
    }
    return _unigram(
        document,
        where,
        unk_id=unk_id,
        byte_fallback=bool(model.get("byte_fallback", False)),
        precompiled_charsmap=None,
        pretokenizer=pretokenizer,
        steps=chain,
        huggingface=True,
        **settings,
    )
