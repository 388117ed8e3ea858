"""The ops as PyTorch operators (torch.ops.myops.*), made from their declarations: eager CPU
(and CUDA in a CUDA build) runs the same kernels as ONNX Runtime, and both exporters turn them
into this package's ONNX ops:

    import myops, myops.torch_ops, ortcustom.export
    z = torch.ops.myops.scaled_add(x, y, 2.0)
    m = ortcustom.export.export(model, (x, y), ops=[myops.domain])
"""
import ortcustom.torch_ops

from .ops import ScaledAdd

scaled_add = ortcustom.torch_ops.register(ScaledAdd)
