"""`tokenmill.tokenizers.Encoding` behaves as Hugging Face's `tokenizers.Encoding`: every property,
every accessor at every index (and past the end, for each sequence index), and `pad`, `truncate`,
`merge` and `set_sequence_id` applied to both sides' encodings, for a BERT-like WordPiece and a
byte-level BPE trained here, singles and pairs, truncated with stride and padded."""

from __future__ import annotations

import copy
import pickle
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

import tokenmill
from tokenmill.tokenizers.encoding import Encoding

# Written for this test: plain prose with punctuation, numbers, contractions, accents, a few other
# scripts and some whitespace runs, so the models learn subwords and leave some words unknown.
CORPUS = """\
The river bends twice before it reaches the old mill, and the miller's children used to race
paper boats from the first bend to the second. Nobody kept score, but everyone remembered who won.
In spring the water rose so high that the wheel turned all night; in August it barely moved.
The mill ground wheat, rye and barley for seven villages, and on market days the carts waited in a
line that stretched past the chapel. Prices were written in chalk: 3 loaves for 12 pence, flour at
40 pence a sack, and a discount for anyone who brought their own sacks back clean.
Years later an engineer came with drawings of a turbine. He said the new machine would grind twice
as much with half the water. The miller listened, asked how much it would cost, and then asked who
would repair it when it broke. The engineer didn't have a good answer, so the wheel stayed.
Café owners in town still tell the story. They say the bread tasted better then, though nobody can
prove it. Über the years the recipe changed; naïve visitors ask for the "original" loaf, and the
bakers smile. Tokenizers split words into pieces: tokenization, tokenizing, tokenized, tokens.
Numbers like 2024, 3.14159 and 1,000,000 appear in reports; e-mail addresses such as
miller@example.com and paths like /usr/local/bin show up in logs. Some people write in other
languages: 東京は日本の首都です。 Москва — столица России. القاهرة هي عاصمة مصر.
Emoji too: 👍 and 🎉 at the end of a message!  Double  spaces,\ttabs and
new lines appear where people paste text from elsewhere.
"""

TEXTS = [
    "The miller's children raced paper boats.",
    "They wrote: Hello, world!  Tokenization isn't hard; it's just fiddly.",
    "  leading and trailing spaces  ",
    "The town: Café Über naïve 東京 Москва 👍🎉 zzqx unknownword",
    "a",
    "",
    "The numbers: 2024, 3.14159 and 1,000,000 — e-mail miller@example.com.",
]
LONG = " ".join(TEXTS[:4]) + " " + CORPUS[:400]
MEDIUM = LONG[:120]

# Hypothesis text: characters the trained models know, plus some they do not and combining marks.
# (As the other comparisons with Hugging Face: no unassigned code points or surrogates.)
ALPHABET = st.sampled_from(sorted(set(CORPUS + "é\u0301ﬁ½²Ωß\u00a0\u3000 \n\r\t") - {"\u200d"}))
HYPOTHESIS_TEXT = st.text(alphabet=ALPHABET, max_size=50)


# -- the tokenizers, built and saved with Hugging Face's library, loaded by both --------------------
def _bert(path: Path) -> None:
    hf = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=400, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False
    )
    hf.train_from_iterator(CORPUS.splitlines(), trainer)
    cls, sep = hf.token_to_id("[CLS]"), hf.token_to_id("[SEP]")
    hf.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    hf.save(str(path))


def _byte_level(path: Path, processor: str) -> None:
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train_from_iterator(CORPUS.splitlines(), trainer)
    s, e = hf.token_to_id("<s>"), hf.token_to_id("</s>")
    if processor == "roberta":
        hf.post_processor = processors.RobertaProcessing(("</s>", e), ("<s>", s), trim_offsets=True)
    elif processor == "template":
        hf.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B:1 </s>:1", special_tokens=[("<s>", s), ("</s>", e)]
        )
    # "none": no post-processor at all, where Hugging Face records no sequence range for one input.
    hf.save(str(path))


