"""Weight-based signs that a token's embedding was never trained (needs numpy).

Land & Bartolo's indicator ("Fishing for Magikarp", EMNLP 2024): remove the first principal
component from every row of the unembedding matrix (or the tied embedding matrix), take the
mean of the rows of tokens known to be unused (the *reference* tokens), and score each token by
the cosine similarity of its row to that mean. A model's updates push all the rows it never
trains the same way, so high similarity marks an under-trained token. As in the authors' code
(``magikarp``, sklearn's PCA), the component is the first principal axis of the mean-centred
matrix, projected out of the rows as they are.

Tiny example: rows (3, 0, 1), (-3, 0, 1), (0, 1, 1), (0, -1, 1). The centred rows vary most
along x, so x goes: (0, 0, 1), (0, 0, 1), (0, 1, 1), (0, -1, 1). With row 3 as the reference the
mean is (0, -1, 1), and the similarities are 1/√2, 1/√2, 0 and 1.

>>> unused_similarity([[3, 0, 1], [-3, 0, 1], [0, 1, 1], [0, -1, 1]], [3]).round(4).tolist()
[0.7071, 0.7071, 0.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tokenmill import _core

if TYPE_CHECKING:
    import numpy as np

# Up to this width the covariance matrix is formed and diagonalized; wider matrices (4096 for
# a 7B model) find the component by subspace iteration, a few passes over the rows with no
# d×d product of the whole matrix and no copy of it.
_EXACT_WIDTH = 512


def embedding_matrix(embeddings: Any, rows: int) -> np.ndarray:
    """`embeddings` as a float array, checked to have at least `rows` rows and two columns; no
    copy when it is float32 or float64 already (half precision widens to float32)."""
    try:
        import numpy as np
    except ImportError:
        raise _core.ConfigError("the embedding checks need numpy: pip install numpy") from None

    matrix = np.asarray(embeddings)
    if matrix.ndim != 2 or matrix.shape[0] < rows or matrix.shape[1] < 2:
        raise _core.ConfigError(
            f"embeddings must be a 2-D array with a row per id ({rows} rows or more) and at least 2 columns, "
            f"got shape {matrix.shape}"
        )
    if matrix.dtype not in (np.float32, np.float64):
        matrix = matrix.astype(np.float32 if np.issubdtype(matrix.dtype, np.floating) else np.float64)
    return matrix


def unused_similarity(embeddings: Any, reference_ids: Sequence[int]) -> np.ndarray:
    """Land & Bartolo's indicator for every row of `embeddings` (see the module): the cosine
    similarity, first principal component removed, to the mean row of `reference_ids`."""
    x = embedding_matrix(embeddings, 2)  # first: it says so when numpy is missing
    import numpy as np

    reference = np.asarray(sorted(set(reference_ids)), dtype=np.int64)
    if reference.size == 0:
        raise _core.ConfigError("the embedding indicator needs reference tokens known to be unused; none were given")
    if reference[0] < 0 or reference[-1] >= x.shape[0]:
        raise _core.ConfigError(f"reference ids must lie in 0..{x.shape[0] - 1}, got {reference[0]}..{reference[-1]}")
    squared = np.einsum("ij,ij->i", x, x, dtype=np.float64)
    if not np.isfinite(squared).all():
        raise _core.ConfigError(f"embeddings: row {int(np.argmin(np.isfinite(squared)))} is not finite")
    component = first_principal_component(x)
    along = _times(x, component)
    # Without the component: a row x becomes x - (x·c)c, whose norm² is |x|² - (x·c)²; the
    # reference mean m has no c in it, so (x - (x·c)c)·m = x·m. No projected copy of x is made.
    share = np.zeros(x.shape[0], dtype=x.dtype)
    share[reference] = 1.0 / reference.size
    mean = (share @ x).astype(np.float64)  # the reference rows' mean, with no copy of them
    mean -= (mean @ component) * component
    norms = np.sqrt(np.maximum(squared - along**2, 0.0)) * np.linalg.norm(mean)
    dots = _times(x, mean)
    # A row with nothing left (or a reference mean of zero) is like no direction: 0.
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 1e-12 * max(1.0, float(norms.max())))


def first_principal_component(x: np.ndarray, *, exact: bool | None = None) -> np.ndarray:
    """The unit vector (float64) along which the mean-centred rows of `x` vary most. `exact`
    forces the covariance route (True) or subspace iteration (False); by default the width
    chooses."""
    import numpy as np

    n, d = x.shape
    mean = x.mean(axis=0, dtype=np.float64)
    if exact if exact is not None else d <= _EXACT_WIDTH:
        wide = x.astype(np.float64, copy=False)
        covariance = wide.T @ wide / n - np.outer(mean, mean)
        return np.linalg.eigh(covariance)[1][:, -1]
    # Subspace iteration on the centred covariance with k vectors (the gap to the (k+1)-th
    # eigenvalue sets the speed), then Rayleigh-Ritz inside the subspace.
    k = min(d, 8)
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((d, k)))[0]
    for _ in range(100):
        centred = _times(x, basis) - mean @ basis
        grown = (x.T @ centred.astype(x.dtype)).astype(np.float64) - np.outer(mean, centred.sum(axis=0))
        new = np.linalg.qr(grown)[0]
        done = abs(new[:, 0] @ basis[:, 0]) > 1 - 1e-12
        basis = new
        if done:
            break
    centred = _times(x, basis) - mean @ basis
    top = np.linalg.eigh(centred.T @ centred)[1][:, -1]
    component = basis @ top
    return component / np.linalg.norm(component)


def _times(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """x @ v in x's precision (a float64 `v` would make numpy widen a copy of all of x), as float64."""
    import numpy as np

    return (x @ v.astype(x.dtype, copy=False)).astype(np.float64)


