"""Under-trained ("glitch") token candidates, found from a reference corpus, and from the
model's weights when it has them.

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
- with an embedding matrix (Land & Bartolo 2024, "Fishing for Magikarp";
  `tokenmill.analysis.embeddings`): ``embedding like unused tokens`` (3), the cosine similarity
  of its row to the mean row of known unused tokens, first principal component removed, more
  than `z_threshold` standard deviations above that of the other ordinary tokens; and
  ``embedding norm`` / ``near the mean embedding`` (2), a norm or a distance to the mean
  embedding more than `z_threshold` standard deviations below the others.

A SentencePiece model audited on its own training text: pieces that only ever occur inside
longer ones.

>>> report = audit_tokens("spm.model", "corpus.txt")
>>> report.reason_counts
{'never seen': 8, 'only inside longer tokens': 8}
>>> entry = report.entries[0]
>>> entry.id, entry.token, entry.count, entry.inside_count, entry.reasons
(110, 'q', 0, 2, ['never seen', 'only inside longer tokens'])

With an output matrix in which those 8 rows, and the row of ``▁pe`` (id 57), stayed near
where training started:

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> lm_head = rng.normal(size=(120, 16))
>>> lm_head[[e.id for e in report.entries] + [57]] = rng.normal(size=16) + 0.1 * rng.normal(size=(9, 16))
>>> report = audit_tokens("spm.model", "corpus.txt", embeddings=lm_head)
>>> report.most_like_unused(1)      # (id, token, similarity), most like the unused first
[(57, '▁pe', 0.95...)]
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tokenmill import _checks, _core
from tokenmill.analysis._corpus import CorpusArg, corpus_groups
from tokenmill.analysis._counting import count_group
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
    "embedding like unused tokens": 3,
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
    unused_similarity: float | None = None
    """Land & Bartolo's indicator (with an embedding matrix): higher is more like unused tokens."""


@dataclass
class AuditReport:
    tokenizer: str
    corpus_tokens: int
    entries: list[AuditEntry]
    """Flagged tokens, most suspicious first."""
    reason_counts: dict[str, int]
    counts: list[int] = field(repr=False)
    """Occurrences of every id in the reference corpus."""
    tokens: list[str] = field(default_factory=list, repr=False)
    """Every id's token as text (as in the entries)."""
    unused_similarity: list[float] | None = field(default=None, repr=False)
    """With an embedding matrix: Land & Bartolo's indicator for every id (None without one)."""
    reference_ids: list[int] = field(default_factory=list, repr=False)
    """The tokens taken as known unused for that indicator."""
    ordinary_ids: list[int] = field(default_factory=list, repr=False)
    """The ids audited: the vocabulary's normal and byte tokens."""

    def most_like_unused(self, limit: int | None = None) -> list[tuple[int, str, float]]:
        """Ordinary tokens outside the reference set as (id, token, indicator), most like the
        unused tokens first; empty without an embedding matrix."""
        if self.unused_similarity is None:
            return []
        sim, references = self.unused_similarity, set(self.reference_ids)
        ranked = sorted((i for i in self.ordinary_ids if i not in references), key=lambda i: (-sim[i], i))
        return [(i, self.tokens[i], sim[i]) for i in ranked[:limit]]

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """The report for JSON: entries (up to `limit`) and, with an embedding matrix, the
        reference ids and the `limit` tokens most like unused ones; not the per-id lists."""
        out = asdict(self)
        out["entries"] = out["entries"][:limit]
        for per_id in ("counts", "unused_similarity", "ordinary_ids", "tokens"):
            out.pop(per_id, None)
        if self.unused_similarity is None:
            del out["reference_ids"]
        else:
            out["most_like_unused"] = [
                {"id": i, "token": t, "unused_similarity": v} for i, t, v in self.most_like_unused(limit)
            ]
        return out

    def format(self, limit: int = 30) -> str:
        head = f"{self.tokenizer}: {len(self.entries)} tokens flagged on a corpus of {self.corpus_tokens} tokens"
        summary = ", ".join(f"{r} {n}" for r, n in self.reason_counts.items())
        columns = ["id", "token", "count", "inside", "score", "reasons"]
        body = [
            [e.id, _show(e.token), e.count, e.inside_count, e.score, "; ".join(e.reasons)] for e in self.entries[:limit]
        ]
        if self.unused_similarity is not None:
            summary += f"\nembedding indicator against {len(self.reference_ids)} reference tokens"
            columns.insert(4, "unused sim")
            for row, e in zip(body, self.entries[:limit], strict=True):
                row.insert(4, f"{e.unused_similarity:.3f}")
        return f"{head}\n{summary}\n" + format_table(columns, body)


