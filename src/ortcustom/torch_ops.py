"""The built-in ops as PyTorch operators: `torch.ops.ortcustom.inverse`, `torch.ops.ortcustom.group_norm`.

    import torch, ortcustom.torch_ops
    y = torch.ops.ortcustom.inverse(x)                       # our CPU kernel, on x's memory
    z = torch.ops.ortcustom.group_norm(x, 4, weight, bias, 1e-5)

Each is a `torch.library.custom_op` that runs the same compiled kernel as an ONNX Runtime session
(`ortcustom.kernels`), reading the input tensors' memory and writing straight into the output
tensor (no copies for contiguous inputs). Each has a fake (meta) implementation, so
`torch.export`, `torch.compile` and both ONNX exporters trace it, and `ortcustom.export.export`
turns it into the same op in ONNX with nothing more to register: one kernel, two runtimes.

Both have autograd formulas (inverse: -Y^T dY Y^T; group_norm: PyTorch's own backward, recomputed).
CUDA tensors run our CUDA kernels (on torch's current stream) when this ortcustom was built with
CUDA; otherwise, and for any other device, NotImplementedError (never a silent copy to the host).
Importing this module needs torch; `import ortcustom` does not import it.
"""
from __future__ import annotations

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised only without torch
    raise ImportError("ortcustom.torch_ops needs PyTorch: pip install 'ortcustom[torch]'") from e

from . import kernels

_DTYPES = (torch.float32, torch.float64, torch.float16)


def _cuda_built() -> bool:
    from ._build import BUILD

    return bool(BUILD["cuda"])


def _check_device(op: str, name: str, t: torch.Tensor) -> None:
    """CPU always; CUDA when this ortcustom has CUDA kernels; anything else: NotImplementedError."""
    dev = t.device.type
    if dev == "cpu" or (dev == "cuda" and _cuda_built()):
        return
    why = ("this ortcustom was built without CUDA kernels" if dev == "cuda"
           else f"ortcustom has no {dev.upper()} kernels")
    raise NotImplementedError(
        f"ortcustom::{op} has no {dev.upper()} kernel ({why}); {name} is on {t.device}. Move it to "
        f"the CPU (tensor.cpu()) or use the equivalent torch op.")


def _operand(op: str, name: str, t: torch.Tensor, dtype=None):
    """What the kernel reads: a NumPy view (CPU) or the tensor itself (CUDA), contiguous, detached."""
    _check_device(op, name, t)
    if t.dtype not in _DTYPES:
        raise TypeError(f"ortcustom::{op}: {name} has dtype {t.dtype}; accepts float32, float64, float16")
    t = t.detach()
    if dtype is not None:
        t = t.to(dtype)
    t = t.contiguous()
    return t.numpy() if t.device.type == "cpu" else t


def _output(like: torch.Tensor):
    """A new contiguous tensor like `like`, and what the kernel writes into (NumPy view on CPU)."""
    y = torch.empty(like.shape, dtype=like.dtype, device=like.device)
    return y, (y.numpy() if y.device.type == "cpu" else y)


@torch.library.custom_op("ortcustom::inverse", mutates_args=())
def inverse(x: torch.Tensor) -> torch.Tensor:
    """Inverse of each square matrix in the last two dimensions (ortcustom's Inverse kernel)."""
    xa = _operand("inverse", "x", x)
    y, ya = _output(x)
    kernels.inverse(xa, out=ya)  # CUDA tensors: on torch's current stream
    return y


@inverse.register_fake
def _inverse_fake(x):
    torch._check(x.dim() >= 2, lambda: f"ortcustom::inverse: x has shape {tuple(x.shape)}; expected (..., N, N)")
    torch._check(x.shape[-1] == x.shape[-2],
                 lambda: f"ortcustom::inverse: x has shape {tuple(x.shape)}; expected (..., N, N)")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _inverse_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _inverse_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    yt = y.mT
    return -(yt @ grad @ yt)


inverse.register_autograd(_inverse_backward, setup_context=_inverse_setup)


@torch.library.custom_op("ortcustom::group_norm", mutates_args=())
def group_norm(input: torch.Tensor, num_groups: int, weight: torch.Tensor | None = None,
               bias: torch.Tensor | None = None, eps: float = 1e-5) -> torch.Tensor:
    """torch.nn.functional.group_norm(input, num_groups, weight, bias, eps) by ortcustom's GroupNorm kernel."""
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.device != input.device:
            raise ValueError(f"ortcustom::group_norm: {name} is on {p.device}, input on {input.device}")
    xa = _operand("group_norm", "input", input)
    wa = _operand("group_norm", "weight", weight, input.dtype) if weight is not None else None
    ba = _operand("group_norm", "bias", bias, input.dtype) if bias is not None else None
    y, ya = _output(input)
    kernels.group_norm(xa, num_groups, wa, ba, eps, out=ya)
    return y


@group_norm.register_fake
def _group_norm_fake(input, num_groups, weight=None, bias=None, eps=1e-5):
    torch._check(input.dim() >= 2, lambda: f"ortcustom::group_norm: input has shape {tuple(input.shape)}; "
                                           f"expected (N, C, ...)")
    torch._check(num_groups > 0 and input.shape[1] % num_groups == 0,
                 lambda: f"ortcustom::group_norm: num_groups must be positive and divide the "
                         f"{input.shape[1]} channels, got {num_groups}")
    return torch.empty_like(input, memory_format=torch.contiguous_format)


def _group_norm_setup(ctx, inputs, output):
    x, num_groups, weight, bias, eps = inputs
    ctx.num_groups, ctx.eps = num_groups, eps
    ctx.save_for_backward(x, weight, bias)


def _group_norm_backward(ctx, grad):
    x, weight, bias = ctx.saved_tensors
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() if t is not None else None for t in (x, weight, bias)]
        y = torch.nn.functional.group_norm(leaves[0], ctx.num_groups, leaves[1], leaves[2], ctx.eps)
        present = [t for t in leaves if t is not None]
        grads = iter(torch.autograd.grad(y, present, grad))
    out = [next(grads) if t is not None else None for t in leaves]
    return out[0], None, out[1], out[2], None


group_norm.register_autograd(_group_norm_backward, setup_context=_group_norm_setup)

__all__ = ["group_norm", "inverse"]
