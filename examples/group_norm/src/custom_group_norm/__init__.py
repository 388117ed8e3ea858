"""The group norm of PyTorch's custom-op tutorial, as an ortcustom op with its own C++ kernel.

ONNX: node mydomain::mygroupnorm(X, num_groups, scale, bias), attribute epsilon (float).
PyTorch: torch.ops.mynamespace.custom_group_norm(X, num_groups, scale, bias, eps) (torch_ops.py),
which both exporters turn into that node (ortcustom.export.export(..., ops=[domain])).
"""
import numpy as np

import ortcustom
from ortcustom import Attr, Input, Op, Output


def _reference(X, num_groups, scale, bias, *, epsilon=1e-5):
    g = int(np.asarray(num_groups).reshape(-1)[0])
    x = X.astype(np.float64).reshape(X.shape[0], g, -1)
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + epsilon)
    per_channel = (1, X.shape[1]) + (1,) * (X.ndim - 2)
    y = y.reshape(X.shape) * scale.reshape(per_channel) + bias.reshape(per_channel)
    return y.astype(X.dtype)


MyGroupNorm = Op(
    "mygroupnorm",
    inputs=[Input("X", "T"), Input("num_groups", "G", cpu=True), Input("scale", "T"), Input("bias", "T")],
    outputs=[Output("Y", "T", shape="X")],
    types={"T": ("float", "double"), "G": ("float", "int64")},  # the tutorial's num_groups is float
    attrs=[Attr("epsilon", "float", default=1e-5, min=0)],
    native="custom_group_norm._kernels:group_norm",
    reference=_reference,
    torch="mynamespace::custom_group_norm",
    torch_args=("X", "num_groups", "scale", "bias", "eps=epsilon"),
    doc="Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c] over each (n, group), as "
        "torch.nn.functional.group_norm.",
)

domain = ortcustom.Domain("mydomain").add(MyGroupNorm)
