"""asv: Qr, random float32 square matrices, batched 3x3/4x4/8x8, 64 and 256, single 512 and 1024: ours (ORT
session) against torch.linalg.qr and numpy.linalg.qr; ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Qr(_CaseBench):
    params = (case_keys("qr"), list(IMPLS["qr"]))
    param_names = ("case", "impl")
