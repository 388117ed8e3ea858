"""Native ops as PyTorch operators, derived from their declarations.

    import torch, ortcustom.torch_ops
    y = torch.ops.ortcustom.inverse(x)                       # our CPU kernel, on x's memory
    z = torch.ops.ortcustom.group_norm(x, 4, weight, bias, 1e-5)
    ortcustom.torch_ops.register(MyOp)                       # an op of yours with Op(torch="ns::name")

`register(op)` defines the `torch.library` op named by `op.torch`, with the schema derived from the
declaration (`op.torch_args`: inputs become Tensor / Tensor?, attributes int / float / str /
int[] / float[] with their defaults; "torch_name=decl_name" renames an argument), an eager kernel
that runs the op's native kernel through `ortcustom.kernels` (CPU tensors as NumPy views: no copy
for contiguous ones; CUDA tensors on torch's current stream, in a CUDA build), and a fake
(meta) implementation from the outputs' declared shapes, so `torch.export` and both ONNX exporters
trace it, and `ortcustom.export` turns it into the same ORT op: one kernel, two runtimes.
Tensors on any other device raise NotImplementedError (never a silent copy to the host).
The built-in ops (with autograd formulas) are registered on import. Importing this module needs
torch; `import ortcustom` does not import it.
"""
from __future__ import annotations

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised only without torch
    from . import _INSTALL_TORCH

    raise ImportError(f"ortcustom.torch_ops needs PyTorch: {_INSTALL_TORCH}") from e

import threading

import numpy as np

from . import kernels
from .attr_check import InvalidAttribute, checked
from .registry import Op
from .types import ATTR_KINDS, element_type


def _check_device(op: str, name: str, t: torch.Tensor, kernel=None) -> None:
    """CPU always; CUDA when the op's kernel (default: ortcustom's own) has a CUDA entry; anything
    else: NotImplementedError."""
    if t.is_cpu:
        return
    dev = t.device.type
    cuda = bool(kernel.cuda) if kernel is not None else kernels.builtin_cuda()
    if dev == "cuda" and cuda:
        return
    why = (kernels.no_cuda_reason(kernel) if dev == "cuda" else f"ortcustom has no {dev.upper()} kernels")
    raise NotImplementedError(
        f"ortcustom::{op} has no {dev.upper()} kernel ({why}); {name} is on {t.device}. Move it to "
        f"the CPU (tensor.cpu()) or use the equivalent torch op.")


def _operand(op: str, name: str, t: torch.Tensor, accepts=None, kernel=None):
    """What the kernel reads: a NumPy view (CPU) or the tensor itself (CUDA), contiguous, detached."""
    _check_device(op, name, t, kernel)
    if accepts is not None and t.dtype not in accepts:
        raise TypeError(f"ortcustom::{op}: {name} has dtype {t.dtype}; accepts "
                        f"{', '.join(str(d).replace('torch.', '') for d in accepts)}")
    if t.requires_grad:
        t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    return t.numpy() if t.is_cpu else t


def _torch_dtype(type_name: str):
    return getattr(torch, element_type(type_name).torch, None)


class _Signature:
    """The torch argument list of an op: (torch name, declaration name, input index or None)."""

    def __init__(self, op: Op):
        targets = op.torch_args or tuple([i.name for i in op.inputs] + [a.name for a in op.attrs])
        attrs = {a.name: a for a in op.attrs}
        inputs = {i.name: n for n, i in enumerate(op.inputs)}
        self.args, parts = [], []
        for t in targets:
            tname, _, decl = t.partition("=")
            decl = decl or tname
            if decl in attrs:  # a name that is both an input and an attribute: the attribute
                a = attrs[decl]
                default = "" if a.required else f"={_schema_default(a.default)}"
                parts.append(f"{ATTR_KINDS[a.kind].torch} {tname}{default}")
                self.args.append((tname, decl, None))
            else:
                i = op.inputs[inputs[decl]]
                parts.append(f"Tensor? {tname}=None" if i.optional else f"Tensor {tname}")
                self.args.append((tname, decl, inputs[decl]))
        ret = "Tensor" if len(op.outputs) == 1 else "(" + ", ".join("Tensor" for _ in op.outputs) + ")"
        self.schema = f"({', '.join(parts)}) -> {ret}"


def _schema_default(v):
    if isinstance(v, str):
        return '"' + v.replace('"', '\\"') + '"'
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return repr(v)


_lock = threading.Lock()
_registered: dict[str, object] = {}  # qualified name -> torch.ops overload packet
_libs: list = []                     # the torch.library.Library objects, kept alive


