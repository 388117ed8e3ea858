"""asv: Eigh and Eigvalsh, random symmetric float32 matrices, batched 3x3/4x4/8x8, 64 and 256, single 512:
ours (ORT session) against torch.linalg.eigh / eigvalsh and numpy.linalg.eigh; ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Eigh(_CaseBench):
    params = (case_keys("eigh"), list(IMPLS["eigh"]))
    param_names = ("case", "impl")


class Eigvalsh(_CaseBench):
    params = (case_keys("eigvalsh"), list(IMPLS["eigvalsh"]))
    param_names = ("case", "impl")
