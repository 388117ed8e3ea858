"""Qr: torch.linalg.qr, the Householder QR factorization (LAPACK's geqrf and orgqr conventions)."""
import numpy as np

from ..registry import Attr, Input, Op, Output

_TYPES = {"T": ("float", "double")}
MODES = ("reduced", "complete", "r")


def _mode(v):
    if v not in MODES:
        raise ValueError(f"mode can only be 'reduced', 'complete' or 'r', got {v!r}")


def _dims(shapes, attrs):
    a = shapes.get("A")
    if a is None or len(a) < 2:
        return None
    m, n = a[-2], a[-1]
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else m if m == n and m is not None else None
    return tuple(a[:-2]), m, n, k, attrs.get("mode", "reduced")


def _q_shape(shapes, attrs):
    d = _dims(shapes, attrs)
    if d is None:
        return (0,) if attrs.get("mode") == "r" else None
    batch, m, n, k, mode = d
    return (0,) if mode == "r" else batch + (m, m if mode == "complete" else k)


def _r_shape(shapes, attrs):
    d = _dims(shapes, attrs)
    if d is None:
        return None
    batch, m, n, k, mode = d
    return batch + (m if mode == "complete" else k, n)


def _reference(A, *, mode="reduced"):
    _mode(mode)
    a = np.asarray(A)
    if a.ndim < 2:
        raise ValueError(f"Qr: input A has shape {a.shape}; expected (..., M, N)")
    w = a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if mode == "r":
            return np.zeros((0,), a.dtype), np.linalg.qr(w, mode="r").astype(a.dtype)
        q, r = np.linalg.qr(w, mode=mode)  # LAPACK's geqrf + orgqr, as torch's
    return q.astype(a.dtype), r.astype(a.dtype)


Qr = Op(
    "Qr",
    inputs=[Input("A", "T")],
    outputs=[Output("Q", "T", shape=_q_shape), Output("R", "T", shape=_r_shape)],
    types=_TYPES,
    attrs=[Attr("mode", "string", default="reduced", check=_mode,
                doc="'reduced': Q (*, M, K), R (*, K, N), K = min(M, N); 'complete': Q (*, M, M), R (*, M, N); "
                    "'r': R (*, K, N) alone, Q an empty tensor of shape (0,) (as torch)")],
    native="qr",
    reference=_reference,
    torch="ortcustom::qr",
    torch_args=("A", "mode"),
    doc="(Q, R) = the QR factorization A = Q R of each matrix in A's last two dims (*, M, N), as "
        "torch.linalg.qr: Q's columns orthonormal, R upper triangular (trapezoidal when M < N), by Householder "
        "reflections with LAPACK's conventions (geqrf's reflectors, H = I - tau v v^T with v[0] = 1 and R's "
        "diagonal entry -sign(alpha) ||x||, or alpha itself with tau = 0 when the rest of the column is zero; "
        "Q formed as orgqr forms it), so Q and R are those of torch (LAPACK/MKL) up to rounding for a "
        "well-conditioned A: the signs of R's diagonal are not normalized, and where A is rank-deficient the "
        "factors are not unique. Any M and N, empty matrices and batches with torch's shapes ('complete' with "
        "N = 0: Q the identity). A NaN or an infinity is no error (as torch): it spreads into that matrix's "
        "factors. float and double.",
)
