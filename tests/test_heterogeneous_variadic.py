"""A variadic input declared `homogeneous=False` takes tensors of different element types, each any
of its constraint's types (ORT is told "any" and the variadic is heterogeneous): the kernel sees each
tensor's own type (oc_tensor.dtype, a NumPy dtype in Python), in a session (Python and native
kernels), a direct call and a plain library; a tensor of a type the op does not take is refused
naming the op, the node, the node's types and what the op accepts."""
import numpy as np
import pytest

import ortcustom
from c_host import needs_c_library, run_host
from helpers import compile_kernels, session
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from ortcustom.types import name_of_dtype, onnx_enum
from plain_library import NATIVE, registration_declarations, registration_library, without_ortcustom

decl = registration_declarations()
FEEDS = {"a": np.zeros(2, np.int64), "b": np.ones((1, 2), np.float32), "c": np.zeros(3, np.float64)}
ENUMS = [onnx_enum(t) for t in ("int64", "float", "double")]
BAD = {"a": np.zeros(2, np.int64), "b": np.zeros(1, np.int8)}


def python_dtypes():
    return Op("Dtypes", [Input("xs", "T", variadic=True, homogeneous=False)], [Output("Y", "float")],
              types={"T": decl.MIXED},
              compute=lambda *xs: np.array([onnx_enum(name_of_dtype(x.dtype)) for x in xs], np.float32))


@pytest.fixture(scope="module")
def dtypes_kernel(tmp_path_factory):
    path = compile_kernels([NATIVE / "registration_kernels.cpp"], tmp_path_factory.mktemp("het") / "k.so")
    return ortcustom.load_kernels(path)["dtypes"]


def native_dtypes(kernel):
    return Op("Dtypes", [Input("xs", "T", variadic=True, homogeneous=False)], [Output("Y", "float")],
              types={"T": decl.MIXED}, native=kernel)


@pytest.mark.parametrize("kind", ["python", "native"])
def test_a_session_gives_each_tensor_its_own_type(kind, request):
    op = python_dtypes() if kind == "python" else native_dtypes(request.getfixturevalue("dtypes_kernel"))
    d = Domain("test.het." + kind).add(op)
    np.testing.assert_array_equal(session(op, d, FEEDS).run(None, FEEDS)[0], ENUMS)
    with pytest.raises(Exception, match=r"Dtypes \(node 'n0'\): no kernel for input types \(xs: int64, xs: int8\); "
                                        r"Dtypes accepts .*float, int64, double"):
        session(op, d, BAD)
    np.testing.assert_array_equal(session(op, d, FEEDS).run(None, FEEDS)[0], ENUMS)  # the next session works


def test_a_direct_call_gives_each_tensor_its_own_type(dtypes_kernel):
    op = native_dtypes(dtypes_kernel)
    np.testing.assert_array_equal(kernels.call(op, *FEEDS.values()), ENUMS)
    with pytest.raises(TypeError, match=r"Dtypes: xs has dtype int8; accepts"):
        kernels.call(op, *BAD.values())
    np.testing.assert_array_equal(kernels.call(op, FEEDS["c"], FEEDS["a"]), [ENUMS[2], ENUMS[0]])


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return registration_library("HETEROGENEOUS", tmp_path_factory.mktemp("het_lib"))


def test_a_plain_library_from_python_without_ortcustom(library, tmp_path):
    model = make_model(decl.DTYPES, decl.HETEROGENEOUS[0], FEEDS)
    r = without_ortcustom([library], model, FEEDS, tmp_dir=tmp_path)
    assert r["failed"] is None, r
    np.testing.assert_array_equal(r["outputs"][0], ENUMS)
    r = without_ortcustom([library], make_model(decl.DTYPES, decl.HETEROGENEOUS[0], BAD), BAD, tmp_dir=tmp_path)
    assert r["failed"] == "session" and "no kernel for input types (xs: int64, xs: int8)" in r["error"], r


@needs_c_library
def test_a_plain_library_in_a_c_host(library):
    r = run_host(make_model(decl.DTYPES, decl.HETEROGENEOUS[0], FEEDS), FEEDS, libraries=[library])
    assert r.returncode == 0, r.stdout
    np.testing.assert_array_equal(r.outputs["Y"], ENUMS)
