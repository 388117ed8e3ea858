"""asv: Inverse (batch x N, float32; float64 and float16 at 4096x16 and 256x64): ours (ORT session),
ORT's com.microsoft Inverse, onnxruntime-extensions' Inverse (2-D float32 only), numpy, torch, and
ours called directly (info). See _common.py for the peers and thread limits."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Inverse(_CaseBench):
    params = (case_keys("inverse"), list(IMPLS["inverse"]))
    param_names = ("case", "impl")
