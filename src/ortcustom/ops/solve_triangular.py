"""SolveTriangular: torch.linalg.solve_triangular, X with A X = B (left) or X A = B, A triangular."""
import numpy as np

from ..registry import REQUIRED, Attr, Input, Op, Output


def _broadcast(a, b):
    """numpy's broadcast of two batch shapes whose dims may be unknown (None) or symbols (str)."""
    out = []
    for x, y in zip((1,) * (len(b) - len(a)) + tuple(a), (1,) * (len(a) - len(b)) + tuple(b)):
        out.append(y if x == 1 else x if y == 1 or x == y else None)
    return tuple(out)


def _shape(shapes, attrs):
    a, b = shapes.get("A"), shapes.get("B")
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return None
    return _broadcast(a[:-2], b[:-2]) + tuple(b[-2:])


def _reference(A, B, *, upper=0, left=1, unitriangular=0):
    a = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        n = a.shape[-1]
        a = a * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    batch = np.broadcast_shapes(a.shape[:-2], B.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).astype(np.float64)
    b = np.broadcast_to(B, batch + B.shape[-2:]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if left:
            x = np.linalg.solve(a, b) if b.size and a.size else np.zeros(b.shape)
        else:
            x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2) \
                if b.size and a.size else np.zeros(b.shape)
    return x.astype(B.dtype)


SolveTriangular = Op(
    "SolveTriangular",
    inputs=[Input("A", "T"), Input("B", "T")],
    outputs=[Output("X", "T", shape=_shape)],
    types={"T": ("float", "double")},
    attrs=[Attr("upper", "int", default=REQUIRED, choices=(0, 1),
                doc="1: A is upper-triangular (only its upper triangle is read); 0: lower"),
           Attr("left", "int", default=1, choices=(0, 1), doc="1: solve A X = B; 0: X A = B"),
           Attr("unitriangular", "int", default=0, choices=(0, 1),
                doc="1: A's diagonal is taken as ones (not read)")],
    native="solve_triangular",
    reference=_reference,
    torch="ortcustom::solve_triangular",
    torch_args=("A", "B", "upper", "left", "unitriangular"),
    doc="X = the solution of A X = B (left=1; A: (*, N, N), B: (*, N, K)) or X A = B (left=0; B: (*, K, N)) with A "
        "triangular, as torch.linalg.solve_triangular: the batch dims broadcast; a zero on A's diagonal gives "
        "inf/nan (no error, as torch). float and double.",
)
