"""asv: Cholesky, float32 SPD matrices, batched 3x3/4x4/8x8, 64 and 256, single 512 and 1024: ours
(ORT session) against torch.linalg.cholesky and numpy.linalg.cholesky; ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Cholesky(_CaseBench):
    params = (case_keys("cholesky"), list(IMPLS["cholesky"]))
    param_names = ("case", "impl")
