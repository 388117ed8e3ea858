"""Solve, SolveEx and Slogdet: torch.linalg.solve, solve_ex and slogdet, on one LU factorization
with partial pivoting (LAPACK's getrf: the pivot of each column is its largest magnitude; the first
exact zero pivot is the singular one)."""
import numpy as np

from ..registry import Attr, Input, Op, Output
from .solve_triangular import _broadcast

_TYPES = {"T": ("float", "double")}
_LEFT = Attr("left", "int", default=1, choices=(0, 1), doc="1: solve A X = B; 0: X A = B")


def _vector_rhs(a, b):
    """torch's rule: B is a batch of vectors when it has one dim, or one dim less than A with A's
    shape but the last."""
    return len(b) == 1 or (len(b) == len(a) - 1 and tuple(b) == tuple(a[:-1]))


def _x_shape(shapes, attrs):
    a, b = shapes.get("A"), shapes.get("B")
    if a is None or b is None or len(a) < 2 or len(b) < 1:
        return None
    if _vector_rhs(a, b):
        return _broadcast(a[:-2], b[:-1]) + (b[-1],)
    return None if len(b) < 2 else _broadcast(a[:-2], b[:-2]) + tuple(b[-2:])


def _batch_shape(shapes, attrs):
    a = shapes.get("A")
    return None if a is None or len(a) < 2 else tuple(a[:-2])


