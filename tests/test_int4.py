"""ONNX's 4-bit integers (int4, uint4): two elements per byte, element 2k in byte k's low nibble, so a
tensor of n elements has (n + 1) / 2 bytes. A native kernel reads and writes the bytes (kernel.hpp's
int4x2/uint4x2, oc::get4/set4) in a session and a plain library; a tensor attribute of them is copied
whole. onnxruntime's Python API feeds and fetches no 4-bit arrays (1.31: "Numpy_type ... can't be
converted"), so the models Cast around the kernel, and NumPy has none: Python kernels and direct
calls take none (a clear error). ORT 1.17 and 1.18 fail every session of a domain whose op names a
4-bit type: there an op registers without those bindings."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
import ortcustom.schemas
from c_host import needs_c_library, run_host
from helpers import CPU, compile_kernels
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.session import ort_version
from ortcustom.testing import for_runtime
from ortcustom.types import ELEMENT_TYPES
from plain_library import NATIVE, build_library, without_ortcustom

# Measured: 1.17 and 1.18 take no 4-bit type in a custom op, 1.20 refuses a node's int4 input to one, 1.22 has
# no Cast to int4 (the models' way in and out); 1.26 and 1.31 run every test (1.19, 1.21, 1.23-1.25 untried)
needs_int4 = pytest.mark.skipif(ort_version() < (1, 26), reason="these models need ONNX Runtime >= 1.26 (4-bit "
                                "types in a custom op's signature, and Cast to them)")
ENUM = {"int4": TensorProto.INT4, "uint4": TensorProto.UINT4}
VALUES = {"int4": np.arange(-8, 8, dtype=np.float32), "uint4": np.arange(16, dtype=np.float32)}


def neg(name, x):
    """Neg4's rule: int4 wraps (-(-8) is -8), uint4 is 15 - x."""
    return ((-x + 8) % 16 - 8) if name == "int4" else 15 - x


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return compile_kernels([NATIVE / "int4_kernels.cpp"], tmp_path_factory.mktemp("i4") / "i4.so")


@pytest.fixture(scope="module")
def found(lib):
    return ortcustom.load_kernels(lib)


def ops(found):
    neg4 = Op("Neg4", [Input("X", "T")], [Output("Y", "T", shape="X")], types={"T": ("int4", "uint4", "float")},
              native=found["neg4"])
    unpack4 = Op("Unpack4", [Input("X", "T")], [Output("Y", "int64", shape="X")], types={"T": ("int4", "uint4")},
                 native=found["unpack4"])
    return neg4, unpack4


def cast_model(domain, op_name, name, shape, out_type=TensorProto.FLOAT):
    """X (float) -> Cast to the 4-bit type -> op -> (Cast back to float when out_type is float) -> Y."""
    nodes = [helper.make_node("Cast", ["X"], ["x4"], to=ENUM[name]),
             helper.make_node(op_name, ["x4"], ["y4" if out_type == TensorProto.FLOAT else "Y"], name="n0",
                              domain=domain)]
    if out_type == TensorProto.FLOAT:
        nodes.append(helper.make_node("Cast", ["y4"], ["Y"], to=TensorProto.FLOAT))
    g = helper.make_graph(nodes, "i4", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("Y", out_type, list(shape))])
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid(domain, 1)]
    return for_runtime(helper.make_model(g, opset_imports=opsets))


def run(model, domain, x):
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(domain), providers=CPU)
    return sess.run(None, {"X": x})[0]


SHAPES = [(16,), (5,), (1,), (0,), (3, 5)]  # odd counts: the last byte holds one element


def values(name, shape):
    n = int(np.prod(shape))
    return np.resize(VALUES[name], n).reshape(shape)