def embedding_flags(
    embeddings: Any, n_ids: int, ids: list[int], reference_ids: Sequence[int], z_threshold: float
) -> tuple[dict[int, list[str]], np.ndarray]:
    """The reasons (see `tokenmill.analysis.audit`) each of the ordinary tokens `ids` gets from
    its embedding, and the indicator of each of the `n_ids` ids. `embeddings` has a row per id;
    rows past `n_ids` (padding to a multiple of 64, say: never trained) take part in the
    principal component and may be reference rows. ``embedding like unused tokens`` is judged
    against the ordinary tokens outside the reference set, and not given to a reference token
    (its similarity to a mean it is part of says nothing new)."""
    x = embedding_matrix(embeddings, max(n_ids, 2))
    import numpy as np

    similarity = unused_similarity(x, reference_ids)[:n_ids]
    out: dict[int, list[str]] = {}
    references = set(reference_ids)
    plain = np.asarray([i for i in ids if i not in references], dtype=np.int64)
    if plain.size > 1:
        values = similarity[plain]
        spread = values.std()
        if spread > 0:
            for k in np.nonzero((values - values.mean()) / spread > z_threshold)[0]:
                out.setdefault(int(plain[k]), []).append("embedding like unused tokens")
    # Norm and distance to the mean embedding, low against the other ordinary tokens: from
    # dot products over all rows, so the selected rows are never copied.
    chosen = np.asarray(ids, dtype=np.int64)
    if chosen.size < 2:
        return out, similarity
    weights = np.zeros(x.shape[0], dtype=x.dtype)
    weights[chosen] = 1.0 / chosen.size
    centre = (weights @ x).astype(np.float64)
    squared = np.einsum("ij,ij->i", x, x, dtype=np.float64)
    norms = np.sqrt(squared[chosen])
    distances = np.sqrt(np.maximum(squared - 2 * _times(x, centre) + centre @ centre, 0.0))[chosen]
    for values, reason in ((norms, "embedding norm"), (distances, "near the mean embedding")):
        spread = values.std()
        if spread == 0:
            continue
        for k in np.nonzero((values - values.mean()) / spread < -z_threshold)[0]:
            out.setdefault(ids[int(k)], []).append(reason)
    return out, similarity
