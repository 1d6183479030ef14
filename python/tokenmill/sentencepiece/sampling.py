"""Sampling and n-best lists, part of `SentencePieceProcessor`: sampled cuts (Unigram
lattice sampling, BPE-dropout), the n best cuts, samples with their scores and the entropy of
a text's cuts. Seeds come from the module's generator (`set_random_generator_seed`).

>>> from tokenmill.sentencepiece import SentencePieceProcessor
>>> sp = SentencePieceProcessor(model_file="spm.model")
>>> sp.nbest_encode("hello", nbest_size=2, out_type=str)
[['▁', 'he', 'll', 'o'], ['▁', 'h', 'ell', 'o']]
"""

from __future__ import annotations

import math
import time
from typing import Any

from tokenmill.sentencepiece import settings
from tokenmill.sentencepiece.arguments import (
    ENCODE_TYPES,
    PROTO_TYPES,
    Piece,
    RefusedError,
    as_asked,
    as_text,
    refuse_options,
    resolve,
)
from tokenmill.sentencepiece.proto import ImmutableNBestSentencePieceText

_WOR_CUTS = 1024


class Sampling:
    """The processor's sampling and n-best methods (a part of `SentencePieceProcessor`)."""

    _core: Any
    _unigram: bool
    _words: dict[str, int] | None
    _alpha: float
    _nbest_size: int
    _out_type: object
    _options: Any
    _finish: Any
    _proto: Any
    _place: Any

    def _check_sampling(self, nbest_size: int, alpha: float) -> None:
        if self._words is not None:
            raise RuntimeError("sampling needs a Unigram or BPE model; this one is a WORD model")
        if self._unigram and nbest_size in (0, 1) or alpha is None:
            raise RefusedError(
                'When enable_sampling is True, We must specify "nbest_size > 1" or "nbest_size = -1", and "alpha".'
            )
        if not self._unigram and not 0.0 <= alpha <= 1.0:
            raise RuntimeError(f"alpha must be in [0, 1] for BPE-dropout, got {alpha}")

    def _sampled(self, text: str, nbest_size: int, alpha: float) -> list[Piece]:
        core = self._core
        if not self._unigram:
            ids = core.encode_sampled(text, float(alpha), settings.seed())
            return self._place(text, ids)
        if nbest_size < 0:
            return core.sampled_pieces(text, float(alpha), settings.seed())[0]
        cuts = core.nbest_pieces(text, nbest_size)
        top = max(score for _, score in cuts)
        weights = [math.exp(alpha * (score - top)) for _, score in cuts]
        return settings.rng().choices([pieces for pieces, _ in cuts], weights)[0]

    def NBestEncode(
        self,
        input: Any,
        out_type: type | str | None = None,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        nbest_size: int | None = None,
        return_type: type | str | None = None,
    ) -> Any:
        """The `nbest_size` best cuts of `input` (Unigram models), best first."""
        out_type = resolve(return_type, out_type, self._out_type)
        opts = self._options(add_bos, add_eos, reverse, emit_unk_piece)
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        if out_type not in ENCODE_TYPES or out_type == "offset_mapping":
            raise RefusedError(f"unknown out_type={out_type}")
        refuse_options(out_type, opts)
        self._need_unigram("n-best encoding")

        def one(text: object) -> Any:
            t = as_text(text)
            cuts = self._nbest(t, max(1, nbest_size))
            if out_type in PROTO_TYPES:
                proto = ImmutableNBestSentencePieceText([self._proto(t, pieces, score) for pieces, score in cuts])
                return as_asked(proto, out_type)
            return [self._finish(t, pieces, out_type, **opts) for pieces, _ in cuts]

        return [one(t) for t in input] if isinstance(input, list) else one(input)

    def _nbest(self, text: str, n: int) -> list[tuple[list[Piece], float]]:
        """The `n` best cuts with their scores; the best alone when the search took longer than
        the module's n-best time limit (`set_nbest_timeout`), as sentencepiece falls back."""
        limit = settings.nbest_timeout_ms()
        start = time.perf_counter()
        cuts = self._core.nbest_pieces(text, n)
        if limit > 0 and (time.perf_counter() - start) * 1000 >= limit:
            return cuts[:1]
        return cuts

    def _need_unigram(self, what: str) -> None:
        self._core  # noqa: B018 - raises when nothing is loaded
        if not self._unigram:
            raise RuntimeError(f"{what} needs a Unigram model; this one is {self._core.model_type}")

    def SampleEncodeAndScore(
        self,
        input: Any,
        out_type: type | str | None = None,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        num_samples: int | None = None,
        alpha: float | None = None,
        wor: bool | None = None,
        include_best: bool | None = None,
        return_type: type | str | None = None,
    ) -> Any:
        """`num_samples` cuts of `input` (Unigram), each with a score: drawn with replacement,
        each cut's log-probability; without (`wor=True`, Gumbel top-k), the log of each cut's
        probability of being among those drawn. `include_best` puts the best cut first."""
        out_type = resolve(return_type, out_type, self._out_type)
        opts = self._options(add_bos, add_eos, reverse, emit_unk_piece)
        num_samples = 1 if num_samples is None else num_samples
        alpha = self._alpha if alpha is None else alpha
        if include_best and not wor:
            raise RuntimeError("include_best not supported for wor false")
        if out_type not in ENCODE_TYPES or out_type == "offset_mapping":
            raise RefusedError(f"unknown out_type={out_type}")
        self._need_unigram("sampling with scores")

        def one(text: object) -> Any:
            t = as_text(text)
            if wor:
                drawn = self._without_replacement(t, num_samples, float(alpha), bool(include_best))
            else:
                drawn = [self._core.sampled_pieces(t, float(alpha), settings.seed()) for _ in range(num_samples)]
            if out_type in PROTO_TYPES:
                proto = ImmutableNBestSentencePieceText([self._proto(t, pieces, score) for pieces, score in drawn])
                return as_asked(proto, out_type)
            return [(self._finish(t, pieces, out_type, **opts), score) for pieces, score in drawn]

        return [one(t) for t in input] if isinstance(input, list) else one(input)

    def _without_replacement(
        self, text: str, k: int, alpha: float, include_best: bool
    ) -> list[tuple[list[Piece], float]]:
        """Gumbel top-k over the cuts: each cut's alpha × score plus Gumbel noise, the `k`
        largest kept; a kept cut's score is log(1 − exp(−exp(φ − κ))), with φ its alpha × score
        and κ the (k+1)-th largest perturbed value — the estimate of its chance of being drawn.
        The cuts are the lattice's best `_WOR_CUTS` (or fewer on long texts); a text with more
        cuts than that leaves its least likely ones out of the draw."""
        budget = max(k + 1, min(_WOR_CUTS, (1 << 24) // max(1, len(text.encode("utf-8")))))
        cuts = self._core.nbest_pieces(text, budget)
        draw = settings.rng().random
        perturbed = sorted(
            ((alpha * score - math.log(-math.log(draw() or 1e-300)), n) for n, (_, score) in enumerate(cuts)),
            reverse=True,
        )
        if include_best:
            perturbed = [(math.inf, 0)] + [p for p in perturbed if p[1] != 0]
        kappa = perturbed[k][0] if len(perturbed) > k else -math.inf
        out = []
        for _, n in perturbed[:k]:
            phi = alpha * cuts[n][1]
            if include_best and n == 0 or kappa == -math.inf:
                score = 0.0
            else:
                score = _log1mexp(-math.exp(phi - kappa))
            out.append((cuts[n][0], score))
        return out

    def CalculateEntropy(self, input: Any, alpha: float, num_threads: int | None = None) -> Any:
        """The entropy of the cuts sampling draws from `input` with `alpha` (Unigram)."""
        self._need_unigram("the entropy of a lattice")
        if isinstance(input, list):
            return [self._core.entropy(as_text(t), float(alpha)) for t in input]
        return self._core.entropy(as_text(input), float(alpha))


def _log1mexp(x: float) -> float:
    """log(1 − exp(x)) for x < 0, accurately on both sides."""
    return math.log(-math.expm1(x)) if x > -0.693 else math.log1p(-math.exp(x))
