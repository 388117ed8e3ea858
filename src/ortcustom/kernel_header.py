"""The C++ header that native kernels include: their interface, generated from the declarations.

    python -m ortcustom library-source [--path DIR] MODULE:ATTR ... --header ops_spec.h [--namespace NS]

One struct per kernel (named after it: `native="pkg._kernels:scaled_add"` gives `NS::scaled_add`),
all of it from op_table.lower (the table the glue checks the kernel against):

    struct scaled_add {
      static constexpr const char* op = "ScaledAdd";
      struct in { static constexpr int32_t X = 0, Y = 1; };  // input indices: ctx.input(in::X)
      struct out { static constexpr int32_t Z = 0; };        // output indices: ctx.output(out::Z, ...)
      struct attr { static double alpha(const oc::Context&); };  // typed, by the declared kind
      struct types { using T = oc::types<float, double, oc::half>; };  // oc::dispatch<types::T>
      static constexpr oc::Spec spec;                  // OC_KERNEL(scaled_add, cpu, NS::scaled_add::spec, fn)
      static constexpr oc::Spec spec_inplace(const int32_t (&)[n_outputs]);  // with in-place outputs
    };

so a kernel states its interface once, in Python, and a declaration it no longer fits (a renamed
input, another attribute kind, a new element type its dispatch does not handle) fails to compile.
Which outputs may be written over which inputs stays the kernel's (spec_inplace): it differs
between a kernel's devices, and the declaration cannot know it. Names that are not C++ identifiers
have other characters replaced by `_`; C++ keywords get a trailing `_`.

Runs with NumPy alone, like library_source (ortcustom's own build runs it from the source tree).
"""
from __future__ import annotations

import re

from .library_source import _c, c_attr_kind, kernel_name
from .op_table import lower
from .types import ELEMENT_TYPES, name_of_enum, onnx_enum

_KEYWORDS = frozenset("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if
inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq""".split())


# what every spec struct has (a struct cannot be named like one of its members)
_MEMBERS = frozenset("op n_inputs n_outputs n_attrs in out attr types input_names output_names attr_specs signatures "
                     "spec spec_inplace".split())


def c_name(name: str) -> str:
    """A C++ identifier for a declared name."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if ident in _KEYWORDS else ident


def c_dtype(enum: int) -> str:
    return ELEMENT_TYPES[name_of_enum(enum)].c_enum  # kernel.h's oc_dtype names


def _names(what: str, op, names, scope: str) -> list[str]:
    """C++ identifiers for names declared in the struct `scope` (none may be named like it)."""
    idents = [c_name(n) + ("_" if c_name(n) == scope else "") for n in names]
    for i, ident in enumerate(idents):
        if ident in idents[:i]:
            raise ValueError(f"op {op.name!r}: {what} names {names[idents.index(ident)]!r} and {names[i]!r} are both "
                             f"{ident!r} in C++: rename one")
    return idents


def _indices(idents) -> str:
    return f" static constexpr int32_t {', '.join(f'{n} = {i}' for i, n in enumerate(idents))}; " if idents else ""


def _struct(op, kernel: str) -> tuple[str, list[str]]:
    """(the interface as data, to compare ops sharing a kernel; the struct's lines)."""
    t = lower(op)
    ins = _names("input", op, [i.name for i in t.inputs], "in")
    outs = _names("output", op, [o.name for o in t.outputs], "out")
    attrs = _names("attribute", op, [a.name for a in t.attrs], "attr")
    constraints = _names("type constraint", op, list(op.types), "types")
    width = len(ins) + len(outs)
    rows = ", ".join("{" + ", ".join(c_dtype(e) for e in row) + "}" for row in t.bindings)
    lines = [
        f"// {op.name}: {t.accepted}",
        f"struct {c_name(kernel)} {{",
        f"  static constexpr const char* op = {_c(op.name)};",
        f"  static constexpr int32_t n_inputs = {len(ins)}, n_outputs = {len(outs)}, n_attrs = {len(attrs)};",
        f"  struct in {{{_indices(ins)}}};",
        f"  struct out {{{_indices(outs)}}};",
        "  struct attr {"]
    for j, (ident, a) in enumerate(zip(attrs, t.attrs)):
        lines.append(f"    static auto {ident}(const oc::Context& ctx) {{ return oc::attr_value<{c_attr_kind(a.kind)}>"
                     f"(ctx.attr({j})); }}")
    lines += ["  };", "  struct types {"]
    for ident, allowed in zip(constraints, op.types.values()):
        lines.append(f"    using {ident} = oc::types_of<{', '.join(c_dtype(onnx_enum(e)) for e in allowed)}>;")
    lines += [
        "  };",
        f"  static constexpr const char* input_names[] = {{{', '.join([_c(i.name) for i in t.inputs] + ['nullptr'])}}};",
        f"  static constexpr const char* output_names[] = {{{', '.join([_c(o.name) for o in t.outputs] + ['nullptr'])}}};",
        f"  static constexpr oc_attr_spec attr_specs[] = {{"
        + "".join(f"{{{_c(a.name)}, {c_attr_kind(a.kind)}}}, " for a in t.attrs) + "{nullptr, 0}};",
        f"  static constexpr int32_t signatures[][{width}] = {{{rows}}};",
        "  static constexpr oc::Spec spec = {input_names, output_names, attr_specs, OC_SIGNATURES(signatures), nullptr};",
        "  // spec with outputs that may be written over inputs: per output, an input (in::X) or -1",
        "  static constexpr oc::Spec spec_inplace(const int32_t (&inplace)[n_outputs]) {",
        "    oc::Spec s = spec;",
        "    s.inplace = inplace;",
        "    return s;",
        "  }",
        "};",
        ""]
    interface = (t.inputs, t.outputs, tuple((a.name, a.kind) for a in t.attrs), t.bindings, tuple(op.types.items()))
    return interface, lines


def generate(domains, source: str, namespace: str) -> str:
    out = [f"// Generated by `python -m ortcustom library-source --header` from {source}: do not edit.",
           "// Each kernel's interface as its op declares it (ortcustom/kernel_header.py says how to use it).",
           "#pragma once", "", '#include "ortcustom/kernel.hpp"', "", f"namespace {namespace} {{", ""]
    seen = {}
    for d in domains:
        for op in d.ops:
            if op.native is None:
                continue
            kernel = kernel_name(op)
            if c_name(kernel) in _MEMBERS:
                raise ValueError(f"op {op.name!r}: a kernel named {kernel!r} cannot have a spec struct of that name "
                                 f"(a member of every spec is): rename the kernel")
            interface, lines = _struct(op, kernel)
            if kernel in seen:
                if seen[kernel][0] != interface:
                    raise ValueError(f"ops {seen[kernel][1]!r} and {op.name!r} name one kernel {kernel!r} but declare "
                                     f"different inputs, outputs, attributes or types: one kernel has one interface")
                continue
            seen[kernel] = (interface, op.name)
            out += lines
    out += [f"}}  // namespace {namespace}", ""]
    return "\n".join(out)