def audit_tokens(
    tokenizer: TokenizerArg | Mapping[str, TokenizerArg],
    corpus: CorpusArg,
    *,
    rare_count: int = 0,
    embeddings: Any = None,
    reference_ids: Sequence[int] | None = None,
    z_threshold: float = 2.0,
    num_threads: int | None = None,
) -> AuditReport:
    """Flags and ranks the ordinary tokens of `tokenizer` that a model trained on text like
    `corpus` would barely have seen (see the module for the reasons).

    `embeddings`, a numpy array (or anything `numpy.asarray` takes) with a row per id, adds
    the weight-based checks: pass the unembedding (output) matrix, or the embedding matrix of
    a model that ties them. Land & Bartolo's indicator compares each row with the tokens in
    `reference_ids`, tokens known to be unused (reserved or placeholder tokens, or the rows
    that pad the matrix past the vocabulary); by default those are the vocabulary's
    unused-kind tokens and the ordinary tokens this audit finds ``unreachable`` or
    ``never seen``. A small reference corpus leaves trained tokens "never seen", which blurs
    that mean: give `reference_ids` when you know better. An empty reference set, or a matrix
    with fewer rows than ids, is a `tokenmill.ConfigError`."""
    _checks.count("rare_count", rare_count)
    name, tok = load_one(tokenizer)
    table = token_table(tok)
    counts = [0] * tok.n_vocab
    for group in corpus_groups(corpus).values():
        seen = count_group([tok], group, id_counts=True, num_threads=num_threads).id_counts
        assert seen is not None  # asked for
        counts = [a + b for a, b in zip(counts, seen[0], strict=True)]
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
    similarity: list[float] | None = None
    references: list[int] = []
    if embeddings is not None:
        from tokenmill.analysis.embeddings import embedding_flags

        if reference_ids is None:
            unused = [i for i, k in enumerate(table.kinds) if k == "unused"]
            known = [i for i in ordinary if "unreachable" in reasons[i] or "never seen" in reasons[i]]
            references = sorted(unused + known)
            if not references:
                raise _core.ConfigError(
                    "the embedding indicator needs reference tokens known to be unused, and this audit found no "
                    "unreachable or never-seen token: pass reference_ids"
                )
        else:
            references = sorted({_token_id(i) for i in reference_ids})
        flags, values = embedding_flags(embeddings, len(table.kinds), ordinary, references, z_threshold)
        for i, why in flags.items():
            reasons[i].extend(why)
        similarity = values.tolist()
    elif reference_ids is not None:
        raise _core.ConfigError("reference_ids are for the embedding indicator: give embeddings too")
    texts = [_text(raw) for raw in table.token_bytes]
    entries = [
        AuditEntry(
            i,
            texts[i],
            counts[i],
            inside[i],
            why,
            sum(WEIGHTS[r] for r in why),
            None if similarity is None else similarity[i],
        )
        for i, why in reasons.items()
        if why
    ]
    entries.sort(key=lambda e: (-e.score, e.count, e.id))
    tally: Counter[str] = Counter(r for e in entries for r in e.reasons)
    return AuditReport(
        name, sum(counts), entries, dict(tally.most_common()), counts, texts, similarity, references, ordinary
    )


def _token_id(value: Any) -> int:
    """An id as an int (numpy integers too; `bool` is refused)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise _core.ConfigError(f"reference_ids must be token ids (integers), got {value!r}") from None


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
    for i, got in zip(checked, tok.encode_ordinary_batch(texts, num_threads=num_threads), strict=True):
        if (got != [i]) if tok.byte_level else (i not in got):
            out.append(i)
    return sorted(out)
