"""The built-in ops' CPU kernels called directly on NumPy arrays, without ONNX Runtime.

The same compiled code a session runs; used by the torch.library ops and the benchmarks.
"""
from ._customop import group_norm, inverse

__all__ = ["group_norm", "inverse"]
