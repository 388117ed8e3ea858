"""asv: GroupNorm (1,32,8,8), (8,64,32,32), (2,320,64,64), (1,512,128,128), 32 groups, float32: ours
(ORT session), ORT's GroupNormalization (opset 21), torch, and ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class GroupNorm(_CaseBench):
    params = (case_keys("group_norm"), list(IMPLS["group_norm"]))
    param_names = ("case", "impl")
