"""asv: Solve (one right-hand side vector per matrix) and Slogdet, float32 general matrices, batched
3x3/4x4/8x8, 64 and 256, single 512 and 1024: ours (ORT session) against torch.linalg and
numpy.linalg; ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Solve(_CaseBench):
    params = (case_keys("solve"), list(IMPLS["solve"]))
    param_names = ("case", "impl")


class Slogdet(_CaseBench):
    params = (case_keys("slogdet"), list(IMPLS["slogdet"]))
    param_names = ("case", "impl")
