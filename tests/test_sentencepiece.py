"""SentencePiece models through tokenmill: ids, pieces, normalization, decoding, n-best and sampling
equal to the `sentencepiece` library's on models it trains at test time."""

from __future__ import annotations

import io
import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
import tokenmill.sentencepiece
from tokenmill import ConfigError, FormatError

spm = pytest.importorskip("sentencepiece")

from conftest import MULTILINGUAL  # noqa: E402

JAPANESE = [
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
    "東京都に住んでいます。毎朝コーヒーを飲みます。",
    "今日は良い天気ですね。明日も晴れるでしょう。",
    "カタカナとひらがなと漢字が混ざっています。",
]
CHINESE = [
    "我喜欢自然语言处理，也喜欢机器学习。",
    "北京是中国的首都，也是一座历史悠久的城市。",
    "今天天气很好，我们去公园散步吧。",
]


def cjk_lines() -> list[str]:
    """Two thousand stretches of the Japanese and Chinese sentences, cut at fixed pseudo-random
    places: enough distinct text for a vocabulary of multi-character pieces."""
    text = "".join(JAPANESE + CHINESE)
    state, lines = 12345, []
    for _ in range(2000):
        state = (state * 1103515245 + 12345) % 2**31
        start, length = state % len(text), 5 + state % 25
        lines.append(text[start : start + length])
    return lines


def training_lines(stdlib_text: str) -> list[str]:
    prose = [line.strip() for line in stdlib_text.splitlines() if len(line.strip()) > 20][:3000]
    return prose + (MULTILINGUAL + JAPANESE + CHINESE) * 20


def train(lines: list[str], **options) -> bytes:
    out = io.BytesIO()
    options = {"vocab_size": 800, "model_type": "unigram", "minloglevel": 2, **options}
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, **options)
    return out.getvalue()


MODELS = {
    "plain": {},
    "byte_fallback": {"byte_fallback": True},
    "symbols": {"user_defined_symbols": ["<sep>", "foo", "▁bar"], "control_symbols": ["<cls>", "<mask>"]},
    "identity": {"normalization_rule_name": "identity"},
    "nfkc_cf": {"normalization_rule_name": "nfkc_cf"},
    "no_dummy_prefix": {"add_dummy_prefix": False},
    "keep_whitespace": {"remove_extra_whitespaces": False},
    "cjk": {"character_coverage": 0.9995, "vocab_size": 250},
    "suffix": {"treat_whitespace_as_suffix": True},
    "no_split_by_whitespace": {"split_by_whitespace": False},
    "no_split_keep_whitespace": {"split_by_whitespace": False, "remove_extra_whitespaces": False},
    # Llama 2's and Mistral's set-up: whitespace-only pieces (▁▁▁▁ from code's indentation).
    "whitespace_pieces": {"allow_whitespace_only_pieces": True, "remove_extra_whitespaces": False},
}


_PAIRS: dict[tuple[str, str], tuple[object, tokenmill.Tokenizer]] = {}


def trained_pair(name: str, model_type: str, stdlib_text: str) -> tuple[object, tokenmill.Tokenizer]:
    """sentencepiece's processor and tokenmill's tokenizer of one model, trained once per run."""
    if (name, model_type) not in _PAIRS:
        lines = cjk_lines() if name == "cjk" else training_lines(stdlib_text)
        proto = train(lines, model_type=model_type, **MODELS[name])
        _PAIRS[name, model_type] = (
            spm.SentencePieceProcessor(model_proto=proto),
            tokenmill.Tokenizer.from_sentencepiece(proto),
        )
    return _PAIRS[name, model_type]


@pytest.fixture(scope="module", params=[(n, t) for t in ("unigram", "bpe") for n in sorted(MODELS)], ids="-".join)
def pair(request: pytest.FixtureRequest, stdlib_text: str) -> tuple[object, tokenmill.Tokenizer]:
    """Every model, Unigram and BPE."""
    return trained_pair(*request.param, stdlib_text)


@pytest.fixture(scope="module", params=sorted(MODELS))
def unigram_pair(request: pytest.FixtureRequest, stdlib_text: str) -> tuple[object, tokenmill.Tokenizer]:
    """Every Unigram model (n-best and lattice sampling are Unigram's)."""
    return trained_pair(request.param, "unigram", stdlib_text)


PROBES = [
    *MULTILINGUAL,
    *JAPANESE,
    *CHINESE,
    "",
    " ",
    "   leading and trailing   ",
    "tabs\tand\nnewlines\r\nhere",
    "ＡＢＣ　ｶﾞｷﾞ ①②③ ﬁ ㌀",
    "🦜🦜 unknown 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ",
    "a<sep>b foo▁bar <cls> <mask> <s> </s> <unk>",
    "x" * 300,
    "def f(x):\n    return x ** 2  # comment",
]


