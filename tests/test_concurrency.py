"""Concurrency: one session from many threads, ORT's parallel execution mode, many sessions and
registrations at once; every result checked."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from helpers import CPU, InvalidArgument, run_threads, session, well_conditioned
from known_good import Double
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import GroupNorm, Inverse
from ortcustom.testing import for_runtime


def test_one_session_8_threads_x_500_runs_every_result_checked():
    # inverse, group norm and a Python kernel in one session (three nodes), different inputs per run
    gn_dom = Domain("org.rel.mt").add(Inverse, GroupNorm, Double)
    graph = helper.make_graph(
        [helper.make_node("Inverse", ["A"], ["IA"], domain=gn_dom.name),
         helper.make_node("GroupNorm", ["X", "g"], ["GX"], domain=gn_dom.name),
         helper.make_node("Double", ["X"], ["DX"], domain=gn_dom.name)], "mt",
        [helper.make_tensor_value_info("A", TensorProto.DOUBLE, ["b", 4, 4]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 6, "s"]),
         helper.make_tensor_value_info("g", TensorProto.INT64, [])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("IA", TensorProto.DOUBLE), ("GX", TensorProto.FLOAT), ("DX", TensorProto.FLOAT))])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(gn_dom.name, 1)]))
    so = ortcustom.session_options(gn_dom)
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)

    def work(seed):
        rng = np.random.default_rng(seed)
        for i in range(500):
            b, n, s = rng.integers(1, 5), rng.integers(1, 4), rng.integers(1, 9)
            a = well_conditioned(rng, (b, 4, 4), np.float64)
            x = rng.standard_normal((n, 6, s)).astype(np.float32) + seed
            g = int(rng.choice([1, 2, 3, 6]))
            ia, gx, dx = sess.run(None, {"A": a, "X": x, "g": np.array(g, np.int64)})
            np.testing.assert_allclose(ia, np.linalg.inv(a), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(gx, GroupNorm.reference(x, np.array(g)), rtol=1e-4, atol=1e-4)
            np.testing.assert_array_equal(dx, 2 * x)
            if i % 50 == 0:  # errors interleaved with good runs must not disturb other threads
                with pytest.raises(InvalidArgument, match="divide the 6 channels"):
                    sess.run(None, {"A": a, "X": x, "g": np.array(4, np.int64)})

    run_threads(8, work)


def test_parallel_execution_mode():
    d = Domain("org.rel.par").add(Inverse, GroupNorm)
    nodes = []
    for k in range(4):  # four independent branches, run concurrently by ORT's inter-op pool
        nodes.append(helper.make_node("Inverse", ["A"], [f"I{k}a"], domain=d.name))
        nodes.append(helper.make_node("Inverse", [f"I{k}a"], [f"I{k}"], domain=d.name))
        nodes.append(helper.make_node("GroupNorm", ["X"], [f"G{k}"], domain=d.name, num_groups=2 ** (k % 3)))
    graph = helper.make_graph(
        nodes, "par",
        [helper.make_tensor_value_info("A", TensorProto.DOUBLE, ["b", 8, 8]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 4, "s"])],
        [helper.make_tensor_value_info(f"{p}{k}", t, None) for k in range(4)
         for p, t in (("I", TensorProto.DOUBLE), ("G", TensorProto.FLOAT))])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(d.name, 1)]))
    so = ortcustom.session_options(d)
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.inter_op_num_threads = 4
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    rng = np.random.default_rng(0)

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(30):
            a = well_conditioned(rng, (rng.integers(1, 6), 8, 8), np.float64)
            x = rng.standard_normal((2, 4, rng.integers(1, 50))).astype(np.float32)
            out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"A": a, "X": x})))
            for k in range(4):
                np.testing.assert_allclose(out[f"I{k}"], a, rtol=1e-9, atol=1e-9)
                np.testing.assert_allclose(out[f"G{k}"], GroupNorm.reference(x, np.array(2 ** (k % 3))),
                                           rtol=1e-4, atol=1e-4)

    del rng
    run_threads(3, work)


def test_several_sessions_with_different_domains_at_once():
    # each thread registers its own domains (concurrent registration), makes sessions and runs them
    def work(i):
        inv = Domain(f"org.rel.multi{i}").add(Inverse)
        own = Op(f"Add{i}", [Input("X", "float")], [Output("Y", "float", shape="X")],
                 compute=lambda X, i=i: X + np.float32(i))
        mine = Domain(f"org.rel.own{i}").add(own)
        for _ in range(3):
            s1 = session(Inverse, inv, {"X": (np.float64, ["b", 3, 3])})
            s2 = session(own, mine, {"X": (np.float32, ["n"])}, so=ortcustom.session_options(mine, inv))
            rng = np.random.default_rng(i)
            for _ in range(40):
                a = well_conditioned(rng, (2, 3, 3), np.float64)
                np.testing.assert_allclose(s1.run(None, {"X": a})[0], np.linalg.inv(a), rtol=1e-10, atol=1e-12)
                x = rng.standard_normal(5).astype(np.float32)
                np.testing.assert_array_equal(s2.run(None, {"X": x})[0], x + np.float32(i))

    run_threads(8, work)
