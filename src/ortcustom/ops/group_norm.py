"""GroupNorm: group normalization, as torch.nn.functional.group_norm."""
import numpy as np

from ..registry import Attr, Input, Op, Output

EPSILON = float(np.float32(1e-5))  # the default, as a node carries it (ONNX floats are float32)


def _reference(X, groups=None, scale=None, bias=None, *, epsilon=EPSILON, num_groups=0):
    # inputs come by position, attributes by name: the num_groups input is `groups` here
    groups = int(np.asarray(groups).reshape(-1)[0]) if groups is not None else num_groups
    x = X.astype(np.float64)
    n, c = x.shape[:2]
    if x.size == 0:
        return X.copy()
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + epsilon)).reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    if scale is not None:
        y = y * scale.astype(np.float64).reshape(per_channel)
    if bias is not None:
        y = y + bias.astype(np.float64).reshape(per_channel)
    return y.astype(X.dtype)


GroupNorm = Op(
    "GroupNorm",
    inputs=[Input("X", "T"), Input("num_groups", "int64", optional=True, cpu=True),
            Input("scale", "T", optional=True), Input("bias", "T", optional=True)],
    outputs=[Output("Y", "T", shape="X")],
    types={"T": ("float", "double", "float16")},
    attrs=[Attr("epsilon", "float", default=EPSILON, min=0),
           Attr("num_groups", "int", default=0, min=0,
                doc="used when the num_groups input is absent (0: give the num_groups input)")],
    native="group_norm",
    reference=_reference,
    torch="ortcustom::group_norm",  # (input, num_groups, weight, bias, eps), as F.group_norm
    torch_args=("input=X", "num_groups", "weight=scale", "bias", "eps=epsilon"),
    doc="Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c], mean and (biased) variance over "
        "each (n, group) of C / num_groups channels, as torch.nn.functional.group_norm.",
)
