"""Under-trained ("glitch") token candidates, found without model weights.

A model learns a token's embedding only from the text it was trained on; tokens that text
rarely or never produced keep their initial vectors and make models misbehave (the
"SolidGoldMagikarp" tokens). Reasons a token is flagged, with the weight used to rank them:

- ``never seen`` (3) / ``rare`` (2): at most `rare_count` occurrences when the reference corpus
  is encoded (counts per id over the whole corpus);
- ``unreachable`` (3): encoding the token's own text does not give that token alone (the
  pre-tokenizer cuts it, or the merges build something else), so no text produces it there;
- ``only inside longer tokens`` (1): rare alone, though its text occurs inside longer tokens
  (for BPE the merges that built them; for WordPiece and Unigram see
  `tokenmill.analysis._inside`): a step or part the model barely saw by itself;
- ``partial UTF-8`` (1): (byte-level) bytes that are not whole characters;
- ``embedding norm`` / ``near the mean embedding`` (2): with an embedding matrix, a norm or a
  distance to the mean embedding more than `z_threshold` standard deviations below the others
  (Land & Bartolo 2024, "Fishing for Magikarp", find untrained rows this way).

>>> report = audit_tokens("cl100k_base", "reference.txt")     # doctest: +SKIP
>>> report.entries[0].reasons                                 # doctest: +SKIP
['never seen', 'unreachable']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from tokenmill import _checks, _core
from tokenmill.analysis._corpus import CorpusArg, corpus_groups
from tokenmill.analysis._counting import IdCounter
from tokenmill.analysis._inside import inside_counts
from tokenmill.analysis._load import TokenizerArg, load_one
from tokenmill.analysis._table import format_table
from tokenmill.analysis._vocab import TokenTable, token_table
from tokenmill.tokenizer import Tokenizer

WEIGHTS = {
    "never seen": 3,
    "rare": 2,
    "unreachable": 3,
    "only inside longer tokens": 1,
    "partial UTF-8": 1,
    "embedding norm": 2,
    "near the mean embedding": 2,
}


@dataclass
class AuditEntry:
    id: int
    token: str
    """The token's bytes as text (``\\xNN`` for bytes that are not UTF-8)."""
    count: int
    """Occurrences in the reference corpus."""
    inside_count: int
    """Occurrences of its text inside longer tokens (see the module)."""
    reasons: list[str]
    score: int


@dataclass
class AuditReport:
    tokenizer: str
    corpus_tokens: int
    entries: list[AuditEntry]
    """Flagged tokens, most suspicious first."""
    reason_counts: dict[str, int]
    counts: list[int] = field(repr=False)
    """Occurrences of every id in the reference corpus."""

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        out = asdict(self)
        out["entries"] = out["entries"][:limit]
        del out["counts"]
        return out

    def format(self, limit: int = 30) -> str:
        head = f"{self.tokenizer}: {len(self.entries)} tokens flagged on a corpus of {self.corpus_tokens} tokens"
        summary = ", ".join(f"{r} {n}" for r, n in self.reason_counts.items())
        body = [
            [e.id, _show(e.token), e.count, e.inside_count, e.score, "; ".join(e.reasons)] for e in self.entries[:limit]
        ]
        return f"{head}\n{summary}\n" + format_table(["id", "token", "count", "inside", "score", "reasons"], body)


