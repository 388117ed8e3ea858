"""NumPy reference implementations of our ops for onnx.reference.ReferenceEvaluator:

    ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(domain))

The tests' oracle, and a way to debug a model that uses our ops without ONNX Runtime."""
from __future__ import annotations

from onnx.reference.op_run import OpRun

from .registry import Domain, Op, normalize


def reference_op(op: Op, domain: str) -> type[OpRun]:
    """An OpRun class running `op`'s reference (or, for Python ops, its compute function)."""
    fn = op.reference or op.compute
    if fn is None:
        raise ValueError(f"op {op.name!r} has no reference implementation")

    def _run(self, *inputs, **_):
        attrs = {}
        for a in op.attrs:
            value = getattr(self, a.name, None)
            value = value if value is not None else (None if a.required else a.default)
            # as a kernel gets it (onnx hands text; Attr(bytes=True) takes bytes)
            attrs[a.name] = normalize(a, value) if value is not None and a.kind in ("string", "strings") else value
        # ReferenceEvaluator drops trailing absent inputs: pad them as None, like our kernels see them
        inputs = list(inputs) + [None] * max(0, len(op.inputs) - len(inputs))
        out = fn(*inputs, **attrs)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    cls_attrs = {"op_domain": domain, "_run": _run, "__doc__": op.doc}
    # OpRun reads attributes named in the class; declare them so that defaults apply
    for a in op.attrs:
        cls_attrs[a.name] = None
    return type(op.name, (OpRun,), cls_attrs)


def reference_ops(*domains: Domain) -> list[type[OpRun]]:
    """OpRun classes for every op of `domains` (default: the built-in ops in their usual domains)."""
    if not domains:
        from .ops import GroupNorm, Inverse

        domains = (Domain("com.microsoft").add(Inverse), Domain("ortcustom").add(GroupNorm, Inverse))
    return [reference_op(op, d.name) for d in domains for op in d.ops]