def _lu(A):
    """(LU, pivots, info) per matrix, as getrf's unblocked loop (row swaps recorded, 0-based), in A's
    precision (float32 or float64): whether a pivot is exactly zero depends on it."""
    a = np.array(A, np.float32 if np.asarray(A).dtype == np.float32 else np.float64)
    n = a.shape[-1]
    w = a.reshape(-1, n, n)
    piv = np.zeros((w.shape[0], n), np.int64)
    info = np.zeros(w.shape[0], np.int32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for m in range(w.shape[0]):
            lu = w[m]
            for k in range(n):
                col = np.abs(lu[k:, k])
                p = k + (int(np.argmax(np.where(np.isnan(col), -1.0, col))) if col.size else 0)
                piv[m, k] = p
                if p != k:
                    lu[[k, p]] = lu[[p, k]]
                if lu[k, k] == 0:
                    if info[m] == 0:
                        info[m] = k + 1
                    continue
                lu[k + 1:, k] /= lu[k, k]
                lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return w, piv, info.reshape(a.shape[:-2])


def _getrs(lu, piv, b):
    """b's columns solved against one factorization (getrs: the row swaps, L, then U)."""
    y = b.copy()
    n = lu.shape[0]
    for k in range(n):
        y[[k, piv[k]]] = y[[piv[k], k]]
    for i in range(n):
        y[i] -= lu[i, :i] @ y[:i]
    for i in reversed(range(n)):
        y[i] = (y[i] - lu[i, i + 1:] @ y[i + 1:]) / lu[i, i]
    return y


def _getrs_t(lu, piv, b):
    """b's columns solved against A^T with A's factorization (getrs 'T': U^T, L^T, the swaps undone)."""
    y = b.copy()
    n = lu.shape[0]
    for i in range(n):
        y[i] = (y[i] - lu[:i, i] @ y[:i]) / lu[i, i]
    for i in reversed(range(n - 1)):
        y[i] -= lu[i + 1:, i] @ y[i + 1:]
    for k in reversed(range(n)):
        y[[k, piv[k]]] = y[[piv[k], k]]
    return y


def _solve(A, B, left):
    A, B = np.asarray(A), np.asarray(B)
    vector = _vector_rhs(A.shape, B.shape)
    if vector and not left:
        raise ValueError("Solve: B is a batch of vectors, which only left=1 takes (X A = B needs B of shape (*, K, N))")
    b = B[..., None] if vector else B
    a = A if A.dtype == np.float32 else A.astype(np.float64)
    if not left:  # X A = B as A^T X^T = B^T, with A's own factors (torch's info is A's)
        b = np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n, k = b.shape[-2], b.shape[-1]
    x = np.zeros(batch + (n, k), a.dtype)
    info = np.zeros(a.shape[:-2], np.int32)
    if n and x.size:
        lu, piv, info = _lu(a)
        which = np.broadcast_to(np.arange(lu.shape[0]).reshape(a.shape[:-2]), batch).reshape(-1)
        rhs = np.broadcast_to(b, batch + (n, k)).reshape(-1, n, k).astype(lu.dtype)
        out = x.reshape(-1, n, k)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for m, i in enumerate(which):
                out[m] = (_getrs if left else _getrs_t)(lu[i], piv[i], rhs[m])
    elif n and a.size:
        info = _lu(a)[2]
    if not left:
        x = np.swapaxes(x, -1, -2)
    x = x[..., 0] if vector else x
    return x.astype(B.dtype), np.asarray(info, np.int32)


def _reference(A, B, *, left=1):
    x, info = _solve(A, B, left)
    if np.any(info):
        raise ValueError(f"Solve: the matrix A at batch index {int(np.flatnonzero(info)[0])} is singular")
    return x


def _reference_ex(A, B, *, left=1):
    return _solve(A, B, left)


def _reference_slogdet(A):
    A = np.asarray(A)
    n = A.shape[-1]
    if A.size == 0:
        shape = A.shape[:-2]
        return np.ones(shape, A.dtype) if n == 0 else np.zeros(shape, A.dtype), np.zeros(shape, A.dtype)
    lu, piv, _ = _lu(np.swapaxes(A, -1, -2))  # A^T's factors, as the kernel's (and torch's)
    d = np.diagonal(lu, axis1=-2, axis2=-1)
    swaps = (piv != np.arange(n)).sum(-1) % 2
    with np.errstate(divide="ignore", invalid="ignore"):
        sign = np.sign(d).prod(-1) * np.where(swaps, -1.0, 1.0)
        sign = np.where(np.isnan(sign), 0.0, sign)
        logabs = np.log(np.abs(d)).sum(-1)
    shape = A.shape[:-2]
    return sign.reshape(shape).astype(A.dtype), logabs.reshape(shape).astype(A.dtype)


_SOLVE_DOC = ("X = the solution of A X = B (left=1) or X A = B (left=0), as torch.linalg.{name}: A is (*, N, N); B "
              "is (*, N, K) (left=1) or (*, K, N) (left=0), or a batch of vectors (*, N) when B has one dim, or "
              "one dim less than A and A's shape but the last (torch's rule; left=1 only); the batch dims "
              "broadcast. LU with partial pivoting as LAPACK's getrf/getrs, each A factored once. float and double.")

Solve = Op(
    "Solve",
    inputs=[Input("A", "T"), Input("B", "T")],
    outputs=[Output("X", "T", shape=_x_shape)],
    types=_TYPES,
    attrs=[_LEFT],
    native="solve",
    reference=_reference,
    torch="ortcustom::solve",
    torch_args=("A", "B", "left"),
    doc=_SOLVE_DOC.format(name="solve") + " A singular matrix (an exact zero pivot) is an error naming its batch "
        "index (CPU); on CUDA, which cannot check without synchronizing, its X is inf/NaN (SolveEx reports it).",
)

SolveEx = Op(
    "SolveEx",
    inputs=[Input("A", "T"), Input("B", "T")],
    outputs=[Output("X", "T", shape=_x_shape), Output("info", "int32", shape=_batch_shape)],
    types=_TYPES,
    attrs=[_LEFT],
    native="solve_ex",
    reference=_reference_ex,
    torch="ortcustom::solve_ex",
    torch_args=("A", "B", "left"),
    doc="(X, info) = " + _SOLVE_DOC.format(name="solve_ex") + " info (A's batch shape): 0, or the order k "
        "(1-based) of the first exact zero pivot of that A, whose X is then inf/NaN (as getrs leaves it). Never "
        "an error for a singular matrix.",
)

Slogdet = Op(
    "Slogdet",
    inputs=[Input("A", "T")],
    outputs=[Output("sign", "T", shape=_batch_shape), Output("logabsdet", "T", shape=_batch_shape)],
    types=_TYPES,
    native="slogdet",
    reference=_reference_slogdet,
    torch="ortcustom::slogdet",
    doc="(sign, logabsdet) of the determinant of each matrix in A's last two dims (A: (*, N, N)), as "
        "torch.linalg.slogdet: det = sign * exp(logabsdet), from the LU factorization with partial pivoting of A^T "
        "(as torch's: two equal columns give an exact zero pivot). A "
        "singular matrix: sign 0, logabsdet -inf; a NaN in the matrix: sign 0, logabsdet NaN; N = 0: sign 1, "
        "logabsdet 0. float and double.",
)
