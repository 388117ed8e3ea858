"""asv: the GPU cases. Inverse (65536x4, 4096x16, 256x64) against cupy.linalg.inv and torch on CUDA;
GroupNorm (8,512,64,64) float16/float32 against torch on CUDA and a device-to-device copy of the
same buffers. Ours runs in ORT's CUDA provider with IOBinding (inputs and output on the GPU).
Skipped (NotImplementedError in setup) without CuPy, a GPU, or a CUDA build of ortcustom."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class CudaInverse(_CaseBench):
    params = (case_keys("cuda_inverse"), list(IMPLS["cuda_inverse"]))
    param_names = ("case", "impl")


class CudaGroupNorm(_CaseBench):
    params = (case_keys("cuda_group_norm"), list(IMPLS["cuda_group_norm"]))
    param_names = ("case", "impl")