def test_ids_pieces_and_normalization_equal_sentencepiece(pair) -> None:
    sp, tok = pair
    for text in PROBES:
        assert tok.normalize(text) == sp.normalize(text), text
        ids = tok.encode(text)
        assert ids == sp.encode(text), (text, sp.encode(text, out_type=str), tok.tokenize(text))
        assert tok.decode(ids) == sp.decode(ids), text


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_whitespace_only_pieces_keep_runs_with_the_next_word(model_type: str, stdlib_text: str) -> None:
    """With pieces such as ▁▁▁▁ the text is cut only before a ▁ that follows another character
    (so the piece cache still serves), and the ids stay sentencepiece's."""
    sp, tok = trained_pair("whitespace_pieces", model_type, stdlib_text)
    assert any("\u2581\u2581" in tok.id_to_token(i) for i in range(tok.n_vocab) if tok.token_kind(i) == "normal")
    assert tok.pattern == "metaspace_runs"
    text = stdlib_text[100_000:140_000]
    assert tok.encode(text) == sp.encode(text)
    for probe in ["a    b", "    indented\n        deeper", "x\u2581\u2581y", "  ", "end   "]:
        assert tok.encode(probe) == sp.encode(probe), probe


def test_long_documents_equal_sentencepiece(pair, stdlib_text: str) -> None:
    """Whole 4 KB documents: the running score carried from word to word must round as
    SentencePiece's one lattice over the text does, or near-equal cuts fall the other way."""
    sp, tok = pair
    text = stdlib_text[200_000:400_000] + "\n".join(MULTILINGUAL + JAPANESE + CHINESE) * 20
    docs = [text[i : i + 4096] for i in range(0, len(text), 4096)]
    assert tok.encode_batch(docs, num_threads=1) == sp.encode(docs)
    assert [tok.encode(d) for d in docs[:10]] == sp.encode(docs[:10])


def test_very_long_documents_equal_sentencepiece(pair, stdlib_text: str) -> None:
    """Documents long enough for the running score to pass ±100000 several times, where
    sentencepiece (0.2.3 on) moves it back to 0 and near-equal cuts after it fall as small sums
    round (a document's cut depends on its length before that point)."""
    sp, tok = pair
    for doc in (stdlib_text[:600_000], ("\n".join(MULTILINGUAL + JAPANESE + CHINESE) + "  \n\n\t ") * 150):
        assert tok.encode(doc) == sp.encode(doc)


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_hypothesis_text_equals_sentencepiece(pair, text: str) -> None:
    sp, tok = pair
    assert tok.encode(text) == sp.encode(text)


def test_piece_kinds_and_scores(pair) -> None:
    sp, tok = pair
    assert tok.vocab_size == sp.get_piece_size()
    for i in range(sp.get_piece_size()):
        kind = tok.token_kind(i)
        assert (kind == "control") == sp.is_control(i), i
        assert (kind == "unknown") == sp.is_unknown(i), i
        assert (kind == "byte") == sp.is_byte(i), i
        assert (kind == "unused") == sp.is_unused(i), i
        assert tok.id_to_token(i) == sp.id_to_piece(i)
        assert tok.score(i) == pytest.approx(sp.get_score(i), abs=0)


def test_nbest_equals_sentencepiece(unigram_pair) -> None:
    sp, tok = unigram_pair
    for text in ["Hello world", "東京都に住んでいます", "unknown 🦜 parrot", "naïve café"]:
        want = sp.nbest_encode_as_ids(text, 5)
        got = [ids for ids, _ in tok.nbest(text, 5)]
        assert got[0] == tok.encode(text)
        # Cuts with equal scores may be listed in another order; the sets and scores agree.
        assert sorted(map(tuple, got)) == sorted(map(tuple, want)), text
        scores = [score for _, score in tok.nbest(text, 5)]
        assert scores == sorted(scores, reverse=True)


def test_sampling_is_reproducible_valid_and_varied(unigram_pair) -> None:
    sp, tok = unigram_pair
    # A text the model has many cuts for (the CJK model knows no English).
    text = next(t for t in ("The committee's report wasn't ready.", JAPANESE[1]) if len(tok.nbest(t, 12)) == 12)
    draws = [tuple(tok.encode_sampled(text, alpha=0.1, seed=s)) for s in range(60)]
    assert draws[:5] == [tuple(tok.encode_sampled(text, alpha=0.1, seed=s)) for s in range(5)]
    assert all(tok.decode(list(d)) == sp.decode(list(d)) == sp.decode(sp.encode(text)) for d in draws)
    assert len(set(draws)) > 5, "a small alpha spreads the cuts"
    sharp = Counter(tuple(tok.encode_sampled(text, alpha=50.0, seed=s)) for s in range(20))
    assert sharp.most_common(1)[0][0] == tuple(tok.encode(text)), "a large alpha picks the best cut"


