"""A kernel's interface generated from its declaration (`python -m ortcustom library-source --header`,
ortcustom/kernel_header.py): the kernel reads its inputs, outputs and attributes of every kind by
the declared names, dispatches over the declared element types, and stops compiling when the
declaration changes under it."""
import dataclasses
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.kernel_header import generate
from ortcustom.library_source import main as library_source

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = os.path.join(HERE, "native", "every_kind_kernel.cpp")

EVERY = Op("Every", inputs=[Input("X", "T"), Input("class", "int64", optional=True)],
           outputs=[Output("Y", "T", shape="X")], types={"T": ("float", "double", "int32")},
           attrs=[Attr("k", "int", 2), Attr("f", "float", 0.5), Attr("s", "string", "add"),
                  Attr("ks", "ints", (1, 2)), Attr("fs", "floats", (0.25,))],
           native="every")


def build(tmp_path, op, name="every.so"):
    """every_kind_kernel.cpp compiled against the header generated from `op`: (returncode, stderr)."""
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    (tmp_path / "every_spec.h").write_text(generate([Domain("hdr.test").add(op)], "test", "spec"))
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra",
                        "-Werror", f"-I{ortcustom.get_include()}", f"-I{tmp_path}", KERNEL, "-o",
                        str(tmp_path / name)], capture_output=True, text=True,
                       env={**os.environ, "LC_ALL": "C"})  # ASCII quotes in the messages
    return r.returncode, r.stderr


def test_a_kernel_reads_every_attribute_kind_and_input_by_its_declared_name(tmp_path):
    rc, err = build(tmp_path, EVERY)
    assert rc == 0, err
    op = dataclasses.replace(EVERY, native=ortcustom.load_kernels(tmp_path / "every.so")["every"])
    x = np.arange(4, dtype=np.float32)
    # 2 + 0.5 + len("add") + (1 + 2) + 0.25 = 8.75: each accessor read its own attribute and kind
    np.testing.assert_array_equal(kernels.call(op, x), x * np.float32(8.75))
    np.testing.assert_array_equal(kernels.call(op, x, k=-1, s="", ks=[], fs=[1.5, 2.5]), x * np.float32(3.5))  # -1 + 0.5 + 0 + 0 + 4
    np.testing.assert_array_equal(kernels.call(op, x.astype(np.int32), np.array([10]), f=0.0, fs=[]),
                                  (x * 18).astype(np.int32))  # + the input named `class`: 2 + 3 + 3 + 10
    np.testing.assert_array_equal(kernels.call(op, x.astype(np.float64)), x.astype(np.float64) * 8.75)
    with pytest.raises(TypeError, match="accepts"):
        kernels.call(op, x.astype(np.int64))
    # A call remembers its attribute checks by value (kernels.attr_key): True is not 1 there (a bool is
    # no int attribute), a float zero by its sign (-0.0 == 0.0 in Python), and a value that failed
    # is checked, and refused, every time.
    for _ in range(2):
        np.testing.assert_array_equal(kernels.call(op, x, k=1), x * np.float32(7.75))
        with pytest.raises(TypeError, match="attribute k: expected an int, got True"):
            kernels.call(op, x, k=True)
        with pytest.raises(TypeError, match="attribute f"):
            kernels.call(op, x, f="1")
    assert kernels.attr_key("f", -0.0) != kernels.attr_key("f", 0.0)
    for _ in range(2):  # an input by keyword, a Python int (the repeated call's path takes inputs by position)
        np.testing.assert_array_equal(kernels.call(op, x, **{"class": 10}), x * np.float32(18.75))
    assert kernels.attr_key("f", 1.0) not in (kernels.attr_key("f", 1), kernels.attr_key("f", True))
    assert kernels.attr_key("f", float("nan")) == kernels.attr_key("f", float("nan"))  # (one entry, not one a call)
    assert kernels.attr_key("fs", [0.5]) is None  # (lists: checked every call)


@pytest.mark.parametrize("change, error", [
    (dict(inputs=[Input("A", "T"), Input("class", "int64", optional=True)], outputs=[Output("Y", "T", shape="A")]),
     r"'X' is not a member of 'spec::every::in'"),
    (dict(attrs=[Attr("k", "int", 2), Attr("f", "string", ""), Attr("s", "string", "add"), Attr("ks", "ints", (1,)),
                 Attr("fs", "floats", (0.25,))]), r"invalid operands|cannot convert|no match"),
    (dict(types={"T": ("float", "double", "int32", "float16")}), r"oc::half"),
    (dict(native="every_other"), r"'every' in namespace 'spec' does not name a type|'spec::every' has not been"),
])
def test_a_declaration_the_kernel_no_longer_fits_does_not_compile(tmp_path, change, error):
    """An input renamed, an attribute's kind changed, an element type added that the kernel's code
    cannot take, the kernel renamed: compile errors, not a kernel refused at run time (or worse)."""
    rc, err = build(tmp_path, dataclasses.replace(EVERY, **change))
    assert rc != 0
    assert re.search(error, err), err[-3000:]


def test_names_are_made_cpp_identifiers_and_clashes_refused():
    op = Op("Odd", inputs=[Input("x.1", "float"), Input("delete", "float")], outputs=[Output("in", "float")],
            attrs=[Attr("attr", "int", 0)], native="odd")
    text = generate([Domain("hdr.names").add(op)], "test", "ns")
    assert "struct in { static constexpr int32_t x_1 = 0, delete_ = 1; };" in text
    assert "struct out { static constexpr int32_t in = 0; };" in text  # only a struct's own name is taken
    assert "static auto attr_(const oc::Context& ctx)" in text
    clash = Op("Clash", inputs=[Input("a.b", "float"), Input("a_b", "float")], outputs=[Output("Y", "float")],
               native="clash")
    with pytest.raises(ValueError, match=r"op 'Clash': input names 'a.b' and 'a_b' are both 'a_b' in C\+\+"):
        generate([Domain("hdr.clash").add(clash)], "test", "ns")
    with pytest.raises(ValueError, match=r"kernel named 'spec' cannot have a spec struct"):
        generate([Domain("hdr.member").add(dataclasses.replace(op, native="spec"))], "test", "ns")


def test_ops_sharing_a_kernel_share_one_interface():
    a = Op("A", inputs=[Input("X", "float")], outputs=[Output("Y", "float")], native="shared")
    b = dataclasses.replace(a, name="B")
    assert generate([Domain("hdr.share").add(a, b)], "test", "ns").count("struct shared {") == 1
    c = dataclasses.replace(a, name="C", inputs=[Input("Z", "float")])
    with pytest.raises(ValueError, match=r"ops 'A' and 'C' name one kernel 'shared' but declare different"):
        generate([Domain("hdr.share2").add(a, c)], "test", "ns")


def test_the_build_lists_the_kernels_of_the_declarations_and_their_files(capsys):
    """What kernels/meson.build reads at configure time: each library's kernels (their sources are
    found by name) and the declarations' Python files (a change there reconfigures)."""
    src = os.path.dirname(os.path.dirname(ortcustom.__file__))
    assert library_source(["--path", src, "ortcustom.ops.contrib:library_domains", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    kernels = [ln[7:] for ln in lines if ln.startswith("kernel ")]
    assert kernels[:3] == ["inverse", "contrib_group_norm", "skip_group_norm"] and len(set(kernels)) == len(kernels)
    assert {op.kernel.name for op in ortcustom.ops.ALL} <= set(kernels)  # the ortcustom domain too, once each
    files = {os.path.basename(ln[5:]) for ln in lines if ln.startswith("file ")}
    assert "contrib.py" in files