KINDS = ["bert", "roberta", "template", "none"]
PADS = {"bert": "[PAD]", "roberta": "<pad>", "template": "<pad>", "none": "<pad>"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hf_encoding")
    out = {}
    for kind in KINDS:
        out[kind] = root / f"{kind}.json"
        if kind == "bert":
            _bert(out[kind])
        else:
            _byte_level(out[kind], kind)
    return out


class Pair:
    """The same file loaded by both libraries, with the same truncation and padding."""

    def __init__(self, kind: str, path: Path) -> None:
        self.kind = kind
        self.hf = tokenizers.Tokenizer.from_file(str(path))
        self.tm = tokenmill.Tokenizer.from_huggingface(path)

    def truncate(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> Pair:
        self.hf.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        self.tm.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        return self

    def pad(self, **options: Any) -> Pair:
        pad_token = PADS[self.kind]
        pad_id = self.hf.token_to_id(pad_token)
        self.hf.enable_padding(pad_id=pad_id, pad_token=pad_token, **options)
        self.tm.enable_padding(pad_id=pad_id, pad_token=pad_token, **options)
        return self

    def wrap(self, core: Any) -> Encoding:
        # Without a post-processor Hugging Face records no range for a single input; the wrapper
        # is told so (the core's sequence_ids cannot say it).
        return Encoding._from_core(core)

    def encode(self, a: str, b: str | None = None, add_special_tokens: bool = True) -> tuple[Encoding, Any]:
        theirs = self.hf.encode(a, b, add_special_tokens=add_special_tokens)
        ours = self.wrap(self.tm.encode_for_model(a, b, add_special_tokens=add_special_tokens))
        assert_same_core(ours, theirs, (self.kind, a, b))
        return ours, theirs

    def encode_batch(self, texts: list[str], pairs: list[str] | None = None) -> list[tuple[Encoding, Any]]:
        inputs: list[Any] = texts if pairs is None else list(zip(texts, pairs, strict=True))
        theirs = self.hf.encode_batch(inputs)
        ours = [self.wrap(e) for e in self.tm.encode_batch_for_model(texts, pairs)]
        for o, t, text in zip(ours, theirs, inputs, strict=True):
            assert_same_core(o, t, (self.kind, text))
        return list(zip(ours, theirs, strict=True))


def pair(files: dict[str, Path], kind: str) -> Pair:
    return Pair(kind, files[kind])


# -- comparisons --------------------------------------------------------------------------------
def core_difference(ours: Encoding, theirs: Any) -> str | None:
    """What of the core's encoding differs from Hugging Face's, if anything (the core is tested
    elsewhere; a difference here is the core's, not the wrapper's, and is reported as such)."""
    for name in ("ids", "offsets", "word_ids", "sequence_ids", "n_sequences"):
        if getattr(ours, name) != getattr(theirs, name):
            return name
    ours_windows, their_windows = ours.overflowing, theirs.overflowing
    if len(ours_windows) != len(their_windows):
        return "overflowing windows"
    for o, t in zip(ours_windows, their_windows, strict=True):
        found = core_difference(o, t)
        if found:
            return f"{found} of a window"
    return None


def assert_same_core(ours: Encoding, theirs: Any, what: object) -> None:
    found = core_difference(ours, theirs)
    assert found is None, f"the core's {found} differs from Hugging Face's on {what!r}"


PROPERTIES = [
    "ids",
    "type_ids",
    "tokens",
    "offsets",
    "attention_mask",
    "special_tokens_mask",
    "word_ids",
    "sequence_ids",
    "n_sequences",
]


def ambiguous_sequences(ours: Encoding, token: int) -> set[int]:
    """Sequences whose recorded ranges overlap at `token` (only after `set_sequence_id` on an
    encoding that already had ranges): Hugging Face then answers from whichever its hash map
    yields first, so any of them is right."""
    found = {s for s, (start, stop) in ours._sequence_ranges().items() if start <= token < stop}
    return found if len(found) > 1 else set()


def assert_same(ours: Encoding, theirs: Any) -> None:
    """Every property and every accessor at every index agree, overflowing windows too."""
    assert type(ours) is Encoding
    for name in PROPERTIES:
        assert getattr(ours, name) == getattr(theirs, name), name
    assert len(ours) == len(theirs)
    assert repr(ours) == repr(theirs)
    assert all(type(o) is tuple for o in ours.offsets)

    for token in range(len(theirs) + 3):
        ambiguous = ambiguous_sequences(ours, token)
        if ambiguous:
            assert theirs.token_to_sequence(token) in ambiguous
            assert ours.token_to_sequence(token) in ambiguous
        else:
            assert ours.token_to_sequence(token) == theirs.token_to_sequence(token), ("token_to_sequence", token)
    tokens = range(len(theirs) + 3)
    for name in ("token_to_chars", "token_to_word"):
        assert [getattr(ours, name)(t) for t in tokens] == [getattr(theirs, name)(t) for t in tokens], name
    # The answers for characters change only at token boundaries: every boundary, the character
    # before it and the one after cover every character.
    edges = {0} | {edge for span in theirs.offsets for edge in span}
    chars = sorted({c for edge in edges for c in (edge - 1, edge, edge + 1) if c >= 0} | {max(edges) + 2})
    words = range(max((w for w in theirs.word_ids if w is not None), default=0) + 3)
    for sequence in range(3):
        for name, positions in [("char_to_token", chars), ("char_to_word", chars), ("word_to_tokens", words)]:
            expected = [getattr(theirs, name)(p, sequence) for p in positions]
            assert [getattr(ours, name)(p, sequence) for p in positions] == expected, (name, sequence)
        expected = [theirs.word_to_chars(w, sequence) for w in words]
        assert [ours.word_to_chars(w, sequence) for w in words] == expected, ("word_to_chars", sequence)
    # The defaults are sequence 0.
    assert ours.char_to_token(0) == theirs.char_to_token(0)
    assert ours.word_to_tokens(0) == theirs.word_to_tokens(0)

    ours_windows, their_windows = ours.overflowing, theirs.overflowing
    assert len(ours_windows) == len(their_windows)
    for o, t in zip(ours_windows, their_windows, strict=True):
        assert_same(o, t)


def assert_same_after(ours: Encoding, theirs: Any, operation: str, *args: Any, **kwargs: Any) -> None:
    """Applies one in-place operation to both, then compares everything."""
    assert getattr(ours, operation)(*args, **kwargs) is None
    assert getattr(theirs, operation)(*args, **kwargs) is None
    assert_same(ours, theirs)


def windowed_input(kind: str, a: str, b: str) -> tuple[str, str | None]:
    """A pair to truncate into windows; one text without a post-processor, whose pair windows
    the wrapper cannot read exactly (see test_pair_windows_without_a_post_processor)."""
    return (a, None) if kind == "none" else (a, b)


# -- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_singles_and_pairs(files: dict[str, Path], kind: str) -> None:
    both = pair(files, kind)
    for a in TEXTS:
        for add in (True, False):
            assert_same(*both.encode(a, add_special_tokens=add))
            assert_same(*both.encode(a, TEXTS[1], add_special_tokens=add))
            assert_same(*both.encode(TEXTS[0], a, add_special_tokens=add))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("direction", ["right", "left"])
@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
def test_truncation_with_stride_and_padding(files: dict[str, Path], kind: str, direction: str, strategy: str) -> None:
    both = pair(files, kind).truncate(20, stride=3, strategy=strategy, direction=direction)
    both.pad(direction=direction, pad_to_multiple_of=8)
    # (Pairs of long texts make hundreds of windows: each window of one with each of the other.)
    inputs = [(LONG, None), (TEXTS[4], None), (MEDIUM, TEXTS[4]), (TEXTS[4], MEDIUM), (MEDIUM, TEXTS[0][:20])]
    if kind == "none":
        inputs = inputs[:2]  # pairs: see test_pair_windows_without_a_post_processor
    for a, b in inputs:
        encoded = encode_or_refuse(both, a, b)  # (only_second without a pair, too short a side)
        if encoded is not None:
            assert_same(*encoded)


def test_pair_windows_without_a_post_processor(files: dict[str, Path]) -> None:
    """Without a post-processor, Hugging Face joins a window of the first text with the second
    text recording a range for the second only: the window's `sequence_ids` read all 0 (one
    sequence, with no range for 0, covers everything) while `token_to_sequence` says None for the
    first text's tokens and 1 for the second's. The core's `sequence_ids` and `n_sequences` agree
    with Hugging Face's but cannot tell this apart from a window of one sequence; the core would
    have to expose its ranges."""
    both = pair(files, "none").truncate(20, stride=3)
    ours, theirs = both.encode(MEDIUM, TEXTS[0][:20])
    window, their_window = ours.overflowing[0], theirs.overflowing[0]
    assert window.sequence_ids == their_window.sequence_ids == [0] * len(their_window)
    tokens = range(len(their_window))
    assert [window.token_to_sequence(t) for t in tokens] == [their_window.token_to_sequence(t) for t in tokens]


@pytest.mark.parametrize("kind", ["bert", "roberta", "none"])
def test_batches_padded_to_the_longest(files: dict[str, Path], kind: str) -> None:
    both = pair(files, kind).truncate(24, stride=5).pad()
    for ours, theirs in both.encode_batch(TEXTS + [LONG]):
        assert_same(ours, theirs)
    if kind == "none":
        both.hf.no_truncation()  # pairs' windows: see test_pair_windows_without_a_post_processor
        both.tm.no_truncation()
    for ours, theirs in both.encode_batch(TEXTS, TEXTS[::-1]):
        assert_same(ours, theirs)


@pytest.mark.parametrize("kind", KINDS)
def test_pad_in_place(files: dict[str, Path], kind: str) -> None:
    both = pair(files, kind)
    for a, b in [(TEXTS[0], None), (TEXTS[1], TEXTS[3]), ("", None), ("", "")]:
        ours, theirs = both.encode(a, b)
        assert_same_after(ours, theirs, "pad", len(theirs) + 4)
        options = {"direction": "left", "pad_id": 7, "pad_type_id": 2, "pad_token": "<p>"}
        assert_same_after(ours, theirs, "pad", len(theirs) + 3, **options)
        assert_same_after(ours, theirs, "pad", 2)  # shorter than it is: nothing happens
    # Windows are padded too, each on its own.
    both.truncate(10, stride=2)
    ours, theirs = both.encode(*windowed_input(kind, MEDIUM, TEXTS[4]))
    assert_same_after(ours, theirs, "pad", 12, direction="left")


@pytest.mark.parametrize("kind", KINDS)
def test_truncate_in_place(files: dict[str, Path], kind: str) -> None:
    both = pair(files, kind)
    cases = [(40, 0, "right"), (13, 4, "right"), (13, 4, "left"), (7, 6, "left"), (5, 0, "left"), (1, 0, "right")]
    for a, b in [(LONG, None), (TEXTS[1], TEXTS[6]), (TEXTS[4], None)]:
        for max_length, stride, direction in cases:
            ours, theirs = both.encode(a, b)
            assert_same_after(ours, theirs, "truncate", max_length, stride, direction)
            # Truncating again drops the first round's windows, as Hugging Face does.
            assert_same_after(ours, theirs, "truncate", max(max_length // 2, 1), direction=direction)
        ours, theirs = both.encode(a, b)
        assert_same_after(ours, theirs, "truncate", 0)  # everything moves into one window
        assert_same_after(ours, theirs, "truncate", len(theirs) + 1)  # long enough: unchanged
    # Windows made by the tokenizer's own truncation are replaced too.
    both.truncate(12, stride=3)
    ours, theirs = both.encode(*windowed_input(kind, MEDIUM, TEXTS[4]))
    assert_same_after(ours, theirs, "truncate", 5, 2, "left")


@pytest.mark.parametrize("kind", KINDS)
def test_set_sequence_id(files: dict[str, Path], kind: str) -> None:
    both = pair(files, kind)
    for a, b in [(TEXTS[0], None), (TEXTS[1], TEXTS[3]), ("", None)]:
        for sequence_id in (0, 1, 3):
            ours, theirs = both.encode(a, b)
            assert_same_after(ours, theirs, "set_sequence_id", sequence_id)
            assert_same_after(ours, theirs, "pad", len(theirs) + 2, direction="left")
            assert_same_after(ours, theirs, "truncate", 6, 2)
            assert_same_after(ours, theirs, "set_sequence_id", 1)


@pytest.mark.parametrize("kind", KINDS)
def test_merge(files: dict[str, Path], kind: str) -> None:
    both = pair(files, kind)
    singles = [both.encode(t) for t in TEXTS[:4]]
    pairs = [both.encode(TEXTS[1], TEXTS[2]), both.encode("", TEXTS[0])]
    for group in ([singles[0]], singles, singles[1:] + pairs, pairs, []):
        for growing in (True, False):
            merged_ours = Encoding.merge([o for o, _ in group], growing)
            merged_theirs = tokenizers.Encoding.merge([t for _, t in group], growing)
            assert_same(merged_ours, merged_theirs)
    # The inputs are left as they were.
    for o, t in singles + pairs:
        assert_same(o, t)
    # Overflowing windows combine: each window of the first with the second and its windows,
    # then the first with each window of the second.
    both.truncate(9, stride=2)
    windowed = [
        both.encode(TEXTS[0]),
        both.encode(TEXTS[1][:30]),
        both.encode(*windowed_input(kind, TEXTS[6][:30], "a")),
    ]
    for group in (windowed, windowed[::-1], windowed[:2]):
        assert_same(Encoding.merge([o for o, _ in group]), tokenizers.Encoding.merge([t for _, t in group]))
    # A merged encoding can be changed further.
    ours = Encoding.merge([o for o, _ in windowed])
    theirs = tokenizers.Encoding.merge([t for _, t in windowed])
    assert_same_after(ours, theirs, "pad", len(theirs) + 2, direction="left")
    assert_same_after(ours, theirs, "set_sequence_id", 0)
    assert_same_after(ours, theirs, "truncate", 11, 3)


def test_merge_of_changed_and_fresh_encodings(files: dict[str, Path]) -> None:
    both = pair(files, "bert")
    (a, ta), (b, tb) = both.encode(TEXTS[0]), both.encode(TEXTS[1], TEXTS[2])
    a.pad(len(ta) + 3, direction="left")
    ta.pad(len(ta) + 3, direction="left")
    b.truncate(8, 2)
    tb.truncate(8, 2)
    assert_same(Encoding.merge([a, b, a]), tokenizers.Encoding.merge([ta, tb, ta]))
    assert_same(Encoding.merge((Encoding(), a)), tokenizers.Encoding.merge((tokenizers.Encoding(), ta)))


def test_empty_encoding_and_copies(files: dict[str, Path]) -> None:
    assert_same(Encoding(), tokenizers.Encoding())
    for op, args in [("pad", (3,)), ("truncate", (0,)), ("set_sequence_id", (2,))]:
        ours, theirs = Encoding(), tokenizers.Encoding()
        assert_same_after(ours, theirs, op, *args)
    ours, theirs = pair(files, "roberta").truncate(10, stride=2).encode(MEDIUM, TEXTS[4])
    for clone in (copy.copy(ours), copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert_same(clone, theirs)
        clone.pad(len(theirs) + 5)
        assert len(clone) == len(theirs) + 5
    assert_same(ours, theirs)  # copies are independent
    # Properties are fresh lists; overflowing windows are copies.
    ours.ids.append(1)
    ours.overflowing[0].pad(100)
    assert_same(ours, theirs)
    # As Hugging Face's, an Encoding takes attributes of one's own.
    ours.note = "kept"  # type: ignore[attr-defined]
    assert ours.note == "kept"  # type: ignore[attr-defined]


def test_words_is_deprecated(files: dict[str, Path]) -> None:
    ours, theirs = pair(files, "bert").encode(TEXTS[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ours.words == theirs.words == theirs.word_ids
    assert [(w.category, str(w.message)) for w in caught[:1]] == [(w.category, str(w.message)) for w in caught[1:]]
    assert caught[0].category is DeprecationWarning and caught[0].filename == __file__


def _outcome(call: Any) -> tuple[str, str]:
    try:
        return ("ok", repr(call()))
    except Exception as error:
        return (type(error).__name__, str(error))


def test_arguments_are_checked_as_hugging_face_checks_them(files: dict[str, Path], capfd: Any) -> None:
    ours, theirs = pair(files, "bert").encode(TEXTS[1], TEXTS[0])
    calls = [
        ("char_to_token", (-1,), {}),
        ("char_to_token", (2**63,), {}),
        ("char_to_token", (2**64,), {}),
        ("char_to_token", (1.0,), {}),
        ("char_to_token", ("1",), {}),
        ("char_to_token", (True,), {}),
        ("char_to_token", (), {"char_pos": 3, "sequence_index": 1}),
        ("char_to_word", (3, -1), {}),
        ("word_to_tokens", (2**32,), {}),
        ("word_to_tokens", (-1,), {}),
        ("word_to_chars", (0, -1), {}),
        ("word_to_tokens", (), {"word_index": 1, "sequence_index": 1}),
        ("token_to_chars", (-1,), {}),
        ("token_to_word", (2**64,), {}),
        ("token_to_sequence", (None,), {}),
        ("set_sequence_id", (-1,), {}),
        ("pad", (30,), {"direction": "up"}),
        ("pad", (30,), {"direction": 1}),
        ("pad", (30,), {"pad_id": -1}),
        ("pad", (30,), {"pad_type_id": 2**32}),
        ("pad", (30,), {"pad_token": 5}),
        ("pad", (-1,), {}),
        ("truncate", (3,), {"direction": "up"}),
        ("truncate", (3,), {"direction": None}),
        ("truncate", (-1,), {}),
    ]
    for name, args, kwargs in calls:
        expected = _outcome(partial(getattr(theirs, name), *args, **kwargs))
        assert _outcome(partial(getattr(ours, name), *args, **kwargs)) == expected, (name, args, kwargs)
    # The options of pad are keyword-only (Python counts `self` in its message, pyo3 does not).
    with pytest.raises(TypeError):
        theirs.pad(30, "left")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ours.pad(30, "left")  # type: ignore[misc]
    # Unknown padding options are reported and ignored.
    capfd.readouterr()
    theirs.pad(len(theirs) + 1, colour="red")
    printed = capfd.readouterr().out
    ours.pad(len(ours) + 1, colour="red")
    assert capfd.readouterr().out == printed == "Ignored unknown kwarg option colour\n"
    assert_same(ours, theirs)
    for encodings, growing in [("ab", True), (iter([ours]), True), ([ours, 1], True), ([ours], 1)]:
        their_args = encodings if not isinstance(encodings, list) else [theirs if e is ours else e for e in encodings]
        expected = _outcome(partial(tokenizers.Encoding.merge, their_args, growing))
        assert _outcome(partial(Encoding.merge, encodings, growing)) == expected, (encodings, growing)
    # A stride as long as the window: Hugging Face panics (PanicException, a BaseException);
    # tokenmill raises ValueError with the same message.
    with pytest.raises(ValueError, match="`stride` must be strictly less than `max_len=3`"):
        ours.truncate(3, stride=3)
    with pytest.raises(BaseException, match="`stride` must be strictly less than `max_len=3`"):
        theirs.truncate(3, stride=3)
    assert_same(ours, theirs)


@pytest.mark.parametrize("kind", ["template", "none"])
def test_a_lone_prefix_space(files: dict[str, Path], kind: str) -> None:
    """A byte-level prefix space left a token of its own (no `Ġ…` merge for what follows, no
    offset trimming) has the offsets of the character it was put before, as the tokens of that
    character do: a character in two tokens' offsets maps to the first of them."""
    both = pair(files, kind)
    for a, b in [("ﬁsh and chips", None), ("ﬁ", "ﬁsh"), ("ﬁ", "")]:
        ours, theirs = both.encode(a, b)
        assert theirs.tokens[int(kind != "none")] == "Ġ"
        assert_same(ours, theirs)
        assert_same_after(ours, theirs, "truncate", 3, 1)
        assert_same_after(ours, theirs, "pad", 8, direction="left")


# -- generated text -----------------------------------------------------------------------------------
_PAIRS: dict[str, Pair] = {}


def cached(files: dict[str, Path], kind: str, truncated: bool) -> Pair:
    key = f"{kind}-{truncated}"
    if key not in _PAIRS:
        _PAIRS[key] = pair(files, kind)
        if truncated:
            _PAIRS[key].truncate(9, stride=2).pad(direction="left", pad_to_multiple_of=4)
    return _PAIRS[key]


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    a=HYPOTHESIS_TEXT,
    b=st.none() | HYPOTHESIS_TEXT,
    truncated=st.booleans(),
    operation=st.sampled_from(["none", "pad", "pad-left", "truncate", "truncate-left", "sequence", "merge"]),
    number=st.integers(0, 12),
)
def test_generated_text(
    files: dict[str, Path], kind: str, a: str, b: str | None, truncated: bool, operation: str, number: int
) -> None:
    both = cached(files, kind, truncated)
    if kind == "none" and truncated:
        b = None  # pairs' windows: see test_pair_windows_without_a_post_processor
    encoded = encode_or_refuse(both, a, b)
    if encoded is None:
        return
    ours, theirs = encoded
    assert_same(ours, theirs)
    if operation.startswith("pad"):
        direction = "left" if operation.endswith("left") else "right"
        assert_same_after(ours, theirs, "pad", len(theirs) + number % 4, direction=direction)
    elif operation.startswith("truncate"):
        direction = "left" if operation.endswith("left") else "right"
        assert_same_after(ours, theirs, "truncate", number, min(number // 2, max(number - 1, 0)), direction)
    elif operation == "sequence":
        assert_same_after(ours, theirs, "set_sequence_id", number % 3)
    elif operation == "merge":
        other = encode_or_refuse(both, b or a, None if kind == "none" and truncated else a)
        if other is not None:
            assert_same(Encoding.merge([ours, other[0]]), tokenizers.Encoding.merge([theirs, other[1]]))


def encode_or_refuse(both: Pair, a: str, b: str | None) -> tuple[Encoding, Any] | None:
    """Both encodings, or None when both refuse the input (Hugging Face refuses, or panics on, a
    side too short to truncate with the stride)."""
    try:
        both.hf.encode(a, b)
    except BaseException:
        with pytest.raises(tokenmill.TokenmillError):
            both.tm.encode_for_model(a, b)
        return None
    return both.encode(a, b)
