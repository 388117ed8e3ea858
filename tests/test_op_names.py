"""An op's ONNX name (the node's op_type) is any text ONNX carries ("String-Split", "my.op", quotes,
non-ASCII, beyond U+FFFF), independent of every Python and C++ name: it reaches ORT, onnx's schemas
and checker and the NumPy reference as given, in a session (Python and native kernels), a direct
call, and a plain library (generated C source: the name is a string literal, never an identifier)
loaded by Python without ortcustom and by a C host."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

import ortcustom
from c_host import needs_c_library, run_host
from helpers import compile_kernels, session
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from plain_library import NATIVE, registration_declarations, registration_library, without_ortcustom

decl = registration_declarations()
X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def scale_kernels(tmp_path_factory):
    """registration_kernels.cpp as a kernels library (scale2: Y = 2 X, scale3: Y = 3 X)."""
    return ortcustom.load_kernels(compile_kernels([NATIVE / "registration_kernels.cpp"],
                                                  tmp_path_factory.mktemp("names") / "scale_kernels.so"))


@pytest.mark.parametrize("name", decl.ODD_NAMES)
def test_python_kernel_schema_checker_and_reference(name):
    op = Op(name, [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: 2 * X)
    d = Domain("test.names.py").add(op)
    model = make_model(op, d, {"X": X}, outputs={"Y": X})  # registers d's ONNX schemas
    assert model.graph.node[0].op_type == name
    onnx.checker.check_model(model, full_check=True)
    bad = make_model(op, d, {"X": X.astype(np.int32)}, outputs={"Y": X.astype(np.int32)})
    with pytest.raises(onnx.shape_inference.InferenceError, match=r"unsupported type: tensor\(int32\)"):
        onnx.checker.check_model(bad, full_check=True)  # the checker found the op's schema by its name
    np.testing.assert_array_equal(session(op, d, {"X": X}).run(None, {"X": X})[0], 2 * X)
    got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(d)).run(None, {"X": X})[0]
    np.testing.assert_array_equal(got, 2 * X)


@pytest.mark.parametrize("name", decl.ODD_NAMES)
def test_native_kernel_in_a_session_and_a_direct_call(name, scale_kernels):
    op = Op(name, [Input("X", "float")], [Output("Y", "float", shape="X")], native=scale_kernels["scale3"])
    d = Domain("test.names.native").add(op)
    np.testing.assert_array_equal(session(op, d, {"X": X}).run(None, {"X": X})[0], 3 * X)
    np.testing.assert_array_equal(kernels.call(op, X), 3 * X)


def test_a_node_of_another_name_is_not_served():
    op = Op("my.op", [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X)
    model = make_model("my_op", "test.names.other", {"X": X}, outputs={"Y": X})
    so = ortcustom.session_options(Domain("test.names.other").add(op))
    with pytest.raises(Exception, match="my_op"):
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


# ---- a plain library -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def names_library(tmp_path_factory):
    return registration_library("NAMES", tmp_path_factory.mktemp("names_lib"))


def models():
    """(model, factor) per op of the NAMES library: one node each."""
    (d,) = decl.NAMES
    return [(make_model(op, d, {"X": X}), f) for op, f in zip(d.ops, (2, 3, 2))]


def test_library_header_names_kernels_and_holds_the_op_names(names_library):
    header = (names_library.parent / "registration_ops_spec.h").read_text()
    assert "struct scale2 {" in header and "struct scale3 {" in header
    assert 'static constexpr const char* op = "String-Split";' in header


def test_library_from_python_without_ortcustom(names_library, tmp_path):
    for model, factor in models():
        r = without_ortcustom([names_library], model, {"X": X}, tmp_dir=tmp_path)
        assert r["failed"] is None, (model.graph.node[0].op_type, r)
        np.testing.assert_array_equal(r["outputs"][0], factor * X)


@needs_c_library
def test_library_in_a_c_host(names_library):
    for model, factor in models():
        r = run_host(model, {"X": X}, libraries=[names_library])
        assert r.returncode == 0, (model.graph.node[0].op_type, r.stdout)
        np.testing.assert_array_equal(r.outputs["Y"], factor * X)
