"""asv: com.microsoft GroupNorm + SiLU (2,320,64,64) and (1,128,256,256), 32 groups, float32 and
float16, NCHW: ours (ORT session) against ORT's unfused graphs (InstanceNormalization pattern,
GroupNormalization-21) + Sigmoid/Mul; ours in NHWC (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class ContribGroupNorm(_CaseBench):
    params = (case_keys("contrib_group_norm"), list(IMPLS["contrib_group_norm"]))
    param_names = ("case", "impl")
