"""Empty tensors whose dims' product overflows int64, and outputs that cannot be allocated: clear
errors or right (empty) results, never a crash."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from helpers import CPU, HUGE, InvalidArgument, OrtFail, session, under_asan
from known_good import GN_DOM, INV_DOM, check_group_norm_works, check_inverse_works
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import GroupNorm
from ortcustom.testing import for_runtime


# NumPy refuses such arrays, and ORT's own ops (ConstantOfShape, Expand, Reshape) refuse to make
# them (SafeInt overflow) unless a 0 dim comes first: ORT multiplies dims left to right with
# overflow checks, so (0, 2**62, 2**62) is a legal empty tensor whose dims' product overflows, and
# it reaches our kernels through an OrtValue (or an ORT op's output).

def _empty_huge(shape, dtype=np.float32):
    return ort.OrtValue.ortvalue_from_shape_and_type(list(shape), dtype)


@pytest.mark.parametrize("shape", [(0, HUGE, HUGE), (0, 3, HUGE, HUGE), (0, 2 ** 31, 2 ** 31)])
def test_inverse_empty_tensor_with_overflowing_dims(inv_sess, shape):
    if shape[-1] != shape[-2]:
        with pytest.raises(InvalidArgument, match="expected \\(..., N, N\\)"):
            inv_sess.run_with_ort_values(None, {"X": _empty_huge(shape)})
    else:
        y = inv_sess.run_with_ort_values(None, {"X": _empty_huge(shape)})[0]
        assert y.shape() == list(shape)
    check_inverse_works(inv_sess)


@pytest.mark.parametrize("shape", [(0, 4, HUGE, HUGE), (2, 0, HUGE, HUGE), (0, HUGE, HUGE), (HUGE, 0)])
def test_group_norm_empty_tensor_with_overflowing_dims(shape):
    sess = session(GroupNorm, GN_DOM, {"X": (np.float32, None), "num_groups": (np.int64, [])})
    groups = ort.OrtValue.ortvalue_from_numpy(np.array(1, np.int64))
    y = sess.run_with_ort_values(None, {"X": _empty_huge(shape), "num_groups": groups})[0]
    assert y.shape() == list(shape)
    check_group_norm_works(sess)


def test_empty_overflowing_tensor_from_an_ort_op_reaches_inverse():
    graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["s"], ["X"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1])),
         helper.make_node("Inverse", ["X"], ["Y"], domain=INV_DOM.name)], "g",
        [helper.make_tensor_value_info("s", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(INV_DOM.name, 1)]))
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(INV_DOM), providers=CPU)
    s = ort.OrtValue.ortvalue_from_numpy(np.array([0, HUGE, HUGE], np.int64))
    assert sess.run_with_ort_values(None, {"s": s})[0].shape() == [0, HUGE, HUGE]
    with pytest.raises(Exception, match="[Oo]verflow"):  # ORT's ConstantOfShape refuses this one
        sess.run(None, {"s": np.array([HUGE, HUGE, 0], np.int64)})
    y = sess.run(None, {"s": np.array([2, 1, 1], np.int64)})[0]
    np.testing.assert_array_equal(y, np.ones((2, 1, 1)))


def test_python_kernel_input_with_overflowing_dims_is_a_clear_error(py_sess):
    with pytest.raises(OrtFail, match="Double \\(node 'n0'\\): the Python kernel raised ValueError: array is too big"):
        py_sess.run_with_ort_values(None, {"X": _empty_huge((0, HUGE, HUGE))})
    np.testing.assert_array_equal(py_sess.run(None, {"X": np.ones(2, np.float32)})[0], [2, 2])


@pytest.mark.skipif(under_asan(), reason="ASan aborts on a 4 PiB operator new instead of throwing bad_alloc")
def test_output_that_cannot_be_allocated_is_a_clear_error():
    # a zero-stride view: 2**50 elements (4 PiB) that ORT must allocate for the output
    Huge = Op("HugeOut", [Input("X", "float")], [Output("Y", "float")],
              compute=lambda X: np.broadcast_to(np.float32(1), (2 ** 20, 2 ** 20, 2 ** 10)) if X[0] else X.copy())
    d = Domain("org.rel.huge").add(Huge)
    sess = session(Huge, d, {"X": (np.float32, [1])})
    with pytest.raises(Exception, match="Failed to allocate memory|bad_alloc"):
        sess.run(None, {"X": np.ones(1, np.float32)})
    np.testing.assert_array_equal(sess.run(None, {"X": np.zeros(1, np.float32)})[0], [0])
