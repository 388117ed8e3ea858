"""ScaledAdd in ONNX Runtime: our kernel vs the same computation as plain ONNX ops (Mul, Add).

    python benchmarks/bench_scaled_add.py [--size N] [--threads T]
"""
import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import ortcustom
from ortcustom.testing import for_runtime, make_model

import myops
from myops import ScaledAdd


def plain_model(shape, alpha):
    """Z = X + alpha * Y with ONNX's own Mul and Add."""
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape)) for n in "XYZ"]
    a = helper.make_tensor("alpha", TensorProto.FLOAT, [], [alpha])
    graph = helper.make_graph([helper.make_node("Mul", ["Y", "alpha"], ["aY"]),
                               helper.make_node("Add", ["X", "aY"], ["Z"])],
                              "plain", vi[:2], vi[2:], initializer=[a])
    return for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def best_of(sess, feeds, repeat):
    sess.run(None, feeds)  # warm up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--size", type=int, default=1 << 22, help="elements (float32)")
    p.add_argument("--threads", type=int, default=2, help="ORT intra-op threads")
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(args.size).astype(np.float32) for _ in range(2))
    feeds = {"X": x, "Y": y}

    so = ortcustom.session_options(myops.domain)
    so.intra_op_num_threads = args.threads
    ours = ort.InferenceSession(make_model(ScaledAdd, myops.domain, feeds, attrs={"alpha": 0.5})
                                .SerializeToString(), so, providers=["CPUExecutionProvider"])
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    plain = ort.InferenceSession(plain_model(x.shape, 0.5).SerializeToString(), so,
                                 providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(ours.run(None, feeds)[0], plain.run(None, feeds)[0], rtol=1e-6)

    t_ours, t_plain = best_of(ours, feeds, args.repeat), best_of(plain, feeds, args.repeat)
    print(f"ScaledAdd, {args.size} float32, {args.threads} threads, best of {args.repeat}:")
    print(f"  ours (one custom op)   {t_ours * 1e3:8.3f} ms")
    print(f"  plain ONNX (Mul, Add)  {t_plain * 1e3:8.3f} ms")
    print(f"  ratio ours / plain     {t_ours / t_plain:8.2f}")


if __name__ == "__main__":
    main()
