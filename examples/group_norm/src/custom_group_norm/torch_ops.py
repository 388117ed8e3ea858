"""torch.ops.mynamespace.custom_group_norm(X, num_groups, scale, bias, eps), made from the
declaration: the same C++ kernel as ONNX Runtime's node."""
import ortcustom.torch_ops

from . import MyGroupNorm

custom_group_norm = ortcustom.torch_ops.register(MyGroupNorm)
