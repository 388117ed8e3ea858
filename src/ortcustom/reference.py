"""NumPy reference implementations of our ops for onnx.reference.ReferenceEvaluator:

    ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(domain))

The tests' oracle, and a way to debug a model that uses our ops without ONNX Runtime."""
from __future__ import annotations

import inspect

from onnx.reference.op_run import OpRun

from .registry import Domain, Op, normalize
from .signatures import accepted, pick, siblings, type_of


def reference_op(op: Op | tuple[Op, ...], domain: str) -> type[OpRun]:
    """An OpRun class running `op`'s reference (or, for Python ops, its compute function); for
    siblings (a tuple of declarations of one name), the one the inputs' types pick."""
    ops = op if isinstance(op, tuple) else (op,)
    for o in ops:
        if (o.reference or o.compute) is None:
            raise ValueError(f"op {o.name!r} has no reference implementation")
        if o.reference is None and "out_dtypes" in inspect.signature(o.compute).parameters:
            raise ValueError(f"op {o.name!r}: its compute function takes out_dtypes (each output tensor's type, "
                             f"from the node), which onnx.reference does not hand an op; give the op a "
                             f"reference= function that chooses its outputs' types itself")
    if len(ops) == 1:
        return _reference(ops[0], domain, lambda inputs: ops[0])

    def which(inputs):
        types = [None if x is None else type_of(x) for x in inputs]
        got = pick(ops, types)
        if got is None:
            names = ", ".join("absent" if t is None else t for t in types)
            raise TypeError(f"{ops[0].name}: no declaration takes inputs of types ({names}); it accepts "
                            f"{accepted(ops)}")
        return got

    return _reference(ops[0], domain, which)


def _reference(op: Op, domain: str, which) -> type[OpRun]:
    """The OpRun class of op's name; `which(inputs)` is the declaration that runs them."""

    def _run(self, *inputs, **_):
        op = which(inputs)
        fn = op.reference or op.compute
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
    return [reference_op(siblings(d.ops, op), d.name) for d in domains for op in d.ops if siblings(d.ops, op)[0] is op]
