"""Cholesky and CholeskyEx: torch.linalg.cholesky and torch.linalg.cholesky_ex."""
import numpy as np

from ..registry import Attr, Input, Op, Output

_UPPER = Attr("upper", "int", default=0, choices=(0, 1),
              doc="1: the upper factor U = L^T (A = U^T U), from A's upper triangle; 0: L, from the lower")
_TYPES = {"T": ("float", "double")}


def _factor(A, upper):
    """(factor, info), column by column as LAPACK's unblocked potrf (info: the 1-based order of the first
    leading minor that is not positive-definite, 0 if none; a failed matrix keeps its partial factor)."""
    a = np.asarray(A, np.float64)
    a = np.swapaxes(a, -1, -2) if upper else a
    n = a.shape[-1]
    w = np.tril(a.reshape(-1, n, n))
    info = np.zeros(w.shape[0], np.int32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for b in range(w.shape[0]):
            L = w[b]
            for j in range(n):
                d = L[j, j] - L[j, :j] @ L[j, :j]
                if not d > 0:
                    L[j, j] = d
                    info[b] = j + 1
                    break
                L[j, j] = np.sqrt(d)
                L[j + 1:, j] = (L[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    out = w.reshape(a.shape)
    out = np.swapaxes(out, -1, -2) if upper else out
    return out.astype(np.asarray(A).dtype), info.reshape(a.shape[:-2])


def _reference(A, *, upper=0):
    L, info = _factor(A, upper)
    if info.any():
        raise ValueError(f"Cholesky: the matrix at batch index {int(np.flatnonzero(info)[0])} is not positive-definite")
    return L


def _reference_ex(A, *, upper=0):
    return _factor(A, upper)


def _batch_shape(shapes, attrs):
    a = shapes.get("A")
    return None if a is None or len(a) < 2 else tuple(a[:-2])


_DOC = ("the Cholesky factor of each symmetric positive-definite matrix in A's last two dims, as "
        "torch.linalg.{name}: L lower-triangular with A = L L^T from A's lower triangle (upper=1: U = L^T from "
        "the upper triangle); the other triangle of A is not read. float and double.")

Cholesky = Op(
    "Cholesky",
    inputs=[Input("A", "T")],
    outputs=[Output("L", "T", shape="A")],
    types=_TYPES,
    attrs=[_UPPER],
    native="cholesky",
    reference=_reference,
    torch="ortcustom::cholesky",
    torch_args=("A", "upper"),
    doc="L = " + _DOC.format(name="cholesky") + " A matrix that is not positive-definite is an error naming its "
        "batch index (CPU); on CUDA, which cannot check without synchronizing, its L is NaN (CholeskyEx reports it).",
)

CholeskyEx = Op(
    "CholeskyEx",
    inputs=[Input("A", "T")],
    outputs=[Output("L", "T", shape="A"), Output("info", "int32", shape=_batch_shape)],
    types=_TYPES,
    attrs=[_UPPER],
    native="cholesky_ex",
    reference=_reference_ex,
    doc="(L, info) = " + _DOC.format(name="cholesky_ex") + " info[...] = 0, or the order k (1-based) of the first "
        "leading minor that is not positive-definite (a NaN on it counts): L of that matrix is then the "
        "partial factorization, as LAPACK leaves it. Never an error for such a matrix.",
)
