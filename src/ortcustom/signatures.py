"""Several declarations under one op name ("siblings"): one op, several type signatures, each
with its own kernel, dispatched by the node's input types.

Siblings share a domain, a name and a version span, and declare the same inputs, outputs and
attributes (names, kinds, defaults): ONNX (and ORT) make one schema per name, so only the element
types may differ, and no node may match two of them. `Domain.add` checks this (`check_sibling`),
the glue checks what it relies on again (a plain library), and every path picks a node's
declaration the same way: the first whose signature takes the node's input types (`pick`).

Layer 0 (with the tables): NumPy only."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .types import canonical, name_of_dtype


def accepts(op, types: Sequence[str | None]) -> bool:
    """Whether `op` takes a node whose inputs have these element types (ONNX names, one per node
    input; None: absent or unknown), as ORT binds them: a constraint to one type across the inputs
    it types, each tensor of a heterogeneous variadic on its own."""
    binding: dict[str, str] = {}
    decls = op.inputs
    if len(types) > len(decls) and not (decls and decls[-1].variadic):
        return False
    for i, t in enumerate(types):
        if t is None:
            continue
        d = decls[min(i, len(decls) - 1)]
        allowed = op.types.get(d.type)
        if allowed is None:
            if canonical(t) != d.type:
                return False
        elif canonical(t) not in allowed:
            return False
        elif not (d.variadic and not d.homogeneous) and binding.setdefault(d.type, canonical(t)) != canonical(t):
            return False
    return True


def type_of(value) -> str:
    """The element type name of an input value as a node would have it (an array, a GPU array, a
    str or bytes); an unknown dtype's own name (no declaration takes it)."""
    if hasattr(value, "__cuda_array_interface__"):
        dtype = np.dtype(value.__cuda_array_interface__["typestr"])
    elif isinstance(value, (str, bytes)):
        return "string"
    else:
        dtype = np.asarray(value).dtype
    try:
        return name_of_dtype(dtype)
    except ValueError:
        return str(dtype)


def pick(ops: Sequence, types: Sequence[str | None]):
    """The declaration among `ops` (siblings, in the domain's order) that takes these input types,
    None when none does."""
    return next((op for op in ops if accepts(op, types)), None)


def accepted(ops: Sequence) -> str:
    """For errors: each sibling's signature, 'or'-joined."""
    return " or ".join(op.accepted_types() for op in ops)


def siblings(ops: Sequence, op) -> tuple:
    """The declarations in `ops` (a domain's) that share `op`'s name and versions, `op` included."""
    return tuple(o for o in ops if o.name == op.name and (o.since, o.until) == (op.since, op.until))


def _io_shape(io) -> tuple:
    return (io.name, io.optional, io.variadic, io.min_arity if io.variadic else 1,
            io.homogeneous if io.variadic else True)


def _attr_shape(a) -> tuple:
    return (a.name, a.kind, a.required, None if a.required else repr(a.default))


def check_sibling(have, op) -> str:
    """Why `op` cannot join its sibling `have` ("" when it can)."""
    for what, key, group in (("inputs", _io_shape, "inputs"), ("outputs", _io_shape, "outputs"),
                             ("attributes", _attr_shape, "attrs")):
        a = [key(x) for x in getattr(have, group)]
        b = [key(x) for x in getattr(op, group)]
        if a != b:
            return (f"declarations of one op name must declare the same {what} (names, kinds"
                    f"{', defaults' if group == 'attrs' else ''}) and differ only in element types: "
                    f"{_listing(getattr(have, group))} vs {_listing(getattr(op, group))}")
    if op.torch is not None and op.torch == have.torch:
        return (f"both make the torch op {op.torch!r}, which has one kernel: give each declaration its own "
                f"torch= name, or none")
    both = _common_node(have, op)
    if both is not None:
        return (f"its signature {op.accepted_types()} and {have.accepted_types()} both take a node with "
                f"{both}: no node may match two declarations of one name")
    return ""


def _listing(items) -> str:
    return "(" + ", ".join(getattr(x, "name") for x in items) + ")"


def _columns(op):
    """Per input: the set of element types it may have, and its constraint (None: fixed, or a
    heterogeneous variadic's, which binds nothing)."""
    out = []
    for d in op.inputs:
        allowed = op.types.get(d.type)
        shared = d.type if allowed is not None and not (d.variadic and not d.homogeneous) else None
        out.append((frozenset(allowed) if allowed is not None else frozenset((d.type,)), shared))
    return out


def _common_node(a, b) -> str | None:
    """Input types that both `a` and `b` take, described; None when there are none. A node may leave
    out every optional input, so only required (and variadic) inputs tell two apart; a
    heterogeneous variadic's tensors are each checked alone, so its types never do (ORT is told
    "any" there). Inputs bound to one type by a constraint on either side form a group, which
    needs one type that all its inputs may have on both sides."""
    ca, cb = _columns(a), _columns(b)
    cols = [i for i, d in enumerate(a.inputs) if not d.optional and not (d.variadic and not d.homogeneous)]
    group = {i: i for i in cols}

    def root(i):
        while group[i] != i:
            i = group[i]
        return i

    for side in (ca, cb):
        first: dict[str, int] = {}
        for i in cols:
            shared = side[i][1]
            if shared is not None:
                group[root(i)] = root(first.setdefault(shared, i))
    types: dict[int, set] = {}
    for i in cols:
        common = set(ca[i][0] & cb[i][0])
        types[root(i)] = types[root(i)] & common if root(i) in types else common
    if any(not t for t in types.values()):
        return None
    described = [f"{a.inputs[i].name}: {sorted(types[root(i)])[0]}" for i in cols]
    return "(" + ", ".join(described) + ")" if described else "no required inputs"
