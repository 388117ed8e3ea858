"""The torch_op cases: ortcustom's kernels as PyTorch operators (`torch.ops.ortcustom.inverse`,
`torch.ops.ortcustom.group_norm`, from `ortcustom.torch_ops`) on CPU tensors, against torch's own
(`torch.linalg.inv`, `torch.nn.functional.group_norm`) with torch.set_num_threads(2). No ONNX
Runtime: the torch ops call the kernels directly, so their threads are the direct-call path's."""
from __future__ import annotations

from . import _common as C

GROUPS = ("torch_op_inverse", "torch_op_group_norm")
IMPLS = ("ours_torch_op", "torch")
LABELS = {"ours_torch_op": "ours (torch.ops.ortcustom)"}
OURS = {"ours_torch_op"}


def cases(quick: bool) -> list:
    goal = (C.Goal("torch", 1.0, "ours / torch <= 1.0"),)
    inv, gn = ((1, 64), (1, 320, 8, 8)) if quick else ((1, 512), (2, 320, 64, 64))
    return [C.Case("torch_op_inverse", inv, goals=goal), C.Case("torch_op_group_norm", gn, groups=32, goals=goal)]


def make_impl(case, key: str, label: str):
    try:
        import torch

        import ortcustom.torch_ops  # noqa: F401  (registers torch.ops.ortcustom.*)
    except ImportError as e:
        raise C.Unavailable(f"n/a: {e}") from None
    if case.group == "torch_op_inverse":
        x = torch.from_numpy(C.inverse_input(case))
        fn = torch.ops.ortcustom.inverse if key == "ours_torch_op" else torch.linalg.inv
        return C.Impl(key, label, lambda: fn(x))
    x, s, b = (torch.from_numpy(a) for a in C.group_norm_inputs(case))
    fn = torch.ops.ortcustom.group_norm if key == "ours_torch_op" else torch.nn.functional.group_norm
    return C.Impl(key, label, lambda: fn(x, case.groups, s, b, C.EPS))