def audit_tokens(
    tokenizer: TokenizerArg | Mapping[str, TokenizerArg],
    corpus: CorpusArg,
    *,
    rare_count: int = 0,
    embeddings: Any = None,
    z_threshold: float = 2.0,
    num_threads: int | None = None,
) -> AuditReport:
    """Flags and ranks the ordinary tokens of `tokenizer` that a model trained on text like
    `corpus` would barely have seen (see the module for the reasons). `embeddings`, a numpy
    array with one row per id, adds the weight-based checks."""
    _checks.count("rare_count", rare_count)
    name, tok = load_one(tokenizer)
    table = token_table(tok)
    counter = IdCounter(tok, num_threads=num_threads)
    for batches in corpus_groups(corpus).values():
        for batch in batches():
            counter.add(batch)
    counts = counter.counts()
    ordinary = [i for i, k in enumerate(table.kinds) if k in ("normal", "byte")]
    reasons: dict[int, list[str]] = {i: [] for i in ordinary}
    for i in ordinary:
        if counts[i] == 0:
            reasons[i].append("never seen")
        elif counts[i] <= rare_count:
            reasons[i].append("rare")
        if table.byte_pieces[i] and table.kinds[i] == "normal":
            reasons[i].append("partial UTF-8")
    for i in unreachable_tokens(tok, table, ordinary, num_threads=num_threads):
        reasons[i].append("unreachable")
    inside = inside_counts(tok, table, counts)
    for i in ordinary:
        if counts[i] <= rare_count and inside[i] > 0:
            reasons[i].append("only inside longer tokens")
    if embeddings is not None:
        for i, why in embedding_flags(embeddings, ordinary, z_threshold).items():
            reasons[i].extend(why)
    entries = [
        AuditEntry(i, _text(table.token_bytes[i]), counts[i], inside[i], why, sum(WEIGHTS[r] for r in why))
        for i, why in reasons.items()
        if why
    ]
    entries.sort(key=lambda e: (-e.score, e.count, e.id))
    tally: Counter[str] = Counter(r for e in entries for r in e.reasons)
    return AuditReport(name, sum(counts), entries, dict(tally.most_common()), counts)


def _show(token: str) -> str:
    """A token for a table: quoted, with line breaks and tabs written out."""
    return "'" + token.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "'"


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode("utf-8", "backslashreplace")


def unreachable_tokens(
    tok: Tokenizer, table: TokenTable, ids: list[int], *, num_threads: int | None = None
) -> list[int]:
    """Ids that encoding their own text does not give. Byte-level BPE must give the token alone
    (its text is one pre-tokenizer piece); a token that is not whole characters is checked on
    its bytes by the model alone (no text spells it by itself). Other models must give it
    among the tokens: WordPiece ``##`` continuations and the SentencePiece pieces that do not
    start a word (``▁``) are only met after other pieces, so they are not checked, nor are
    byte-fallback pieces."""
    texts: list[str] = []
    checked: list[int] = []
    out = []
    continuation = tok.model_config().get("continuing_subword_prefix") if tok.model_type == "wordpiece" else None
    metaspace = tok.pattern == "metaspace"
    for i in ids:
        raw = table.token_bytes[i]
        if raw is None or table.kinds[i] != "normal":
            continue
        if tok.byte_level:
            if table.byte_pieces[i]:
                if tok._core.encode_piece_bytes(raw) != [i]:
                    out.append(i)
                continue
            texts.append(raw.decode("utf-8"))
        else:
            piece = tok.id_to_token(i)
            if (continuation and piece.startswith(continuation)) or (metaspace and not piece.startswith("▁")):
                continue
            text = tok.decode([i])
            if not text.strip():
                continue  # a lone word start (▁) or space: met before other pieces only
            texts.append(text)
        checked.append(i)
    for i, got in zip(checked, tok.encode_ordinary_batch(texts, num_threads=num_threads)):
        if (got != [i]) if tok.byte_level else (i not in got):
            out.append(i)
    return sorted(out)


def embedding_flags(embeddings: Any, ids: list[int], z_threshold: float) -> dict[int, list[str]]:
    """Ids whose embedding norm, or distance to the mean embedding, lies more than `z_threshold`
    standard deviations below those of the other ordinary tokens."""
    import numpy as np

    matrix = np.asarray(embeddings, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < max(ids, default=-1) + 1:
        raise _core.ConfigError(f"embeddings must be a 2-D array with a row per id, got shape {matrix.shape}")
    rows = matrix[ids]
    norms = np.linalg.norm(rows, axis=1)
    distances = np.linalg.norm(rows - rows.mean(axis=0), axis=1)
    out: dict[int, list[str]] = {}
    for values, reason in ((norms, "embedding norm"), (distances, "near the mean embedding")):
        spread = values.std()
        if spread == 0:
            continue
        for k in np.nonzero((values - values.mean()) / spread < -z_threshold)[0]:
            out.setdefault(ids[int(k)], []).append(reason)
    return out
