"""tokenmill.analysis.audit: under-trained token candidates, by hand and on real vocabularies."""

from __future__ import annotations

import numpy as np
import pytest
from analysis_data import A_SPACE_B, AB, SPACE_AB, SPACE_C3, hand_tokenizer, real, tiktoken_real

import tokenmill
from tokenmill.analysis import audit_tokens


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
    report = audit_tokens(tokenmill.Tokenizer.from_sentencepiece(out.getvalue()), {"ref": lines[:3000]})
    ids = np.concatenate([np.array(sp.encode(line), dtype=np.int64) for line in lines[:3000]])
    assert report.counts == np.bincount(ids, minlength=sp.get_piece_size()).tolist()
    # Pieces met only inside words, and the word-start mark itself, are not called unreachable.
    assert "unreachable" not in report.reason_counts
    assert {e.id for e in report.entries} == {
        i for i in range(sp.get_piece_size()) if report.counts[i] == 0 and not (sp.is_control(i) or sp.is_unknown(i))
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
