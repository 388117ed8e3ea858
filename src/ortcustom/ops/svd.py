"""Svd and Svdvals: torch.linalg.svd and torch.linalg.svdvals."""
import numpy as np

from ..registry import Attr, Input, Op, Output

_TYPES = {"T": ("float", "double")}


def _dims(shapes):
    a = shapes.get("A")
    if a is None or len(a) < 2:
        return None
    m, n = a[-2], a[-1]
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else m if m == n and m is not None else None
    return tuple(a[:-2]), m, n, k


def _u_shape(shapes, attrs):
    d = _dims(shapes)
    return None if d is None else d[0] + (d[1], d[1] if attrs.get("full_matrices", 1) else d[3])


def _s_shape(shapes, attrs):
    d = _dims(shapes)
    return None if d is None else d[0] + (d[3],)


def _vh_shape(shapes, attrs):
    d = _dims(shapes)
    return None if d is None else d[0] + (d[2] if attrs.get("full_matrices", 1) else d[3], d[2])


def _check_finite(A, name):
    a = np.asarray(A)
    bad = ~np.isfinite(a.reshape((-1,) + a.shape[-2:])).all(axis=(-2, -1)) if a.size else np.zeros(0, bool)
    if bad.any():
        raise ValueError(f"{name}: input A: the matrix at batch index {int(np.flatnonzero(bad)[0])} holds a NaN or "
                         f"an infinity (the SVD does not converge on it)")


def _reference(A, *, full_matrices=1):
    _check_finite(A, "Svd")
    a = np.asarray(A)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    if a.size == 0:  # numpy refuses empty matrices; torch gives identities where a full basis is asked
        um = m if full_matrices else k
        vn = n if full_matrices else k
        u = np.broadcast_to(np.eye(m, um, dtype=a.dtype), batch + (m, um)).copy()
        vh = np.broadcast_to(np.eye(vn, n, dtype=a.dtype), batch + (vn, n)).copy()
        return u, np.zeros(batch + (k,), a.dtype), vh
    u, s, vh = np.linalg.svd(a.astype(np.float64), full_matrices=bool(full_matrices))
    return u.astype(a.dtype), s.astype(a.dtype), vh.astype(a.dtype)


def _reference_vals(A):
    _check_finite(A, "Svdvals")
    a = np.asarray(A)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    return np.linalg.svd(a.astype(np.float64), compute_uv=False).astype(a.dtype)


_NONFINITE = (" A matrix holding a NaN or an infinity is an error naming its batch index (as torch, whose LAPACK "
              "does not converge on it) on the CPU; on CUDA, which cannot check without synchronizing, its "
              "outputs are NaN.")

Svd = Op(
    "Svd",
    inputs=[Input("A", "T")],
    outputs=[Output("U", "T", shape=_u_shape), Output("S", "T", shape=_s_shape), Output("Vh", "T", shape=_vh_shape)],
    types=_TYPES,
    attrs=[Attr("full_matrices", "int", default=1, choices=(0, 1),
                doc="1: U is (*, M, M) and Vh (*, N, N) (full orthonormal bases); 0: the reduced (*, M, K) "
                    "and (*, K, N), K = min(M, N)")],
    native="svd",
    reference=_reference,
    torch="ortcustom::svd",
    torch_args=("A", "full_matrices"),
    doc="(U, S, Vh) = the singular value decomposition A = U diag(S) Vh of each matrix in A's last two dims "
        "(*, M, N), as torch.linalg.svd: S (*, K), K = min(M, N), non-negative and in descending order; U's "
        "columns and Vh's rows orthonormal. As in PyTorch, the singular vectors are not unique and are not "
        "normalized: each pair (U[:, j], Vh[j, :]) of a simple singular value is determined up to a common sign "
        "(which this op's algorithm, one-sided Jacobi for K < 8 and Householder bidiagonalization with "
        "implicit-shift QR on the bidiagonal above, its vectors by divide and conquer from K = 64, picks "
        "differently from LAPACK's gesdd), those of a repeated (or zero) "
        "value up to a rotation of their subspace, and the columns beyond the rank, and full_matrices' extra "
        "columns of U and rows of Vh, are some orthonormal completion; only U diag(S) Vh, the orthonormality "
        "and S are determined. Empty matrices give torch's shapes (identities where a full basis is asked). "
        "float and double." + _NONFINITE,
)

Svdvals = Op(
    "Svdvals",
    inputs=[Input("A", "T")],
    outputs=[Output("S", "T", shape=_s_shape)],
    types=_TYPES,
    native="svdvals",
    reference=_reference_vals,
    torch="ortcustom::svdvals",
    torch_args=("A",),
    doc="S = the singular values of each matrix in A's last two dims (*, M, N), as torch.linalg.svdvals: "
        "(*, min(M, N)), non-negative, in descending order (the singular vectors are not formed). float and "
        "double." + _NONFINITE,
)
