"""ONNX's float8 element types (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz): a native
kernel gets their bits (kernel.hpp's oc::float8* types, dispatched like any other) in a session;
NumPy has no such dtype, so Python kernels and direct calls take none (a clear error), as for
bfloat16."""
import os

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.testing import for_runtime
from helpers import CPU, compile_kernels

ml_dtypes = pytest.importorskip("ml_dtypes")
HERE = os.path.dirname(__file__)
TYPES = {"float8e4m3fn": (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
         "float8e4m3fnuz": (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
         "float8e5m2": (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
         "float8e5m2fnuz": (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz)}


@pytest.fixture(scope="module")
def neg8(tmp_path_factory):
    lib = compile_kernels([os.path.join(HERE, "native", "float8_kernels.cpp")],
                          tmp_path_factory.mktemp("f8") / "f8.so")
    op = Op("Neg8", [Input("X", "T")], [Output("Y", "T", shape="X")], types={"T": tuple(TYPES)},
            native=ortcustom.load_kernels(lib)["neg8"])
    return op, Domain("test.f8").add(op)


@pytest.mark.parametrize("name", list(TYPES))
def test_a_native_kernel_takes_each_float8_type_in_a_session(name, neg8):
    """X (float) -> Cast to the float8 type -> Neg8 -> Cast back: what ORT itself converts, the kernel
    negates on the bits (onnxruntime's Python API feeds no float8 arrays before 1.2x)."""
    op, d = neg8
    enum, dt = TYPES[name]
    x = np.array([0.0, 1.5, -2.0, 0.25, 3.0, 240.0 if "e4m3" in name else 57344.0], np.float32)
    g = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["x8"], to=enum), helper.make_node("Neg8", ["x8"], ["y8"], domain=d.name),
         helper.make_node("Cast", ["y8"], ["Y"], to=TensorProto.FLOAT)], "f8",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [6])])
    m = for_runtime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid(d.name, 1)]))
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    (y,) = sess.run(None, {"X": x})
    np.testing.assert_array_equal(y, -x.astype(dt).astype(np.float32))


def test_numpy_has_no_float8_so_a_direct_call_says_what_it_accepts(neg8):
    op, _ = neg8
    with pytest.raises(TypeError, match="Neg8: X has dtype float8_e4m3fn; accepts float8e4m3fn, float8e4m3fnuz"):
        kernels.call(op, np.zeros(2, ml_dtypes.float8_e4m3fn))
