"""A mutation campaign: realistic one-line bugs planted one at a time in the glue, the Cython front end
and the Python front end; each must make some of the tests named beside it fail ("killed").

    python tests/mutants/run.py [--only N,M] [--build-dir build]

Run from a checkout whose package is installed (pip install --no-build-isolation -Cbuild-dir=build .,
or -e: then the build dir is the editable install's):
a mutant of a .py file is copied over the installed one; a mutant of the glue or the Cython module is
built with ninja in the build dir and its libraries copied over the installed ones (plain-library
tests compile the installed glue sources: those are copied too). Everything is restored at the end.
Prints one line per mutant: killed (by which test) or SURVIVED, then the kill rate.
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "ortcustom"

G, C, P = "glue", "cython", "python"
T_GLUE = ["tests/test_glue_hands_kernels.py", "tests/test_attribute_values_alike_on_every_path.py"]
T_ATTRS = ["tests/test_attribute_values_alike_on_every_path.py", "tests/test_creation_errors.py",
           "tests/test_api_arguments.py", "tests/test_native_libraries.py", "tests/test_op_api.py"]
T_API = ["tests/test_op_api.py", "tests/test_registry.py", "tests/test_api_arguments.py", "tests/test_python_ops.py"]

# (what it breaks, file under src/ortcustom, the line as it is, the line as the bug makes it, tests)
MUTANTS = [
    ("session: output i+1 written for output i", "glue/ort_op.cpp",
     "KernelContext_GetOutput(ctx_, (size_t)i, shape", "KernelContext_GetOutput(ctx_, (size_t)((i + 1) % node_outputs_), shape", T_GLUE),
    ("direct call: output i+1 allocated for output i", "glue/direct.cpp",
     "host_->output(host_->self, i, shape", "host_->output(host_->self, (i + 1) % c.n_outputs, shape", T_GLUE),
    ("one name for every node's unknown dim", "glue/ort_op.cpp",
     "g_unknown_dims.fetch_add(1) + 1", "g_unknown_dims.load() + 1", T_GLUE),
    ("signature check compares input 0 only", "glue/attrs.cpp",
     "for (int32_t j = 0; j < width && found; ++j)", "for (int32_t j = 0; j < 1 && found; ++j)", T_GLUE),
    ("min bound taken as exclusive", "glue/attrs.cpp",
     "if (d.has_min && !(a.f >= d.min))", "if (d.has_min && !(a.f > d.min))", T_ATTRS),
    ("a node's string attribute keeps its NUL", "glue/attrs.cpp",
     "s.resize(n > 0 ? n - 1 : 0);", "s.resize(n);", T_GLUE),
    ("in-place index one past the inputs accepted", "glue/attrs.cpp",
     "k->inplace[o] >= ki)", "k->inplace[o] > ki)", T_GLUE + ["tests/test_contract.py"]),
    ("outputs past 64 not checked", "glue/run.cpp",
     "for (int32_t i = 0; i < c.n_outputs; ++i)", "for (int32_t i = 0; i < c.n_outputs && i < 64; ++i)", T_GLUE),
    ("a missing required attribute taken as its default", "glue/attrs.cpp",
     "      if (d.required) {", "      if (false) {", T_ATTRS),
    ("an attribute of the wrong kind read as absent", "glue/attrs.cpp",
     "      if (other) {", "      if (false) {", T_ATTRS),
    ("a default string's count in characters", "_attributes.pxi",
     "a.count = len(b)", "a.count = len(value)", T_GLUE),
    ("direct call repeat: the kernel's error dropped", "_direct.pxi",
     "        if rc != OC_OK:\n            text = msg.decode(\"utf-8\", \"replace\") if msg != NULL else f\"{self.op.name}",
     "        if False:\n            text = msg.decode(\"utf-8\", \"replace\") if msg != NULL else f\"{self.op.name}",
     ["tests/test_kernels_direct.py"]),
    ("direct call repeat: every input's dims written from one place", "_direct.pxi",
     "dims[at + j] = cnp.PyArray_DIMS(a)[j]", "dims[j] = cnp.PyArray_DIMS(a)[j]", ["tests/test_kernels_direct.py"]),
    ("direct call repeat: a Python int taken as NumPy's default int", "_direct.pxi",
     "given[i] = np.asarray(given[i], dtype=dt)", "given[i] = np.asarray(given[i])", ["tests/test_glue_hands_kernels.py"]),
    ("direct call repeat: NumPy's allocation error, naming no op", "_direct.pxi",
     "raise cannot_allocate(r.op, i, tuple([shape[j] for j in range(rank)]), r.dtypes[i], e) from None", "raise",
     ["tests/test_kernels_direct.py"]),
    ("direct call: Python hands output i+1's buffer", "_direct.pxi",
     "call.output(i, tuple(", "call.output(min(i + 1, call.n_outputs - 1), tuple(", T_GLUE),
    ("Python shape rule: one name for unknown dims", "_shapes.pxi",
     "next(_unknown_dims)", "1", T_GLUE),
    ("sessions skip Attr(check=)", "_customop.pyx",
     "d.host_checks = t.host_shapes, t.host_checks", "d.host_checks = t.host_shapes, False", T_GLUE + T_ATTRS),
    ("float attributes not rounded to float32 in Python", "registry.py",
     "return float(_np.float32(v))", "return float(v)", T_GLUE + T_ATTRS),
    ("a kernel cached before it is checked", "native.py",
     "    d = _customop.OpDef(op, kernel)\n", "    d = _customop.OpDef(op, kernel)\n    _bound.setdefault(op, (kernel, d))\n",
     T_GLUE),
    ("overlap check over half of an input", "kernels.py",
     "if ptr < x.ptr + x.nbytes and", "if ptr < x.ptr + x.nbytes // 2 and", T_GLUE + ["tests/test_kernels_direct.py"]),
    ("plain library: a default string's count in characters", "library_source.py",
     "s, count = _c_bytes(value), len(_utf8(value))", "s, count = _c_bytes(value), len(value)", T_GLUE),
    ("a Python kernel's text attribute decoded with replacement characters", "_attributes.pxi",
     "return b if raw else text_of(b)", 'return b if raw else b.decode("utf-8", "replace")',
     ["tests/test_string_attribute_bytes.py"]),
    ("a strings attribute's element cut at its first NUL in a direct call", "glue/direct.cpp",
     "s.emplace_back(v.strings[j], (size_t)v.lengths[j]);", "s.emplace_back(v.strings[j]);",
     ["tests/test_strings_attribute.py"]),
    ("plain library: required attributes optional", "library_source.py",
     "{int(a.required)}, {init}", "0, {init}", T_GLUE),
    ("direct call: a constraint bound by its last input", "kernels.py",
     "if allowed and binding.setdefault(d.type, x.type) != x.type:", "if allowed and binding.get(d.type, x.type) != x.type:",
     ["tests/test_kernels_direct.py", "tests/test_api_arguments.py", "tests/test_bad_run_inputs.py"]),
    ("direct call repeated: an input's dtype left out of the key", "kernels.py",
     "sig.append((v.dtype, v.shape))", "sig.append((v.shape,))", ["tests/test_kernels_direct.py"]),
    ("direct call repeated: a strided input's pointer taken as it lies", "kernels.py",
     "elif type(v) is np.ndarray and v.flags.c_contiguous:", "elif type(v) is np.ndarray:",
     ["tests/test_kernels_direct.py"]),
    ("direct call repeated: an input by keyword", "kernels.py",
     "        repeat = None  # (the repeat path reads inputs by position)", "        pass",
     ["tests/test_kernel_header.py"]),
    ("direct call repeated: a Python int for a T input", "kernels.py",
     "            and all(per_input[i].type not in op.types for i in ints)):", "            ):",
     ["tests/test_kernels_direct.py"]),
    ("attr_key: True taken as 1", "kernels.py",
     "        return (name, t, v)\n", "        return (name, v)\n", ["tests/test_kernel_header.py"]),
    ("direct call: an unbound constraint takes its last type", "op_table.py",
     "return binding.get(io.type) or op.types[io.type][0]", "return binding.get(io.type) or op.types[io.type][-1]",
     ["tests/test_kernels_direct.py", "tests/test_contract.py"]),
    ("versions overlapping at one end accepted", "registry.py",
     "return a.since <= (b.until or inf)", "return a.since < (b.until or inf)", T_API),
    ("bools taken as int attributes", "registry.py",
     "if isinstance(value, bool) or not isinstance(value, int):", "if not isinstance(value, int):",
     T_API + ["tests/test_attribute_values_alike_on_every_path.py"]),
    ("output type of the torch fake from its shape input", "torch_ops.py",
     "dtype = like.dtype if o.type in op.types else _torch_dtype(o.type)", "dtype = like.dtype",
     T_GLUE + ["tests/test_torch_ops.py"]),
    ("export: a required attribute left unfed", "export/mapping.py",
     "missing += [a.name for a in op.attrs if a.required and a.name not in fed_attrs]", "missing += []",
     ["tests/test_export.py"]),
    ("TorchScript export: int attributes as floats", "types.py",
     'AttrKind("int", 1, "OC_ATTR_INT", 2, int, "int", "i", "i")', 'AttrKind("int", 1, "OC_ATTR_INT", 2, int, "int", "f", "i")',
     ["tests/test_export.py"]),
    ("ONNX schema: optional inputs required", "schemas.py",
     "(P.Optional if io.optional else P.Single)\n    type_str", "P.Single\n    type_str", T_API),
    ("reference: declared defaults not applied", "reference.py",
     "value if value is not None else (None if a.required else a.default)", "value",
     ["tests/test_attribute_values_alike_on_every_path.py"]),
]


def installed() -> pathlib.Path:
    out = subprocess.run([sys.executable, "-c", "import ortcustom, os; print(os.path.dirname(ortcustom.__file__))"],
                         capture_output=True, text=True, check=True, cwd="/")
    return pathlib.Path(out.stdout.strip())


def deploy(kind: str, rel: str, site: pathlib.Path, build: pathlib.Path) -> bool:
    """The worktree's state of `rel` into the installed package; False when it does not build. In an
    editable install (the package is this source tree) the build is all there is to do."""
    editable = site.resolve() == SRC.resolve()
    if kind == P:
        if not editable:
            shutil.copy(SRC / rel, site / rel)
        return True
    ninja = shutil.which("ninja", path=str(pathlib.Path(sys.executable).parent)) or "ninja"
    r = subprocess.run([ninja, "-C", str(build)], capture_output=True, text=True)
    if r.returncode != 0:
        return False
    for so in [] if editable else build.rglob("*.so"):
        if so.name.startswith("_customop"):
            shutil.copy(so, site / so.name)
        elif so.name == "_kernels.so":
            shutil.copy(so, site / "_kernels.so")
        elif so.name == "_contrib.so":
            shutil.copy(so, site / "ops" / "_contrib.so")
    for cpp in [] if editable else (SRC / "glue").glob("*.cpp"):
        if (site / "glue" / cpp.name).exists():
            shutil.copy(cpp, site / "glue" / cpp.name)
    return True


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", help="comma-separated mutant numbers (1-based)")
    p.add_argument("--build-dir", default=str(ROOT / "build"))
    a = p.parse_args()
    site, build = installed(), pathlib.Path(a.build_dir)
    chosen = [int(n) for n in a.only.split(",")] if a.only else range(1, len(MUTANTS) + 1)
    # Python mutants first: a compiled mutant's libraries stay installed until the next build
    chosen = sorted(chosen, key=lambda n: not MUTANTS[n - 1][1].endswith(".py"))
    killed = tried = 0
    compiled_dirty = False
    for n in chosen:
        what, rel, old, new, tests = MUTANTS[n - 1]
        kind = P if rel.endswith(".py") else G if rel.startswith("glue/") else C
        path = SRC / rel
        text = path.read_text()
        assert text.count(old) == 1, f"mutant {n}: {old!r} is not exactly once in {rel}"
        path.write_text(text.replace(old, new))
        try:
            compiled_dirty |= kind != P
            if not deploy(kind, rel, site, build):
                print(f"{n:2} {what} ({rel}): does not build, not counted", flush=True)
                continue
            r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                               capture_output=True, text=True, cwd=ROOT)
            tried += 1
            failed = [line.split(" ")[1] for line in r.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
            if r.returncode != 0:
                killed += 1
                print(f"{n:2} {what} ({rel}): killed by {failed[0] if failed else 'rc ' + str(r.returncode)}", flush=True)
            else:
                print(f"{n:2} {what} ({rel}): SURVIVED {' '.join(tests)}", flush=True)
        finally:
            path.write_text(text)
            if kind == P:
                deploy(P, rel, site, build)
    if compiled_dirty:
        assert deploy(G, "", site, build), "the restored sources do not build"
    print(f"killed {killed} of {tried} ({100 * killed / max(tried, 1):.0f}%)")
    return 0 if killed == tried else 1


if __name__ == "__main__":
    sys.exit(main())
