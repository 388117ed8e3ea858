"""Python kernels: an identity op at 4 floats and at 16 MiB, one `session.run` each, against ORT's
built-in Identity and an onnxruntime-extensions PyOp (CPU, 2 intra-op threads).

asv: `PythonOps.time_run` over (size, kind). Script: `python benchmarks/python_ops.py` prints the
median time per run of each and its ratios to Identity and to the PyOp.

Kinds: `ort_identity` (ORT's Identity), `py_return` (ortcustom Python op returning its input: one
copy into ORT's output), `py_out` (ortcustom Python op given `out=`: fills ORT's output, one copy),
`ext_pyop` (onnxruntime-extensions `onnx_op`, domain ai.onnx.contrib).
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

SIZES = {"4 floats": 4, "16 MiB": 4 * 2**20}
KINDS = ("ort_identity", "py_return", "py_out", "ext_pyop")
INTRA_OP_THREADS = 2

_EXT = None  # the extensions' library path, once its PyOp is registered; False if unavailable


def _extensions():
    global _EXT
    if _EXT is None:
        try:
            from onnxruntime_extensions import PyOp, get_library_path, onnx_op

            @onnx_op(op_type="PyIdentityBench", inputs=[PyOp.dt_float], outputs=[PyOp.dt_float])
            def _identity(x):
                return x

            _EXT = get_library_path()
        except Exception as e:  # not installed, or cannot load with this onnxruntime
            print(f"onnxruntime-extensions unavailable: {e!r}", file=sys.stderr)
            _EXT = False
    return _EXT


def _py_identity_return(X):
    return X


def _py_identity_out(X, *, out=None):
    if out is None:
        return X
    np.copyto(out[0], X)


def _model(op_type: str, domain: str):
    from onnx import TensorProto, helper

    from ortcustom.testing import for_runtime

    graph = helper.make_graph([helper.make_node(op_type, ["X"], ["Y"], domain=domain)], "bench",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["n"])])
    opsets = [helper.make_opsetid("", 17)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    return for_runtime(helper.make_model(graph, opset_imports=opsets)).SerializeToString()


def make_session(kind: str):
    """An InferenceSession computing Y = identity(X) the `kind` way; None if it cannot be made."""
    import onnxruntime as ort

    import ortcustom
    from ortcustom import Domain, Input, Op, Output

    so = ort.SessionOptions()
    so.intra_op_num_threads = INTRA_OP_THREADS
    if kind == "ort_identity":
        model = _model("Identity", "")
    elif kind in ("py_return", "py_out"):
        fn = _py_identity_return if kind == "py_return" else _py_identity_out
        op = Op("PyIdentity", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=fn)
        Domain(f"bench.{kind}").add(op).register(so)
        model = _model("PyIdentity", f"bench.{kind}")
    elif kind == "ext_pyop":
        lib = _extensions()
        if not lib:
            return None
        so.register_custom_ops_library(lib)
        model = _model("PyIdentityBench", "ai.onnx.contrib")
    else:
        raise ValueError(kind)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


class PythonOps:
    params = (list(SIZES.values()), list(KINDS))
    param_names = ("n", "kind")

    def setup(self, n, kind):
        self.sess = make_session(kind)
        if self.sess is None:
            raise NotImplementedError(f"{kind} unavailable")  # asv: skipped
        self.feeds = {"X": np.random.default_rng(0).standard_normal(n).astype(np.float32)}
        y = self.sess.run(None, self.feeds)[0]
        np.testing.assert_array_equal(y, self.feeds["X"])

    def time_run(self, n, kind):
        self.sess.run(None, self.feeds)


def _median_run(sess, feeds, budget_s: float, min_runs: int) -> float:
    for _ in range(5):  # warm up
        sess.run(None, feeds)
    times = []
    end = time.perf_counter() + budget_s
    while len(times) < min_runs or time.perf_counter() < end:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t0)
        if len(times) >= 200_000:
            break
    return statistics.median(times)


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:10.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:10.3f} ms"


def main(budget_s: float = 1.0) -> dict:
    import onnxruntime as ort

    print(f"onnxruntime {ort.__version__}, {INTRA_OP_THREADS} intra-op threads, CPU; median per session.run")
    results = {}
    for label, n in SIZES.items():
        feeds = {"X": np.random.default_rng(0).standard_normal(n).astype(np.float32)}
        for kind in KINDS:
            sess = make_session(kind)
            if sess is None:
                continue
            np.testing.assert_array_equal(sess.run(None, feeds)[0], feeds["X"])
            results[label, kind] = _median_run(sess, feeds, budget_s, 20)
    print(f"{'size':9} {'kind':13} {'median':>13} {'/ Identity':>11} {'/ PyOp':>8}")
    for label in SIZES:
        base = results.get((label, "ort_identity"))
        pyop = results.get((label, "ext_pyop"))
        for kind in KINDS:
            t = results.get((label, kind))
            if t is None:
                print(f"{label:9} {kind:13} {'unavailable':>13}")
                continue
            r_id = f"{t / base:10.2f}x" if base else ""
            r_py = f"{t / pyop:7.3g}x" if pyop else "      -"
            print(f"{label:9} {kind:13} {_fmt(t)} {r_id} {r_py}")
    return results


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