@needs_int4
@pytest.mark.parametrize("name", ["int4", "uint4"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_native_kernel_writes_4_bit_tensors(name, shape, found):
    neg4, _ = ops(found)
    d = Domain("test.i4.neg").add(neg4)
    x = values(name, shape)
    np.testing.assert_array_equal(run(cast_model(d.name, "Neg4", name, shape), d, x), neg(name, x))


@needs_int4
@pytest.mark.parametrize("name", ["int4", "uint4"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_native_kernel_reads_4_bit_tensors(name, shape, found):
    _, unpack4 = ops(found)
    d = Domain("test.i4.unpack").add(unpack4)
    x = values(name, shape)
    y = run(cast_model(d.name, "Unpack4", name, shape, TensorProto.INT64), d, x)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, x.astype(np.int64))


@needs_int4
@pytest.mark.parametrize("name, vals", [("int4", [1, -2, 3, -8, 7]), ("uint4", [0, 15, 9, 4, 1, 2, 3])])
def test_a_tensor_attribute_of_4_bit_integers_reaches_the_kernel_whole(name, vals, found):
    op = Op("Attr4", [Input("X", "float")], [Output("Y", "int64")], attrs=[Attr("t", "tensor")],
            native=found["attr4"])
    d = Domain("test.i4.attr").add(op)
    t = helper.make_tensor("t", ENUM[name], [len(vals)], vals)  # onnx packs them two per byte
    node = helper.make_node("Attr4", ["X"], ["Y"], domain=d.name, t=t)
    g = helper.make_graph([node], "a4", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("Y", TensorProto.INT64, None)])
    m = for_runtime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(d.name, 1)]))
    np.testing.assert_array_equal(run(m, d, np.zeros(1, np.float32)), vals)


def test_an_op_naming_4_bit_types_runs_its_other_types_on_every_runtime(found):
    """On ORT < 1.20 its 4-bit bindings are left out at registration (1.17 and 1.18 would refuse every
    session of the domain: "tensor type 22 is not supported"); its float binding runs there too."""
    neg4, _ = ops(found)
    d = Domain("test.i4.float").add(neg4)
    g = helper.make_graph([helper.make_node("Neg4", ["X"], ["Y"], domain=d.name)], "f",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3])])
    m = for_runtime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(d.name, 1)]))
    x = np.array([1.5, -2.0, 0.0], np.float32)
    np.testing.assert_array_equal(run(m, d, x), -x)


def test_numpy_has_no_4_bit_type_so_a_direct_call_says_what_it_accepts(found):
    neg4, _ = ops(found)
    with pytest.raises(TypeError, match=r"Neg4: X has dtype uint8; accepts int4, uint4, float32 \(int4, uint4: no "
                                        r"NumPy dtype, so direct calls take none\)"):
        kernels.call(neg4, np.zeros(3, np.uint8))
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with pytest.raises(TypeError, match=r"Neg4: X has dtype int4; accepts int4, uint4, float32 \(int4, uint4: no "
                                        r"NumPy dtype"):
        kernels.call(neg4, np.zeros(3, ml_dtypes.int4))  # a byte per element: not ONNX's packing


@needs_int4
def test_a_python_kernel_takes_no_4_bit_tensors():
    op = Op("Py4", [Input("X", "T")], [Output("Y", "T", shape="X")], types={"T": ("int4",)}, compute=lambda X: X)
    d = Domain("test.i4.py").add(op)
    with pytest.raises(Exception, match=r"Py4 \(node 'n0'\): .*Python kernels take no int4 tensors"):
        run(cast_model(d.name, "Py4", "int4", (4,)), d, np.zeros(4, np.float32))


def test_packed_sizes():
    assert [ELEMENT_TYPES["int4"].nbytes(n) for n in (0, 1, 2, 5, 16)] == [0, 1, 1, 3, 8]
    assert ELEMENT_TYPES["uint4"].nbytes(7) == 4 and ELEMENT_TYPES["float"].nbytes(5) == 20


@needs_int4
def test_the_schema_takes_4_bit_types(found):
    neg4, _ = ops(found)
    d = Domain("test.i4.schema").add(neg4)
    ortcustom.schemas.register(d)
    m = cast_model(d.name, "Neg4", "uint4", (5,))
    onnx.checker.check_model(m, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    assert {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}["y4"] == TensorProto.UINT4


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    out = tmp_path_factory.mktemp("i4_lib") / "int4.so"
    return build_library(NATIVE, "int4_ops:INT4", [NATIVE / "int4_kernels.cpp"], out)


@needs_int4
def test_a_plain_library_from_python_without_ortcustom(plain, tmp_path):
    x = values("int4", (5,))
    r = without_ortcustom([plain], cast_model("test.int4", "Neg4", "int4", (5,)), {"X": x}, tmp_dir=tmp_path)
    assert r["failed"] is None, r
    np.testing.assert_array_equal(r["outputs"][0], neg("int4", x))


@needs_c_library
@needs_int4
def test_a_plain_library_in_a_c_host(plain):
    x = values("uint4", (3, 5))
    r = run_host(cast_model("test.int4", "Neg4", "uint4", (3, 5)), {"X": x}, libraries=[plain])
    assert r.returncode == 0, r.stdout
    np.testing.assert_array_equal(r.outputs["Y"], neg("uint4", x))
