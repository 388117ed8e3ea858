"""Which PyTorch operator becomes which ortcustom op, in which ONNX domain.

An `OpMapping` says: these torch ops (`aten::inverse`, `mynamespace::custom_group_norm`, ...)
become a node `domain::name` that ortcustom's `op` runs; each torch argument feeds the op input or
attribute of the name given in `args`. Both exporters are driven by it: the TorchScript symbolics
(`symbolics.py`) and the dynamo translation table (`translation.py`) are built from mappings.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Iterable, Sequence

import torch

from ..attr_check import InvalidAttribute, checked
from ..ops import (ALL as BUILTIN_OPS, Cholesky, CholeskyEx, Eigh, Eigvalsh, GroupNorm, Inverse, Qr, SearchSorted,
                   Slogdet, Solve, SolveEx, SolveTriangular, Svd, Svdvals, library_domains)
from ..registry import Domain, Op

DEFAULT_DOMAINS = {op.name: d.name for d in reversed(library_domains()) for op in d.ops}
"""Where the built-in ops go by default: the first domain of ortcustom's plain library that has them
(ops.library_domains): ORT's contrib com.microsoft::Inverse means the same as ours; GroupNorm goes
to "ortcustom" (com.microsoft::GroupNorm is ORT's own, different, CUDA-only op)."""

METADATA_KEY = "ortcustom.ops"  # model metadata for domains(): "domain::name=BuiltinOp;domain::name=package:Op;..."


def _overloads(torch_op) -> tuple[tuple[torch._ops.OpOverload, ...], bool]:
    """The OpOverloads that a torch op names, and whether it named one overload: an overload
    ("ns::op.overload", torch.ops.ns.op.overload, a torch.library.custom_op) is itself; a name
    without one ("ns::op", torch.ops.ns.op) is every functional overload (out= variants left out)."""
    if isinstance(torch_op, torch._ops.OpOverload):
        return (torch_op,), True
    inner = getattr(torch_op, "_opoverload", None)  # torch.library.custom_op's CustomOpDef
    if isinstance(inner, torch._ops.OpOverload):
        return (inner,), True
    if isinstance(torch_op, str):
        if "::" not in torch_op:
            raise ValueError(f"a torch op name is 'namespace::name' (e.g. 'aten::inverse'), got {torch_op!r}")
        ns, rest = torch_op.split("::", 1)
        name, _, overload = rest.partition(".")
        try:
            packet = getattr(getattr(torch.ops, ns), name)
            if overload:
                return (getattr(packet, overload),), True
        except (AttributeError, RuntimeError) as e:
            raise ValueError(f"no PyTorch operator {torch_op!r} is registered (define or import it "
                             f"before mapping it)") from e
        torch_op = packet
    if isinstance(torch_op, torch._ops.OpOverloadPacket):
        got = [getattr(torch_op, n) for n in torch_op.overloads()]
        return tuple(ov for ov in got if not ov._schema.is_mutable), False
    raise TypeError(f"expected a torch op (a name 'ns::op', torch.ops.ns.op[.overload] or a "
                    f"torch.library.custom_op), got {torch_op!r}")


def _qualified(overload: torch._ops.OpOverload) -> str:
    return overload._schema.name  # "aten::group_norm" (no overload name)


def _is_tensor(arg) -> bool:
    t = arg.type
    if t.kind() == "OptionalType":
        t = t.getElementType()
    return t.kind() == "TensorType"


@dataclass(frozen=True)
class Binding:
    """Where one torch argument goes: an op input (`index` into op.inputs), an attribute, or nowhere."""

    torch_name: str
    tensor: bool  # the torch argument is a Tensor (or Tensor?)
    kind: str  # "input", "attr" or "drop"
    target: str | None = None
    index: int = -1  # input position
    attr_kind: str | None = None
    elem_type: str | None = None  # for a scalar feeding an input: its fixed element type
    has_default: bool = False
    default: object = None


class OpMapping:
    """Torch ops -> the ortcustom op `op`, as node `domain::name` (name: `op.name` by default).

    `args`: for each argument of the torch op, in order, the name of the op input or attribute it
    feeds, or None to drop it (and arguments past the end of `args` are dropped). A Tensor argument
    feeds an input; a scalar argument (int, float, bool, str, lists) feeds the attribute of that
    name if the op has one, else an input of a fixed element type (made a constant tensor). By
    default: the op's inputs, then its attributes, in declaration order.
    """

    def __init__(self, torch_ops, op: Op, domain: str, *, name: str | None = None,
                 args: Sequence[str | None] | None = None, version: int = 1):
        if not isinstance(op, Op):
            raise TypeError(f"expected an ortcustom.Op, got {op!r}")
        if isinstance(torch_ops, (str, torch._ops.OpOverload, torch._ops.OpOverloadPacket)) or hasattr(
                torch_ops, "_opoverload"):
            torch_ops = [torch_ops]
        Domain(domain)  # validates the name (not ONNX's own domains)
        self.domain = domain
        self.version = version
        self.name = name or op.name
        self.base = op
        # the declaration ORT registers: the op itself, or a copy under the node's name
        self.op = op if self.name == op.name else dataclasses.replace(op, name=self.name)
        self.args = None if args is None else tuple(args)
        self.bindings = {}
        for t in torch_ops:
            self.bindings.update(self._bind_all(*_overloads(t)))
        if not self.bindings:
            raise ValueError("an OpMapping needs at least one torch op")
        self.overloads: tuple[torch._ops.OpOverload, ...] = tuple(self.bindings)
        _remember(self)

    @property
    def torch_names(self) -> tuple[str, ...]:
        """Qualified names of the torch ops ("aten::inverse"), as the TorchScript exporter knows them."""
        return tuple(_qualified(ov) for ov in self.overloads)

    @property
    def node(self) -> str:
        return f"{self.domain}::{self.name}"

    def _bind_all(self, overloads, named: bool) -> dict:
        """{overload: its bindings} for the overloads of one torch op: an overload named is bound or
        refused; of a name's overloads, those that bind, if they take the same arguments."""
        if named:
            return {overloads[0]: self._bind(overloads[0])}
        bound, refused = {}, []
        for ov in overloads:
            try:
                bound[ov] = self._bind(ov)
            except ValueError as e:
                refused.append(f"{ov._schema}: {e}")
        name = overloads[0]._schema.name if overloads else "?"
        if not bound:
            raise ValueError(f"no overload of {name} can be mapped to {self.node}:\n  " + "\n  ".join(refused))
        if len({tuple(a.name for a in ov._schema.arguments) for ov in bound}) > 1:
            raise ValueError(f"the overloads of {name} take different arguments; map one, "
                             f"'{name}.<overload>', of: " + ", ".join(str(ov._schema) for ov in bound))
        return bound

    def _bind(self, ov) -> tuple[Binding, ...]:
        op, schema = self.op, ov._schema
        torch_args = list(schema.arguments)
        if not 1 <= len(schema.returns) <= len(op.outputs) or any(r.type.kind() != "TensorType" for r in schema.returns):
            returns = ", ".join(str(r.type) for r in schema.returns)
            raise ValueError(f"{schema.name} returns ({returns}); ortcustom.export maps ops whose results are Tensors, "
                             f"at most one per output of {op.name} ({len(op.outputs)})")
        targets = self.args
        if targets is None:
            targets = ([i.name for i in op.inputs] + [a.name for a in op.attrs])[:len(torch_args)]
        if len(targets) > len(torch_args):
            raise ValueError(f"args names {len(targets)} targets but {schema.name} has {len(torch_args)} "
                             f"arguments: {schema}")
        inputs = {i.name: n for n, i in enumerate(op.inputs)}
        attrs = {a.name: a for a in op.attrs}
        out, fed_inputs, fed_attrs = [], set(), set()
        for n, arg in enumerate(torch_args):
            target = targets[n] if n < len(targets) else None
            tensor = _is_tensor(arg)
            common = dict(torch_name=arg.name, tensor=tensor, has_default=arg.has_default_value(),
                          default=arg.default_value if arg.has_default_value() else None)
            where = f"{schema.name} argument {arg.name!r} ({arg.type})"
            if target is None:
                out.append(Binding(kind="drop", **common))
                continue
            if not tensor and target in attrs:
                a = attrs[target]
                out.append(Binding(kind="attr", target=target, attr_kind=a.kind, **common))
                fed_attrs.add(target)
            elif target in inputs:
                decl = op.inputs[inputs[target]]
                elem = None
                if not tensor:
                    if decl.type in op.types:
                        raise ValueError(f"{where} is a scalar; it can feed only an input of a fixed element "
                                         f"type, and {op.name}'s input {target!r} has type {decl.type!r}")
                    elem = decl.type
                out.append(Binding(kind="input", target=target, index=inputs[target], elem_type=elem, **common))
                fed_inputs.add(target)
            elif target in attrs:
                raise ValueError(f"{where} is a Tensor; it cannot feed attribute {target!r} of {op.name}")
            else:
                raise ValueError(f"{where}: {op.name} has no input or attribute {target!r}; inputs "
                                 f"{list(inputs)}, attributes {list(attrs)}")
        missing = [i.name for i in op.inputs if not i.optional and i.name not in fed_inputs]
        missing += [a.name for a in op.attrs if a.required and a.name not in fed_attrs]
        if missing:
            raise ValueError(f"mapping {schema.name} to {self.node}: nothing feeds {op.name}'s required {missing}")
        return tuple(out)

    def attribute(self, overload, b: Binding, value):
        """`value`, the torch argument that `b` binds to an attribute, as that attribute's kind
        (coerced) and passed through its declared check: what ORT would refuse at session creation
        is refused at export, with an InvalidAttribute (a ValueError) naming the node, the op, the
        attribute and the value."""
        a = next(a for a in self.op.attrs if a.name == b.target)
        try:
            coerced = checked(a, value)
        except InvalidAttribute as e:
            raise InvalidAttribute(f"exporting {_qualified(overload)} as {self.node}: {self.op.name} {e} (from "
                                   f"{_qualified(overload)} argument {b.torch_name!r})") from None
        return list(coerced) if isinstance(coerced, tuple) else coerced

    def __repr__(self):
        names = [_qualified(ov) + ("" if ov._overloadname == "default" else f".{ov._overloadname}")
                 for ov in self.overloads]
        return f"OpMapping({names} -> {self.node}, op={self.base.name})"


_lock = threading.Lock()
_known: dict[tuple[str, str], Op] = {}  # (domain, node op_type) -> the Op that runs it


def _remember(m: OpMapping) -> None:
    with _lock:
        _known[(m.domain, m.name)] = m.op


def known_op(domain: str, name: str) -> Op | None:
    """The ortcustom Op that a node `domain::name` made by some mapping of this process runs."""
    with _lock:
        return _known.get((domain, name))


def map_op(torch_op, op: Op, *, domain: str, name: str | None = None,
           args: Sequence[str | None] | None = None, version: int = 1) -> OpMapping:
    """Maps a torch op (e.g. your `torch.library.custom_op` "mynamespace::custom_group_norm") to the
    ortcustom op `op`, as node `domain::name`. Pass the result in `export(..., ops=[...])`."""
    return OpMapping(torch_op, op, domain, name=name, args=args, version=version)


def inverse(domain: str | None = None) -> OpMapping:
    """aten::inverse and aten::linalg_inv (torch.inverse, torch.linalg.inv) -> Inverse."""
    return OpMapping(["aten::inverse", "aten::linalg_inv"], Inverse, domain or DEFAULT_DOMAINS["Inverse"])


def group_norm(domain: str | None = None) -> OpMapping:
    """aten::group_norm (F.group_norm, nn.GroupNorm) -> GroupNorm (num_groups as attribute)."""
    return OpMapping("aten::group_norm", GroupNorm, domain or DEFAULT_DOMAINS["GroupNorm"],
                     args=("X", "num_groups", "scale", "bias", "epsilon", None))


def searchsorted(domain: str | None = None) -> OpMapping:
    """aten::searchsorted (torch.searchsorted, Tensor values) -> SearchSorted."""
    return OpMapping("aten::searchsorted.Tensor", SearchSorted, domain or DEFAULT_DOMAINS["SearchSorted"],
                     args=("sorted_sequence", "values", "out_int32", "right", "side", "sorter"))


def cholesky(domain: str | None = None) -> OpMapping:
    """aten::linalg_cholesky and aten::cholesky (torch.linalg.cholesky, torch.cholesky; `upper`) -> Cholesky."""
    return OpMapping(["aten::linalg_cholesky", "aten::cholesky"], Cholesky, domain or DEFAULT_DOMAINS["Cholesky"],
                     args=("A", "upper"))


def solve_triangular(domain: str | None = None) -> OpMapping:
    """aten::linalg_solve_triangular (torch.linalg.solve_triangular; upper, left, unitriangular) -> SolveTriangular."""
    return OpMapping("aten::linalg_solve_triangular", SolveTriangular,
                     domain or DEFAULT_DOMAINS["SolveTriangular"], args=("A", "B", "upper", "left", "unitriangular"))


def cholesky_ex(domain: str | None = None) -> OpMapping:
    """aten::linalg_cholesky_ex (torch.linalg.cholesky_ex; `upper`; check_errors dropped) -> CholeskyEx: (L, info)."""
    return OpMapping("aten::linalg_cholesky_ex", CholeskyEx, domain or DEFAULT_DOMAINS["CholeskyEx"],
                     args=("A", "upper", None))


def solve(domain: str | None = None) -> OpMapping:
    """aten::linalg_solve (torch.linalg.solve; `left`) -> Solve."""
    return OpMapping("aten::linalg_solve", Solve, domain or DEFAULT_DOMAINS["Solve"], args=("A", "B", "left"))


def solve_ex(domain: str | None = None) -> OpMapping:
    """aten::linalg_solve_ex (torch.linalg.solve_ex; `left`; check_errors dropped) -> SolveEx: (X, info)."""
    return OpMapping("aten::linalg_solve_ex", SolveEx, domain or DEFAULT_DOMAINS["SolveEx"], args=("A", "B", "left", None))


def slogdet(domain: str | None = None) -> OpMapping:
    """aten::linalg_slogdet and aten::slogdet (torch.linalg.slogdet, torch.slogdet) -> Slogdet: (sign, logabsdet)."""
    return OpMapping(["aten::linalg_slogdet", "aten::slogdet"], Slogdet, domain or DEFAULT_DOMAINS["Slogdet"],
                     args=("A",))


def svd(domain: str | None = None) -> OpMapping:
    """aten::linalg_svd (torch.linalg.svd; full_matrices; driver, a CUDA-only choice, dropped) -> Svd."""
    return OpMapping("aten::linalg_svd", Svd, domain or DEFAULT_DOMAINS["Svd"], args=("A", "full_matrices", None))


def svdvals(domain: str | None = None) -> OpMapping:
    """aten::linalg_svdvals (torch.linalg.svdvals; driver dropped) -> Svdvals."""
    return OpMapping("aten::linalg_svdvals", Svdvals, domain or DEFAULT_DOMAINS["Svdvals"], args=("A", None))


def qr(domain: str | None = None) -> OpMapping:
    """aten::linalg_qr (torch.linalg.qr; mode 'reduced', 'complete' or 'r') -> Qr: (Q, R)."""
    return OpMapping("aten::linalg_qr", Qr, domain or DEFAULT_DOMAINS["Qr"], args=("A", "mode"))


def eigh(domain: str | None = None) -> OpMapping:
    """aten::linalg_eigh (torch.linalg.eigh; UPLO) -> Eigh: (eigenvalues, eigenvectors)."""
    return OpMapping("aten::linalg_eigh", Eigh, domain or DEFAULT_DOMAINS["Eigh"], args=("A", "UPLO"))


def eigvalsh(domain: str | None = None) -> OpMapping:
    """aten::linalg_eigvalsh (torch.linalg.eigvalsh; UPLO) -> Eigvalsh."""
    return OpMapping("aten::linalg_eigvalsh", Eigvalsh, domain or DEFAULT_DOMAINS["Eigvalsh"], args=("A", "UPLO"))


BUILTIN = {"inverse": inverse, "group_norm": group_norm, "searchsorted": searchsorted, "cholesky": cholesky,
           "cholesky_ex": cholesky_ex, "solve_triangular": solve_triangular, "solve": solve, "solve_ex": solve_ex,
           "slogdet": slogdet, "svd": svd, "svdvals": svdvals, "qr": qr, "eigh": eigh,
           "eigvalsh": eigvalsh}
"""The mappings of torch's own ops, by name, for `ops=`: "inverse" (the default), "group_norm",
"searchsorted", "cholesky", "cholesky_ex", "solve_triangular", "solve", "solve_ex", "slogdet", "svd", "svdvals", "qr", "eigh",
"eigvalsh"."""

GROUPS = {"linalg": ("inverse", "cholesky", "cholesky_ex", "solve_triangular", "solve", "solve_ex", "slogdet", "svd",
                     "svdvals", "qr", "eigh", "eigvalsh")}
"""Names for several of BUILTIN at once, for `ops=`: "linalg" (torch.linalg's ops that ortcustom has)."""

DEFAULT_OPS = ("inverse",)


def _torch_library_mapping(op: Op, domain: str, version: int = 1) -> OpMapping:
    """op's own torch.library op (Op(torch=...)) -> op, its arguments as the declaration orders them."""
    from .. import torch_ops

    packet = torch_ops.register(op)
    args = [t.partition("=")[2] or t for t in op.torch_args] if op.torch_args else None
    return OpMapping(packet, op, domain, args=args, version=version)


def _domain_mappings(d: Domain) -> list[OpMapping]:
    """Each op of `d` that declares its torch op (Op(torch=...)) -> that op, as node d.name::op.name."""
    got = [_torch_library_mapping(op, d.name, d.version) for op in d.ops if op.torch and op.kernel is not None]
    if not got:
        raise ValueError(f"domain {d.name!r} has no native op that declares its torch op (Op(..., torch='ns::name'))")
    return got


def resolve(ops: Iterable | None) -> list[OpMapping]:
    """The mappings to export with: `ops` (OpMapping objects, built-in names, see BUILTIN and GROUPS, or
    Domains: each of their ops declared with torch= exports to itself in that domain), plus each
    built-in op's own torch op (torch.ops.ortcustom.*) -> that op, always (in the domain `ops`
    gives that op, else the default)."""
    if ops is None:
        ops = DEFAULT_OPS
    if isinstance(ops, (str, OpMapping, Domain)):
        ops = [ops]
    named = []  # each group's members in its place, each name once
    for item in ops:
        for name in GROUPS.get(item, (item,)) if isinstance(item, str) else (item,):
            if not (isinstance(name, str) and name in named):
                named.append(name)
    ops = named
    out: list[OpMapping] = []
    for item in ops:
        if isinstance(item, Domain):
            out.extend(_domain_mappings(item))
            continue
        if isinstance(item, str):
            if item not in BUILTIN:
                raise ValueError(f"unknown built-in mapping {item!r}; known: {sorted(BUILTIN)}, groups "
                                 f"{sorted(GROUPS)} (or pass an ortcustom.export.OpMapping, e.g. from map_op)")
            item = BUILTIN[item]()
        if not isinstance(item, OpMapping):
            raise TypeError(f"ops takes built-in names {sorted(BUILTIN)}, OpMapping objects and ortcustom.Domains, "
                            f"got {item!r}")
        out.append(item)
    seen: dict[str, OpMapping] = {}
    for m in out:
        for t in m.torch_names:
            if t in seen and seen[t] is not m:
                raise ValueError(f"{t} is mapped twice: to {seen[t].node} and to {m.node}")
            seen[t] = m
    for op in BUILTIN_OPS:  # ops that declare their torch op (Op(torch=...)) export to themselves
        if not op.torch or op.torch in seen:
            continue
        domain = next((m.domain for m in out if m.base is op and m.name == op.name), DEFAULT_DOMAINS[op.name])
        out.append(_torch_library_mapping(op, domain))
    return out


def metadata(mappings: Iterable[OpMapping]) -> str:
    """The METADATA_KEY value, "domain::name=Op;...": each node `domain::name` and the op it runs,
    a built-in op by its name, a package's op as "package:Op" (domains() imports the package)."""
    pairs = set()
    for m in mappings:
        if m.base in BUILTIN_OPS:
            pairs.add(f"{m.node}={m.base.name}")
        elif (pkg := package_of(m.base)) is not None:
            pairs.add(f"{m.node}={pkg}:{m.base.name}")
    return ";".join(sorted(pairs))


def package_of(op: Op) -> str | None:
    """The importable package that declares `op` (where its kernel lives: native="pkg.mod:name",
    or its Python function's module), if `package_op` finds it there; else None."""
    import sys

    module = op.native.partition(":")[0] if isinstance(op.native, str) and ":" in op.native else getattr(
        op.compute, "__module__", None)
    pkg = (module or "__main__").split(".")[0]
    if pkg == "__main__" or pkg not in sys.modules:
        return None
    return pkg if _declared(sys.modules[pkg], op.name) is op else None


def package_op(pkg: str, name: str, node: str) -> Op:
    """The op `name` that the package `pkg` declares, for the model's node `node`: pkg imported
    (ImportError naming it when it cannot be), then its attribute `name` or an op of a Domain of it."""
    import importlib

    try:
        module = importlib.import_module(pkg)
    except ImportError as e:
        raise ImportError(f"the model's node {node} is the op {name} of the package {pkg!r} (its metadata says "
                          f"so), which does not import here ({e}): install {pkg}, or register its domain "
                          f"yourself") from e
    op = _declared(module, name)
    if op is None:
        raise ImportError(f"the model's node {node} is the op {name} of the package {pkg!r} (its metadata says so), "
                          f"and {pkg} declares no op {name} (another version of {pkg}?)")
    return op


def _declared(module, name: str) -> Op | None:
    """`module`'s op `name`: its attribute of that name, or an op of that name in one of its Domains."""
    v = getattr(module, name, None)
    if isinstance(v, Op) and v.name == name:
        return v
    for v in list(vars(module).values()):
        if isinstance(v, Domain):
            for op in v.ops:
                if op.name == name:
                    return op
    return None
