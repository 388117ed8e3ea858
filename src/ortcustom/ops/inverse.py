"""Inverse: the inverse of each square matrix in the last two dimensions."""
import numpy as np

from ..registry import Input, Op, Output


def _reference(X):
    return np.linalg.inv(X.astype(np.float32) if X.dtype == np.float16 else X).astype(X.dtype)


Inverse = Op(
    "Inverse",
    inputs=[Input("X", "T")],
    outputs=[Output("Y", "T", shape="X")],
    types={"T": ("float", "double", "float16")},
    native="inverse",
    reference=_reference,
    torch="ortcustom::inverse",
    torch_args=("x=X",),
    doc="Y[..., :, :] = inverse of X[..., :, :] (LU with partial pivoting; float16 computed in "
        "float). Singular matrices give inf/nan, like ORT's built-in Inverse.",
)
