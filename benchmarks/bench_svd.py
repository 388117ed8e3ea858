"""asv: Svd and Svdvals, random float32 square matrices, batched 3x3/4x4/8x8, 64 and 256, single 512 and
1024: ours (ORT session) against torch.linalg.svd / svdvals and numpy.linalg.svd; ours called directly
(info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Svd(_CaseBench):
    params = (case_keys("svd"), list(IMPLS["svd"]))
    param_names = ("case", "impl")


class Svdvals(_CaseBench):
    params = (case_keys("svdvals"), list(IMPLS["svdvals"]))
    param_names = ("case", "impl")
