"""The C++ source of a plain custom-op library, generated from Python declarations at build time.

    python -m ortcustom library-source [--path DIR] MODULE:ATTR [MODULE:ATTR ...] -o table.cpp
        [--header spec.h [--namespace NS]] [--list]

ATTR names a Domain (or a list of them) in MODULE. `--header` writes the kernels' interface
(kernel_header.py), `--list` the kernels the declarations name and the files they come from (for a
build configuring itself). The table holds the domains' declarations (op_table.lower's values) as
static oc_op_def data (ortcustom/op_def.h) and the library's exported `RegisterCustomOps`, which
hands them to the glue (ortcustom/glue/). Compiled with the glue's sources and the kernels into one
shared library, it is what ONNX Runtime loads by path with no Python: C/C++, C#, Java, Triton.
Every op must have a native kernel; the kernels are found by their exported entries
(`ortcustom_kernel_<name>_cpu/_cuda`, weak references: an entry not built is simply absent).

Runs without the compiled parts of ortcustom, onnx or onnxruntime (ortcustom's own build runs it
from the source tree).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from .types import ATTR_KINDS


def _c(s: str) -> str:
    """A C string literal of s's UTF-8 bytes, any text (an op named "String-Split", "say \"hi\"" or
    an emoji): bytes outside printable ASCII as 3-digit octal escapes (a universal character name
    cannot spell a character beyond U+FFFF as JSON's surrogate pairs do; a hex escape runs on)."""
    def byte(b: int) -> str:
        return "\\" + chr(b) if chr(b) in '"\\?' else chr(b) if 32 <= b < 127 else f"\\{b:03o}"

    return '"' + "".join(byte(b) for b in s.encode("utf-8")) + '"'


def c_attr_kind(kind: str) -> str:
    return ATTR_KINDS[kind].c_enum  # kernel.h's oc_attr_kind names


def kernel_name(op) -> str:
    native = op.native
    if isinstance(native, str):
        return native.rpartition(":")[2]
    return native.name  # a NativeKernel


def _io(ios) -> str:
    rows = [f"{{{_c(io.name)}, OC_IO_{io.kind.upper()}, {int(io.cpu)}, {io.min_arity}, {int(io.homogeneous)}, "
            f"{io.shape_of}, {int(io.constrained)}, {int(io.constant)}}}" for io in ios]
    return ", ".join(rows) or "{}"


def _attr_value(tag: str, a) -> tuple[str, str]:
    """(extra declarations, the oc_attr initializer) of a's default (a: an op_table.AttrDef)."""
    value = a.default
    i, f, s, ints, floats, count, pre = 0, 0.0, "nullptr", "nullptr", "nullptr", 1, ""
    strings, lengths = "nullptr", "nullptr"
    if value is None:
        pass
    elif a.kind == "int":
        i = value
    elif a.kind == "float":
        f = value
    elif a.kind == "string":
        s, count = _c_bytes(value), len(_utf8(value))
    elif a.kind == "strings":
        elems = [_utf8(v) for v in value]
        pre = (f"const char* const {tag}_s[] = {{{', '.join(_c_bytes(v) for v in value) or 'nullptr'}}};\n"
               f"const int64_t {tag}_n[] = {{{', '.join(str(len(v)) for v in elems) or '0'}}};\n")
        strings, lengths, count = f"{tag}_s", f"{tag}_n", len(elems)
    elif a.kind == "ints":
        pre = f"const int64_t {tag}[] = {{{', '.join(str(v) for v in value) or '0'}}};\n"
        ints, count = tag, len(value)
    else:
        pre = f"const float {tag}[] = {{{', '.join(repr(float(v)) + 'f' for v in value) or '0'}}};\n"
        floats, count = tag, len(value)
    init = (f"{{{_c(a.name)}, {c_attr_kind(a.kind)}, 0, {count}, {i}LL, {float(f)!r}, {s}, {ints}, {floats}, {strings}, {lengths}, nullptr}}")  # (a tensor attribute has no default)
    return pre, init


def _utf8(value) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def _c_bytes(value) -> str:
    """A C string literal of exactly value's bytes: text as JSON writes it (readable); bytes
    (Attr(bytes=True)) as octal escapes (NULs, any byte; never greedy as a hex escape is)."""
    if isinstance(value, str):
        return _c(value)
    return '"' + "".join(f"\\{c:03o}" for c in value) + '"'


def _int_bounds(a) -> str:
    """oc_attr_def's int_min, int_max: an int attribute's bounds, exact (0 where it has none)."""
    def lit(v):
        if a.kind != "int" or v is None:
            return "0LL"
        return "INT64_MIN" if v == -2**63 else f"{v}LL"  # -2**63's literal would not fit

    return f"{lit(a.min)}, {lit(a.max)}"


def _notes(d, op) -> None:
    if op.native is None:
        raise ValueError(f"{d.name}::{op.name} has a Python kernel: a plain library holds native ops only")
    if any(a.check is not None for a in op.attrs):
        print(f"ortcustom library-source: note: {d.name}::{op.name}'s attribute check= functions are "
              f"Python's: the plain library checks min/max/choices and what the kernel's create checks",
              file=sys.stderr)
    if any(callable(o.shape) for o in op.outputs):
        print(f"ortcustom library-source: note: {d.name}::{op.name}'s Python shape rules stay in "
              f"Python; the plain library leaves those outputs' shapes to run time", file=sys.stderr)


def _op_def(t: str, table) -> list[str]:
    """The C of one op's oc_op_def named `t` (table: an op_table.OpTable), kernels bound later."""
    out, attrs = [], []
    for ai, a in enumerate(table.attrs):
        pre, init = _attr_value(f"{t}_a{ai}", a)
        if pre:
            out.append(pre.rstrip("\n"))
        choices = "nullptr"
        if a.choices is not None:
            out.append(f"const int64_t {t}_c{ai}[] = {{{', '.join(map(str, a.choices))}}};")
            choices = f"{t}_c{ai}"
        attrs.append(f"{{{_c(a.name)}, {c_attr_kind(a.kind)}, {int(a.required)}, {init}, "
                     f"{int(a.min is not None)}, {int(a.max is not None)}, {float(a.min or 0)!r}, "
                     f"{float(a.max or 0)!r}, {len(a.choices or ())}, {choices}, {_int_bounds(a)}}}")
    rows = [v for row in table.bindings for v in row]
    return out + [
        f"const oc_io_def {t}_in[] = {{{_io(table.inputs)}}};",
        f"const oc_io_def {t}_out[] = {{{_io(table.outputs)}}};",
        f"const oc_attr_def {t}_attrs[] = {{{', '.join(attrs) or '{}'}}};",
        f"const int32_t {t}_rows[] = {{{', '.join(map(str, rows))}}};",
        f"oc_op_def {t} = {{{_c(table.name)}, {table.since}, {table.until}, {len(table.inputs)}, "
        f"{len(table.outputs)}, {len(table.attrs)}, {len(table.bindings)}, {t}_in, {t}_out, {t}_attrs, "
        f"{t}_rows, {_c(table.accepted)}, nullptr, nullptr, 0, 0, nullptr}};",  # no Python hooks here
        ""]


def generate(domains, source: str) -> str:
    from .op_table import lower

    out = [f"// Generated by `python -m ortcustom library-source` from {source}: do not edit.",
           '#include <mutex>', '', '#include "glue.h"', '', 'extern "C" {']
    names = sorted({kernel_name(op) for d in domains for op in d.ops})
    for n in names:
        for dev in ("cpu", "cuda"):
            out.append(f"const oc_kernel* ortcustom_kernel_{n}_{dev}(void) __attribute__((weak));")
    out += ["}", "", "namespace {", ""]
    op_refs, bind = [], []
    for di, d in enumerate(domains):
        refs = []
        for oi, op in enumerate(d.ops):
            t = f"k{di}_{oi}"
            _notes(d, op)
            out += _op_def(t, lower(op))
            k = kernel_name(op)
            bind += [f"  {t}.cpu = ortcustom_kernel_{k}_cpu ? ortcustom_kernel_{k}_cpu() : nullptr;",
                     f"  {t}.cuda = ortcustom_kernel_{k}_cuda ? ortcustom_kernel_{k}_cuda() : nullptr;"]
            refs.append(f"&{t}")
        out += [f"const oc_op_def* const k{di}_ops[] = {{{', '.join(refs)}}};",
                f"const oc_domain_def k{di} = {{{_c(d.name)}, {len(refs)}, k{di}_ops}};", ""]
        op_refs.append(f"&k{di}")
    listing = ";".join(f"{d.name}:{','.join(op.name for op in d.ops)}" for d in domains)
    out += [f"const oc_domain_def* const kDomains[] = {{{', '.join(op_refs)}}};", "",
            "void bind_kernels() {", *bind, "}", "", "}  // namespace", "",
            "// What ONNX Runtime calls when it loads this library by path.",
            'extern "C" __attribute__((visibility("default"))) OrtStatus* RegisterCustomOps(OrtSessionOptions* options,',
            "                                                                             const OrtApiBase* base) {",
            "  static std::once_flag once;",
            "  std::call_once(once, bind_kernels);",
            f"  return oc_glue_register(options, base, kDomains, {len(domains)});",
            "}", "",
            "// What RegisterCustomOps registers, \"domain:op,op;domain:op\" (ortcustom.get_library_path checks it).",
            'extern "C" __attribute__((visibility("default"))) const char* ortcustom_info_registers(void) {',
            f"  return {_c(listing)};",
            "}", ""]
    return "\n".join(out)


def load_domains(refs):
    """Domains named by MODULE:ATTR references (ATTR: a Domain or a sequence of them)."""
    from .registry import Domain

    got = []
    for ref in refs:
        module, _, attr = ref.partition(":")
        value = getattr(importlib.import_module(module), attr or "domain")
        if callable(value) and not isinstance(value, Domain):
            value = value()
        for d in value if isinstance(value, (list, tuple)) else [value]:
            if not isinstance(d, Domain):
                raise TypeError(f"{ref} is not an ortcustom.Domain (or a list of them): {d!r}")
            got.append(d)
    return got


def check(library: str, domains) -> list[str]:
    """What is wrong between the built `library` and the declarations it was generated from (the
    kernels' names, attribute kinds, signatures: the glue's own check), one line each."""
    from . import _customop
    from .native import load_kernels

    lib, problems = load_kernels(library), []
    for d in domains:
        defs = []
        for op in d.ops:
            try:
                kernel = lib[kernel_name(op)]
            except (LookupError, ValueError, ImportError) as e:
                problems.append(f"{d.name}::{op.name}: {e}")
                continue
            od = _customop.OpDef(op, kernel)
            defs.append(od)
            for addr in (kernel.cpu, kernel.cuda):
                why = _customop.check_kernel(od, addr) if addr else None
                if why:
                    problems.append(f"{d.name}::{op.name}: {why}")
        why = _customop.check_domain(_customop.DomainDef(d.name, defs))  # what RegisterCustomOps refuses
        if why:
            problems.append(why)
    return problems


def check_main(argv=None) -> int:
    """python -m ortcustom library-check [--path DIR] LIBRARY MODULE:ATTR... [-o STAMP]: a package's
    build refuses a library whose kernels do not match the declarations (exit 1, saying why)."""
    return _reported("library-check", _check, argv)


def _check(argv) -> int:
    p = argparse.ArgumentParser(prog="python -m ortcustom library-check", description=check_main.__doc__)
    p.add_argument("library")
    p.add_argument("refs", nargs="+", metavar="MODULE:ATTR")
    p.add_argument("--path", action="append", default=[])
    p.add_argument("-o", "--output", help="a stamp file written when the check passes (for the build)")
    a = p.parse_args(argv)
    sys.path[:0] = a.path
    problems = check(a.library, load_domains(a.refs))
    for line in problems:
        print(f"ortcustom library-check: {line}", file=sys.stderr)
    if problems:
        return 1
    if a.output:
        with open(a.output, "w") as f:
            f.write("checked\n")
    return 0


def main(argv=None) -> int:
    """python -m ortcustom library-source: see the module's doc."""
    return _reported("library-source", _source, argv)


def _source(argv) -> int:
    p = argparse.ArgumentParser(prog="python -m ortcustom library-source", description=__doc__.split("\n")[0])
    p.add_argument("refs", nargs="+", metavar="MODULE:ATTR")
    p.add_argument("--path", action="append", default=[], help="import MODULE from here first (a source tree)")
    p.add_argument("-o", "--output", help="the library's table (C++)")
    p.add_argument("--header", help="the kernels' spec header (C++): ortcustom/kernel_header.py")
    p.add_argument("--namespace", help="the header's namespace (default: PACKAGE::spec, PACKAGE the first "
                                       "MODULE's top package)")
    p.add_argument("--list", action="store_true",
                   help="print the kernels the declarations name ('kernel NAME') and the Python files they were "
                        "read from ('file PATH', those under --path): for a build configuring itself")
    a = p.parse_args(argv)
    if not (a.output or a.header or a.list):
        p.error("give -o TABLE.cpp, --header SPEC.h, --list or several")
    sys.path[:0] = a.path
    domains, source = load_domains(a.refs), " ".join(a.refs)
    if a.list:
        for name in dict.fromkeys(kernel_name(op) for d in domains for op in d.ops if op.native is not None):
            print("kernel", name)
        roots = [os.path.abspath(r) + os.sep for r in a.path]
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if f and any(os.path.abspath(f).startswith(r) for r in roots):
                print("file", os.path.abspath(f))
    if a.output:
        _write(a.output, generate(domains, source))
    if a.header:
        from .kernel_header import generate as header

        _write(a.header, header(domains, source, a.namespace or a.refs[0].partition(".")[0].partition(":")[0] + "::spec"))
    return 0


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _reported(command: str, run, argv) -> int:
    """run(argv), for a package's build: an error (a typo in a declaration, a module that does not
    import) is one line naming the file and line it arose in and what is wrong (the op, in a
    declaration's error), exit status 1, not a traceback in the build's log."""
    try:
        return run(argv)
    except Exception as e:  # noqa: BLE001 - reported in one line
        print(f"ortcustom {command}: {error_line(e)}", file=sys.stderr)
        return 1


def error_line(e: BaseException) -> str:
    """'FILE:LINE: Kind: message' for an exception raised while importing or using declarations: the
    innermost place outside ortcustom (the user's file), where there is one."""
    import sysconfig

    where = None
    if isinstance(e, SyntaxError) and e.filename:
        where = f"{e.filename}:{e.lineno}"
    else:  # not ortcustom's files, nor Python's own (importlib)
        skip = tuple(os.path.join(os.path.abspath(d), "") for d in (
            os.path.dirname(__file__), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]))
        tb = e.__traceback__
        while tb is not None:
            name = tb.tb_frame.f_code.co_filename
            if not name.startswith("<") and not os.path.abspath(name).startswith(skip):
                where = f"{name}:{tb.tb_lineno}"
            tb = tb.tb_next
    what = e.msg if isinstance(e, SyntaxError) else str(e)
    return f"{where + ': ' if where else ''}{type(e).__name__}: {what}"


if __name__ == "__main__":
    sys.exit(main())