def test_sampling_frequencies_follow_the_cut_probabilities(stdlib_text: str) -> None:
    proto = train(training_lines(stdlib_text))
    tok = tokenmill.Tokenizer.from_sentencepiece(proto)
    word = "ready"
    cuts = tok.nbest(word, 1024)
    alpha = 0.5
    weights = {tuple(ids): math.exp(alpha * score) for ids, score in cuts}
    total = sum(weights.values())
    draws = Counter(tuple(tok.encode_sampled(word, alpha=alpha, seed=s)) for s in range(3000))
    for ids, w in weights.items():
        assert abs(draws[ids] / 3000 - w / total) < 0.04, (ids, draws[ids] / 3000, w / total)


def test_save_load_keeps_everything(pair, tmp_path: Path) -> None:
    sp, tok = pair
    tok.save(tmp_path / "tok.json")
    again = tokenmill.Tokenizer.load(tmp_path / "tok.json")
    for text in PROBES:
        assert again.encode(text) == tok.encode(text)
        assert again.normalize(text) == tok.normalize(text)
    assert again.model_config() == tok.model_config()


def test_offsets_point_into_the_original_text(pair) -> None:
    sp, tok = pair
    text = "Ｈｅｌｌｏ  wörld 東京"
    enc = tok(text, return_offsets_mapping=True)
    for (start, end), token_id in zip(enc["offset_mapping"], enc["input_ids"], strict=True):
        assert 0 <= start <= end <= len(text)
        if tok.token_kind(token_id) == "normal":
            piece = tok.id_to_token(token_id).replace("▁", "")
            assert tok.normalize(text[start:end]).replace("▁", "") == piece or not piece


def test_bad_model_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError):
        tokenmill.Tokenizer.from_sentencepiece(b"\x00\x01garbage")
    json_file = tmp_path / "tokenizer.json"
    json_file.write_text('{"model": {}}')
    with pytest.raises(FormatError, match="tokenizer.json"):
        tokenmill.Tokenizer.from_sentencepiece(json_file)
    with pytest.raises(tokenmill.CorpusError, match="missing.model"):
        tokenmill.Tokenizer.from_sentencepiece(tmp_path / "missing.model")


def test_unigram_only_arguments_are_checked(unigram_pair) -> None:
    _, tok = unigram_pair
    with pytest.raises(ConfigError):
        tok.nbest("x", 0)
    with pytest.raises(ConfigError, match="too much work"):
        tok.nbest("word " * 20_000, 1024)
    with pytest.raises(ConfigError):
        tok.encode_sampled("x", alpha=-1.0)
    with pytest.raises(ConfigError):
        tok.encode_sampled("x", seed=-3)
    bpe = tokenmill.train_bpe(["low lower lowest"] * 10, vocab_size=270)
    with pytest.raises(ConfigError, match="Unigram"):
        bpe.nbest("low", 2)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_unused_pieces_equal_sentencepiece(model_type: str, stdlib_text: str) -> None:
    """Pieces marked unused (as `SetVocabulary` marks those outside a restricted vocabulary):
    Unigram never cuts them; BPE forms them, merges further, and splits back those left over by
    the pair that last formed them anywhere in the text — so the text is one piece there."""
    from tokenmill.formats import sentencepiece as spm_format

    model = spm_format.read_model(train(training_lines(stdlib_text), model_type=model_type, vocab_size=1000))
    normal = [p for p in model.pieces if p.type == spm_format.PieceType.NORMAL and len(p.piece) > 1]
    for p in normal[::3]:
        p.type = spm_format.PieceType.UNUSED
    proto = spm_format.model_bytes(model)
    sp, tok = spm.SentencePieceProcessor(model_proto=proto), tokenmill.Tokenizer.from_sentencepiece(proto)
    texts = [*PROBES, stdlib_text[5000:9000], " ".join(MULTILINGUAL) * 3]
    for text in texts:
        assert tok.encode(text) == sp.encode(text), text[:80]
        assert tok.decode(tok.encode(text)) == sp.decode(sp.encode(text))
    assert any(tok.token_kind(i) == "unused" for i in range(tok.vocab_size))
    assert not any(tok.token_kind(i) == "unused" for text in texts for i in tok.encode(text))


# Characters the normalizers remove, turn into a space, or keep, in runs: where SentencePiece
# ends a text whose last characters it removed or trimmed.
EDGE_CHARS = ["a", "b", "x ", " ", "\t", "\n", "\x0b", "\x1f", "\x7f", "\x85", "\u00a0", "\u2002", "\u2028", "\u200b"]
EDGE_CHARS += ["\u3000", "\ufeff", "ｶﾞ", "▁"]


@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(EDGE_CHARS), min_size=1, max_size=7).map("".join))
def test_offsets_at_removed_and_trimmed_characters_equal_sentencepiece(pair, text: str) -> None:
    sp, _ = pair
    ours = tokenmill.sentencepiece.SentencePieceProcessor(model_proto=sp.serialized_model_proto())
    assert ours.encode(text, out_type="offset_mapping") == sp.encode(text, out_type="offset_mapping")
    assert ours.normalize(text, with_offsets=True) == sp.normalize(text, with_offsets=True)
