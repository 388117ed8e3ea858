"""Eigh and Eigvalsh: torch.linalg.eigh and torch.linalg.eigvalsh."""
import numpy as np

from ..registry import Attr, Input, Op, Output

_TYPES = {"T": ("float", "double")}
UPLOS = ("L", "U", "l", "u")  # torch takes either case


def _uplo(v):
    if v not in UPLOS:
        raise ValueError(f"UPLO can only be 'L' or 'U' (or lowercase), got {v!r}")


def _w_shape(shapes, attrs):
    a = shapes.get("A")
    return None if a is None or len(a) < 2 else tuple(a[:-2]) + (a[-1],)


def _v_shape(shapes, attrs):
    a = shapes.get("A")
    return None if a is None or len(a) < 2 else tuple(a)


def _symmetric(A, UPLO, name):
    """A's UPLO triangle mirrored (the other one is never read), as float64; checks shape and finiteness."""
    _uplo(UPLO)
    UPLO = UPLO.upper()
    a = np.asarray(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: input A has shape {a.shape}; expected (..., N, N)")
    t = np.tril(a) if UPLO == "L" else np.triu(a)
    bad = ~np.isfinite(t.reshape((-1,) + a.shape[-2:])).all(axis=(-2, -1)) if a.size else np.zeros(0, bool)
    if bad.any():
        raise ValueError(f"{name}: input A: the matrix at batch index {int(np.flatnonzero(bad)[0])} holds a NaN or "
                         f"an infinity in its {UPLO} triangle (the eigensolver does not converge on it)")
    t = t.astype(np.float64)
    return t + np.swapaxes(np.tril(t, -1) if UPLO == "L" else np.triu(t, 1), -1, -2)


def _reference(A, *, UPLO="L"):
    s = _symmetric(A, UPLO, "Eigh")
    dt = np.asarray(A).dtype
    if s.size == 0:
        return np.zeros(s.shape[:-1], dt), np.zeros(s.shape, dt)
    w, v = np.linalg.eigh(s)
    return w.astype(dt), v.astype(dt)


def _reference_vals(A, *, UPLO="L"):
    s = _symmetric(A, UPLO, "Eigvalsh")
    dt = np.asarray(A).dtype
    return np.zeros(s.shape[:-1], dt) if s.size == 0 else np.linalg.eigvalsh(s).astype(dt)


_UPLO = Attr("UPLO", "string", default="L", check=_uplo,
             doc="'L': the lower triangle (diagonal included) is read, 'U': the upper one; the other is never read "
                 "(lowercase too, as torch)")
_NONFINITE = (" A NaN or an infinity in the triangle read is an error naming its batch index (as torch, whose "
              "LAPACK does not converge on it) on the CPU; on CUDA, which cannot check without synchronizing, "
              "that matrix's outputs are NaN.")

Eigh = Op(
    "Eigh",
    inputs=[Input("A", "T")],
    outputs=[Output("eigenvalues", "T", shape=_w_shape), Output("eigenvectors", "T", shape=_v_shape)],
    types=_TYPES,
    attrs=[_UPLO],
    native="eigh",
    reference=_reference,
    torch="ortcustom::eigh",
    torch_args=("A", "UPLO"),
    doc="(eigenvalues, eigenvectors) of each symmetric matrix in A's last two dims (*, N, N), as "
        "torch.linalg.eigh: eigenvalues (*, N) in ascending order, eigenvectors (*, N, N) orthonormal columns "
        "with A V = V diag(eigenvalues). Only the UPLO triangle of A is read. Eigenvectors are unique only up "
        "to sign (and to a rotation within a repeated eigenvalue's subspace): this op makes the largest-"
        "magnitude entry of each column positive (the first of equal ones), which is not LAPACK's choice, so "
        "compare V diag(w) V^T and orthogonality, not entries. Empty matrices and batches give torch's "
        "shapes. float and double." + _NONFINITE,
)

Eigvalsh = Op(
    "Eigvalsh",
    inputs=[Input("A", "T")],
    outputs=[Output("eigenvalues", "T", shape=_w_shape)],
    types=_TYPES,
    attrs=[_UPLO],
    native="eigvalsh",
    reference=_reference_vals,
    torch="ortcustom::eigvalsh",
    torch_args=("A", "UPLO"),
    doc="The eigenvalues (*, N), ascending, of each symmetric matrix in A's last two dims (*, N, N), as "
        "torch.linalg.eigvalsh (the eigenvectors are not formed); only the UPLO triangle is read. float and "
        "double." + _NONFINITE,
)
