import gc

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import Inverse
from ortcustom.testing import make_model

from helpers import CPU, session, well_conditioned


def test_add_returns_domain_and_lists_ops():
    d = Domain("com.microsoft")
    assert d.add(Inverse) is d
    assert d.ops == (Inverse,) and d.name == "com.microsoft" and d.version == 1


def test_add_same_op_twice_is_an_error():
    d = Domain("a").add(Inverse)
    with pytest.raises(ValueError, match="'Inverse' is already in domain 'a'"):
        d.add(Inverse)


def test_same_name_overlapping_versions_is_an_error():
    other = Op("Inverse", [Input("X", "float")], [Output("Y", "float")], compute=lambda x: x, since=1, until=9)
    with pytest.raises(ValueError, match=r"already has an op 'Inverse' for versions \[1, inf\], which overlaps "
                                         r"\[1, 9\]: declarations of one name are versions \(spans apart\) or "
                                         r"siblings, one per type signature \(the same span\)"):
        Domain("a").add(Inverse, other)


def test_a_sibling_that_overlaps_a_signature_is_an_error():
    other = Op("Inverse", [Input("X", "float")], [Output("Y", "float")], compute=lambda x: x)
    with pytest.raises(ValueError, match=r"op 'Inverse' \[1, inf\] cannot join the declaration already there: its "
                                         r"signature \(X: float\) and \(X: T\) .* both take a node with \(X: float\)"):
        Domain("a").add(Inverse, other)


@pytest.mark.parametrize("name", ["", None, 3])
def test_domain_needs_a_name(name):
    with pytest.raises(ValueError, match="non-empty name"):
        Domain(name)


@pytest.mark.parametrize("version", [0, -1, 1.5, True])
def test_domain_version(version):
    with pytest.raises(ValueError, match="domain version"):
        Domain("a", version=version)


@pytest.mark.parametrize("thing", ["Inverse", Inverse.native, object(), None])
def test_add_a_non_op_is_an_error(thing):
    with pytest.raises(TypeError, match="takes ortcustom.Op declarations"):
        Domain("a").add(thing)


def test_register_errors():
    with pytest.raises(TypeError, match="onnxruntime.SessionOptions"):
        Domain("a").add(Inverse).register(object())
    with pytest.raises(ValueError, match="has no ops"):
        ortcustom.session_options(Domain("a"))
    with pytest.raises(ValueError, match="distinct names"):
        ortcustom.session_options(Domain("a").add(Inverse), Domain("a").add(Inverse))
    assert isinstance(ortcustom.session_options(), ort.SessionOptions)  # no domains: plain options


def test_register_into_existing_options():
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    assert Domain("org.example").add(Inverse).register(so) is so


def test_two_domains_in_one_session():
    from onnx import TensorProto, helper

    from ortcustom.testing import for_runtime

    a, b = Domain("org.a").add(Inverse), Domain("org.b").add(Inverse)
    graph = helper.make_graph(
        [helper.make_node("Inverse", ["X"], ["Y"], domain="org.a"),
         helper.make_node("Inverse", ["Y"], ["Z"], domain="org.b")], "g",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [3, 3])],
        [helper.make_tensor_value_info("Z", TensorProto.DOUBLE, [3, 3])])
    model = for_runtime(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("org.a", 1), helper.make_opsetid("org.b", 1)]))
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(a, b), providers=CPU)
    x = well_conditioned(np.random.default_rng(0), (3, 3), np.float64)
    np.testing.assert_allclose(sess.run(None, {"X": x})[0], x, rtol=1e-12)


def test_session_after_domain_is_garbage_collected():
    d = Domain("org.gc").add(Inverse)
    model = make_model(Inverse, d, {"X": (np.float32, [2, 2])})
    so = ortcustom.session_options(d)
    del d
    gc.collect()
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    np.testing.assert_allclose(sess.run(None, {"X": 2 * np.eye(2, dtype=np.float32)})[0], np.eye(2) / 2)


def test_sessions_with_and_without_ortcustom_coexist():
    from onnx import TensorProto, helper

    from ortcustom.testing import for_runtime

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    plain = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    s1 = ort.InferenceSession(plain.SerializeToString(), providers=CPU)
    d = Domain("org.coexist").add(Inverse)
    s2 = session(Inverse, d, {"X": (np.float32, [1, 1])})
    s3 = ort.InferenceSession(plain.SerializeToString(), providers=CPU)
    assert (s1.run(None, {"x": np.array([-1, 1], np.float32)})[0] == [0, 1]).all()
    assert s2.run(None, {"X": np.array([[4]], np.float32)})[0][0, 0] == 0.25
    assert (s3.run(None, {"x": np.array([-1, 2], np.float32)})[0] == [0, 2]).all()


def test_library_path_given_directly_registers_builtins_in_domain_ortcustom():
    so = ort.SessionOptions()
    so.register_custom_ops_library(ortcustom.get_library_path())
    model = make_model(Inverse, "ortcustom", {"X": (np.float32, [2, 2])})
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    assert sess.run(None, {"X": 4 * np.eye(2, dtype=np.float32)})[0][1, 1] == 0.25


def test_build_info():
    b = ortcustom.build_info()
    assert set(b) == {"version", "cuda", "cuda_archs", "ort_api_version", "min_ort_version"}
    assert b["ort_api_version"] == 17 and b["min_ort_version"] == "1.17"
    assert isinstance(b["cuda"], bool) and b["version"] == ortcustom.__version__


def test_make_model_ir_version_is_accepted():
    from ortcustom.testing import max_ir_version

    model = make_model(Inverse, "org.x", {"X": (np.float32, [1, 1])})
    assert model.ir_version <= max_ir_version()


def test_make_model_holds_initializers_where_asked():
    w = np.arange(3, dtype=np.int64)
    model = make_model("Pick", "org.x", {"X": (np.float32, [2]), "W": w}, outputs={"Y": (np.float32, [2])},
                       initializers=["W"])
    assert [i.name for i in model.graph.input] == ["X"]
    assert [(t.name, list(t.int64_data) or np.frombuffer(t.raw_data, np.int64).tolist()) for t in
            model.graph.initializer] == [("W", [0, 1, 2])]
    assert list(model.graph.node[0].input) == ["X", "W"]
    with pytest.raises(ValueError, match=r"initializers names 'X': give its value in inputs as an array"):
        make_model("Pick", "org.x", {"X": (np.float32, [2])}, outputs={"Y": (np.float32, [2])}, initializers=["X"])


def test_versions_sharing_one_opset_overlap():
    """Bug: ranges that touch at one end ([1, 2] and [2, ...]) taken as apart: two ops for opset 2."""
    def v(since, until):
        return Op("V", [Input("X", "float")], [Output("Y", "float")], since=since, until=until, compute=lambda X: X)

    with pytest.raises(ValueError, match=r"already has an op 'V' for versions \[1, 2\], which overlaps \[2, inf\]"):
        Domain("test.v").add(v(1, 2), v(2, None))
    with pytest.raises(ValueError, match=r"for versions \[2, inf\], which overlaps \[1, 2\]"):
        Domain("test.v").add(v(2, None), v(1, 2))
    assert len(Domain("test.v").add(v(1, 1), v(2, None)).ops) == 2
