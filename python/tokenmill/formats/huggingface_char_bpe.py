"""Character-level BPE `tokenizer.json` files: SentencePiece BPE models as transformers converts
them (Llama 2, Mistral, CodeLlama, TinyLlama and their fine-tunes), run as `tokenizers` runs them.

Two spellings of SentencePiece's whitespace are read:

    normalizer  Sequence[Prepend("▁"), Replace(" " → "▁")]     the "legacy" files: every stretch
    pre_tokenizer  null                                          between added tokens gets a ▁

    normalizer  null                                             newer files: a ▁ before a stretch
    pre_tokenizer  Metaspace(prepend_scheme, split)              not starting with one — every
                                                                 stretch ("always") or the text's
                                                                 start ("first")

or neither — no normalizer, and Hugging Face's splitting pre-tokenizers (`Whitespace`, `Digits`,
`Split`, ...) as tokenizers' quick tour trains them; then BPE by the file's merges with byte
fallback (`<0xNN>` tokens) and fused unknowns, and the file's own decoder steps (`Replace`,
`ByteFallback`, `Fuse`, `Strip`, `Metaspace`, run in Rust as `tokenizers` runs them; no decoder
joins the token strings with spaces, as `tokenizers` does). Any other component is a
`FormatError` naming it: such a file is not loaded to run differently.

A file of the third kind, as tokenizers' quick tour trains it:

>>> from tokenmill import Tokenizer
>>> from tokenmill.tokenizers import Tokenizer as HFTokenizer, models, pre_tokenizers, trainers
>>> quick = HFTokenizer(models.BPE(unk_token="[UNK]"))
>>> quick.pre_tokenizer = pre_tokenizers.Whitespace()
>>> quick.train(["corpus.txt"], trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"]))
>>> quick.save("quicktour.json")
>>> tok = Tokenizer.from_huggingface("quicktour.json")
>>> tok.tokenize("Hello tokenizers!")
['Hello', 'tokenizer', 's', '!']
>>> tok.decode(tok.encode("Hello tokenizers!"))   # no decoder: the tokens joined by spaces
'Hello tokenizer s !'
"""

from __future__ import annotations

from typing import Any

from tokenmill import _core
from tokenmill.formats.huggingface import hf_splits

METASPACE = "\u2581"


def is_char_level(data: dict[str, Any], vocab_size: int | None = None) -> bool:
    """Whether a BPE file's pre-tokenizer and decoder have no ByteLevel step (so its tokens are
    text, not GPT-2's byte spelling), or its model has no vocabulary at all and no ByteLevel
    pre-tokenizer (a tokenizer of added tokens alone, whose ByteLevel decoder then decodes
    their strings)."""

    def steps(node: Any, key: str) -> list[Any]:
        if not isinstance(node, dict):
            return []
        if node.get("type") == "Sequence":
            return [s for child in node.get(key, []) for s in steps(child, key)]
        return [node]

    kinds = {s.get("type") for s in steps(data.get("pre_tokenizer"), "pretokenizers")}
    if vocab_size == 0 and "ByteLevel" not in kinds:
        return True
    kinds |= {s.get("type") for s in steps(data.get("decoder"), "decoders")}
    return "ByteLevel" not in kinds


def _whitespace(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The whitespace flags a file's normalizer and pre-tokenizer spell, with its other normalizer
    steps (those before its whitespace steps), or a FormatError."""
    from tokenmill.formats.huggingface import _flat_normalizers, _normalizer_spec

    steps = _flat_normalizers(data.get("normalizer"))
    pre = data.get("pre_tokenizer")
    prepend = {"type": "Prepend", "prepend": METASPACE}
    escape = {"type": "Replace", "pattern": {"String": " "}, "content": METASPACE}
    tail: list[Any] = []
    for shape in ([prepend, escape], [escape, prepend], [escape]):
        if steps[len(steps) - len(shape) :] == shape:
            tail = shape
            break
    rest = steps[: len(steps) - len(tail)]
    other = "none"
    if rest:
        rest_node = rest[0] if len(rest) == 1 else {"type": "Sequence", "normalizers": rest}
        other = "+".join(_normalizer_spec(rest_node, where)) or "none"
        try:
            _core.normalize_with(other, "")
        except (_core.ConfigError, _core.PatternError) as e:
            raise _core.FormatError(f"{where}: {e}") from None
    if pre is None and tail:
        scheme = "prepend" if prepend in tail else "never"
        return {"metaspace_prefix": scheme, "pretokenizer": "none", "steps": other}
    if not tail and isinstance(pre, dict) and pre.get("type") == "Metaspace":
        if pre.get("replacement", METASPACE) != METASPACE:
            raise _core.FormatError(f"{where}: Metaspace with replacement {pre.get('replacement')!r} is not supported")
        scheme = pre.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if pre.get("add_prefix_space", True) else "never"
        if scheme not in ("always", "first", "never"):
            raise _core.FormatError(f"{where}: Metaspace prepend_scheme {scheme!r} is not supported")
        return {
            "metaspace_prefix": scheme,
            "pretokenizer": "metaspace" if pre.get("split", True) else "none",
            "steps": other,
        }
    if not tail:
        # No whitespace steps: spaces stay spaces, and Hugging Face's splitting pre-tokenizers
        # (Whitespace, Punctuation, Split, ...) cut the text, as in tokenizers' own quick tour;
        # without one, the whole text is one piece.
        split = [] if pre is None else pre["pretokenizers"] if pre.get("type") == "Sequence" else [pre]
        pretokenizer = hf_splits(split, where) if split else "none"
        return {"metaspace_prefix": "off", "pretokenizer": pretokenizer, "steps": other}
    shown = [s.get("type") for s in steps] + ([] if pre is None else [pre.get("type")])
    raise _core.FormatError(
        f"{where}: the normalizer and pre-tokenizer {shown} before a character-level BPE model are not supported "
        "(tokenmill reads Prepend + Replace, or a Metaspace pre-tokenizer, as transformers' converters write them, "
        "or splitting pre-tokenizers, each after other normalizers)"
    )


def read_tokenizer_json(document: _core.TokenizerJson, data: dict[str, Any], where: str) -> _core.CoreTokenizer:
    """A character-level BPE tokenizer from a `tokenizer.json` (read by Rust; `data` is its
    component sections)."""
    model = data["model"]
    # A continuing-subword prefix and an end-of-word suffix are read in Rust; `dropout` by the
    # caller (`files.from_huggingface`), once the tokenizer is made.
    unk_token = model.get("unk_token")
    return document.char_bpe(
        unk_token=unk_token if isinstance(unk_token, str) else None,
        byte_fallback=bool(model.get("byte_fallback", False)),
        fuse_unk=bool(model.get("fuse_unk", False)),
        whole_piece_first=bool(model.get("ignore_merges", False)),
        **_whitespace(data, where),
    )