def register(op: Op):
    """Defines `torch.ops.<op.torch>` from `op`'s declaration (once; later calls return it)."""
    if not isinstance(op, Op) or op.kernel is None:
        raise TypeError(f"torch_ops.register takes an Op with a native kernel, got {op!r}")
    if not op.torch:
        raise ValueError(f"op {op.name!r} declares no torch name: give Op(..., torch='namespace::name')")
    with _lock:
        if op.torch in _registered:
            return _registered[op.torch]
        ns, name = op.torch.split("::", 1)
        sig = _Signature(op)
        lib = torch.library.Library(ns, "FRAGMENT")
        lib.define(name + sig.schema)
        impl = _eager(op, sig)
        lib.impl(name, impl, "CPU")
        if op.kernel.cuda:
            lib.impl(name, impl, "CUDA")
        torch.library.register_fake(op.torch, _fake(op, sig), lib=lib)
        if op.torch in _AUTOGRAD:
            setup, backward = _AUTOGRAD[op.torch]
            torch.library.register_autograd(op.torch, backward, setup_context=setup, lib=lib)
        _libs.append(lib)
        packet = getattr(getattr(torch.ops, ns), name)
        _registered[op.torch] = packet
        return packet


def _eager(op: Op, sig: _Signature):
    short = op.torch.split("::", 1)[1]
    attr_decls = {a.name: a for a in op.attrs}
    accepts = {}
    for i in op.inputs:
        types = op.types.get(i.type, (i.type,))
        accepts[i.name] = tuple(d for d in (_torch_dtype(t) for t in types) if d is not None)

    passed = set()  # attribute values already checked (kernels.attr_key): a model's calls repeat them
    bound = []  # op.kernel, found on the first call

    def impl(*args):
        inputs = [None] * len(op.inputs)
        attrs = {}
        device = None
        if not bound:
            bound.append(op.kernel)
        for (tname, decl, idx), v in zip(sig.args, args):
            if idx is None:
                key = kernels.attr_key(decl, v)
                if key is None or key not in passed:
                    try:  # as ortcustom.export checks it: the same error, whichever exporter traces this
                        checked(attr_decls[decl], v)
                    except InvalidAttribute as e:
                        raise InvalidAttribute(f"{op.torch}: {op.name} {e} (from {op.torch} argument {tname!r})") from None
                    if key is not None and len(passed) < 256:
                        passed.add(key)
                attrs[decl] = v
            elif v is not None:
                if device is not None and v.device != device:
                    raise ValueError(f"ortcustom::{short}: {tname} is on {v.device}, the first tensor on {device}")
                device = device or v.device
                inputs[idx] = _operand(short, tname, v, accepts[decl], bound[0])
        out = kernels.call(op, *inputs, **attrs)
        if type(out) is not tuple:
            return torch.from_numpy(out) if type(out) is np.ndarray else out
        return tuple([torch.from_numpy(o) if type(o) is np.ndarray else o for o in out])

    return impl


def _fake(op: Op, sig: _Signature):
    names = {decl: i for i, (_, decl, idx) in enumerate(sig.args) if idx is not None}

    typed = {i.type: i.name for i in reversed(op.inputs)}  # each constraint's first input

    def fake(*args):
        outs = []
        for o in op.outputs:
            if callable(o.shape):  # the declared rule, on the traced shapes (SolveTriangular's broadcast)
                given = lambda i: args[i] if i < len(args) else None  # noqa: E731  (trailing defaults may be left out)
                shapes = {d: None if given(i) is None else tuple(given(i).shape) for d, i in names.items()}
                attrs = {a.name: a.default for a in op.attrs}
                attrs.update({d: args[i] for i, (_, d, idx) in enumerate(sig.args) if idx is None and i < len(args)})
                shape = o.shape(shapes, attrs)
                like = args[names[typed.get(o.type, op.inputs[0].name)]]
            elif isinstance(o.shape, str) and o.shape in names:
                like = args[names[o.shape]]
                shape = like.shape
            else:
                shape = None
            if shape is None or any(d is None for d in shape):
                raise NotImplementedError(f"ortcustom::{op.torch}: output {o.name} declares no shape rule that "
                                          f"gives these inputs' output shape; its fake cannot be derived")
            dtype = like.dtype if o.type in op.types else _torch_dtype(o.type)
            outs.append(torch.empty(shape, dtype=dtype, device=like.device))
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fake


# ---- autograd formulas of the built-in ops -----------------------------------------------------

def _inverse_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _inverse_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    yt = y.mT
    return -(yt @ grad @ yt)


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


_AUTOGRAD = {  # inverse: -Y^T dY Y^T; group_norm: PyTorch's own backward, recomputed
    "ortcustom::inverse": (_inverse_setup, _inverse_backward),
    "ortcustom::group_norm": (_group_norm_setup, _group_norm_backward),
}


def _register_builtins():
    from .kernels import snake_case
    from .ops import ALL

    return {snake_case(op.name): register(op) for op in ALL if op.torch}


globals().update(_register_builtins())
__all__ = ["register", "group_norm", "inverse"]
