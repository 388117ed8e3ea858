"""Tensor attributes (`Attr(name, "tensor")`, ONNX AttributeProto TENSOR): a native kernel gets an
oc_tensor in host memory (numbers, or oc_string elements) in a session, a plain library loaded by
Python without ortcustom and by a C host, and a direct call; a Python kernel gets a NumPy array; the
schema, shape inference and the reference take it. It has no default; a node that lacks it or gives
another kind is refused naming the op, the node and the attribute."""
from __future__ import annotations

import os
import shutil
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import checker, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from c_host import no_c_library_reason, run_host
from helpers import CPU
from plain_library import build_library, without_ortcustom

HERE = os.path.dirname(__file__)
DECLARATIONS = textwrap.dedent("""
    from ortcustom import Attr, Domain, Input, Op, Output

    TableSum = Op("TableSum", [Input("X", "float")], [Output("Y", "float", shape="X"), Output("Z", "string")],
                  attrs=[Attr("table", "tensor"), Attr("names", "tensor")], native="tableops._kernels:table_sum")
    domain = Domain("tableops").add(TableSum)
""")
PATHS = ["session", "library", pytest.param("c_host", marks=pytest.mark.skipif(
    no_c_library_reason() is not None, reason=str(no_c_library_reason()))), "direct"]
X = np.arange(3, dtype=np.float32)
NAMES = np.array(["caf\u00e9", "", "\u4e16"], dtype=object)


@pytest.fixture(scope="module")
def tableops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("table") / "src"
    (src / "tableops").mkdir(parents=True)
    (src / "tableops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "tableops:domain", [os.path.join(HERE, "native", "constant_kernels.cpp")],
                        src / "tableops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import tableops

    yield tableops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "tableops"]:
        del sys.modules[name]


def outcome(path, pkg, lib, attrs, tmp_path, extra=()):
    """("ok", (Y, Z as a list)) or ("error", the message)."""
    if path == "direct":
        try:
            y, z = kernels.call(pkg.TableSum, X, **attrs)
            return "ok", (y.tolist(), z.tolist())
        except Exception as e:
            return "error", f"{type(e).__name__}: {e}"
    m = make_model(pkg.TableSum, pkg.domain, {"X": X})
    m.graph.node[0].attribute.extend([helper.make_attribute(k, numpy_helper.from_array(np.asarray(v), k))
                                      for k, v in attrs.items()] + list(extra))
    if path == "session":
        try:
            sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
            y, z = sess.run(None, {"X": X})
            return "ok", (y.tolist(), z.tolist())
        except Exception as e:
            return "error", str(e)
    if path == "c_host":
        r = run_host(m, {"X": X}, libraries=[lib])
        assert r.returncode in (0, 4, 5), r.stdout + r.stderr
        return ("ok", (r.outputs["Y"].tolist(), r.outputs["Z"].tolist())) if r.returncode == 0 else ("error", r.error)
    r = without_ortcustom([lib], m, {"X": X}, tmp_dir=tmp_path)
    if r["failed"] is not None:
        return "error", r["error"]
    y, z = r["outputs"]
    return "ok", (y.tolist(), z.tolist())


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("table", [np.array([[1.5, 2.0], [0.5, -1.0]], np.float32), np.array([7, -2], np.int64),
                                   np.zeros((0,), np.float32), np.array(4.0, np.float32)])
def test_a_native_kernel_reads_tensor_attributes(path, table, tableops, tmp_path):
    pkg, lib = tableops
    kind, got = outcome(path, pkg, lib, {"table": table, "names": NAMES}, tmp_path)
    assert kind == "ok", got
    assert got == ((X + np.float32(table.sum())).tolist(), ["caf\u00e9||\u4e16"])


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
def test_a_missing_or_other_kind_tensor_attribute_is_refused(path, tableops, tmp_path):
    pkg, lib = tableops
    kind, got = outcome(path, pkg, lib, {"names": NAMES}, tmp_path)
    assert kind == "error" and "TableSum (node 'n0'): required attribute 'table' (tensor) is missing" in got, got
    kind, got = outcome(path, pkg, lib, {"names": NAMES}, tmp_path, extra=[helper.make_attribute("table", 3)])
    assert kind == "error" and "attribute 'table' must be of type tensor, but the node gives an int" in got, got


def test_a_direct_call_checks_the_value_and_creates_once_per_value(tableops):
    pkg, _ = tableops
    with pytest.raises(TypeError, match="TableSum: attribute table: expected an array, got 'abc'"):
        kernels.call(pkg.TableSum, X, table="abc", names=NAMES)
    with pytest.raises(TypeError, match="TableSum: attribute table: expected an array of an ONNX element type"):
        kernels.call(pkg.TableSum, X, table=np.array([1 + 2j]), names=NAMES)
    with pytest.raises(TypeError, match="TableSum: attribute table \\(tensor\\) is required"):
        kernels.call(pkg.TableSum, X, names=NAMES)
    t = np.array([1.0], np.float32)
    assert kernels.call(pkg.TableSum, X, table=t, names=NAMES)[0].tolist() == (X + 1).tolist()
    t[0] = 5.0  # the same array, another value
    assert kernels.call(pkg.TableSum, X, table=t, names=NAMES)[0].tolist() == (X + 5).tolist()
    y, z = kernels.call(pkg.TableSum, X, table=t, names=np.array(["a\0", "b"], object))
    assert z.tolist() == ["a\0|b"]


def test_a_python_kernel_gets_an_array_and_the_schema_and_reference_take_it():
    seen = []

    def f(X, table, names):
        seen.append((type(table), table.dtype, table.shape, names.tolist()))
        return X + table.sum().astype(np.float32)

    op = Op("PyTable", [Input("X", "float")], [Output("Y", "float", shape="X")],
            attrs=[Attr("table", "tensor"), Attr("names", "tensor")], compute=f)
    d = Domain("test.pytable").add(op)
    table = np.array([[1, 2], [3, 4]], np.int32)
    m = make_model(op, d, {"X": X}, outputs={"Y": ("float", [3])})
    m.graph.node[0].attribute.extend([helper.make_attribute("table", numpy_helper.from_array(table, "table")),
                                      helper.make_attribute("names", numpy_helper.from_array(NAMES, "names"))])
    checker.check_model(m, full_check=True)
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    assert sess.run(None, {"X": X})[0].tolist() == (X + 10).tolist()
    assert seen == [(np.ndarray, np.dtype(np.int32), (2, 2), NAMES.tolist())]
    (y,) = ReferenceEvaluator(m, new_ops=ortcustom.reference_ops(d)).run(None, {"X": X})
    assert y.tolist() == (X + 10).tolist()


def test_a_tensor_attribute_has_no_default_and_no_torch_op():
    with pytest.raises(ValueError, match="attribute 't': a tensor attribute has no default"):
        Attr("t", "tensor", default=np.zeros(1))
    with pytest.raises(ValueError, match="torch='my::t': attribute 't' is a tensor, which a torch op cannot take"):
        Op("T", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("t", "tensor")], native="t",
           torch="my::t")
