"""The ops' declarations: one `ortcustom.Op` per op. The kernel (kernels/) is checked against it
when the package is built and when an op is first used (a session, a direct call, a torch op):
input, output and attribute names, attribute kinds, element types."""
import numpy as np

from ortcustom import Attr, Input, Op, Output


def _scaled_add(X, Y, *, alpha=1.0):
    """NumPy reference (onnx.reference, the tests)."""
    return (X.astype(np.float64) + alpha * Y.astype(np.float64)).astype(X.dtype)


ScaledAdd = Op(
    "ScaledAdd",
    inputs=[Input("X", "T"), Input("Y", "T")],
    outputs=[Output("Z", "T", shape="X")],
    types={"T": ("float", "double", "float16")},
    attrs=[Attr("alpha", "float", default=1.0)],
    native="myops._kernels:scaled_add",  # kernels/cpu/scaled_add.cpp (+ kernels/cuda/scaled_add.cu)
    reference=_scaled_add,
    torch="myops::scaled_add",          # torch.ops.myops.scaled_add(X, Y, alpha=1.0): torch_ops.py
    doc="Z = X + alpha * Y, elementwise; X and Y have one shape.",
)

ALL = (ScaledAdd,)
