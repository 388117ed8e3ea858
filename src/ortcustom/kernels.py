"""The built-in ops' kernels called directly, without ONNX Runtime: NumPy arrays run the CPU
kernels, arrays on a GPU (CuPy, torch CUDA tensors) the CUDA kernels.

The same compiled code a session runs; used by the torch.library ops, the tests and the benchmarks.
"""
from ._customop import group_norm, inverse

__all__ = ["group_norm", "inverse"]
