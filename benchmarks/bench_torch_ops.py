"""asv: torch.ops.ortcustom.inverse (1x512) and torch.ops.ortcustom.group_norm (2,320,64,64), float32,
against torch.linalg.inv and torch.nn.functional.group_norm (torch_op_cases.py)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class TorchOpInverse(_CaseBench):
    params = (case_keys("torch_op_inverse"), list(IMPLS["torch_op_inverse"]))
    param_names = ("case", "impl")


class TorchOpGroupNorm(_CaseBench):
    params = (case_keys("torch_op_group_norm"), list(IMPLS["torch_op_group_norm"]))
    param_names = ("case", "impl")
