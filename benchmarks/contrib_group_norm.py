"""The contrib_group_norm cases: com.microsoft GroupNorm with SiLU (what onnxruntime.transformers
fuses a UNet's GroupNorm + SiLU into) on the CPU, against the unfused graphs ORT runs without it:
the TorchScript exporter's Reshape / InstanceNormalization / Reshape / Mul / Add + Sigmoid / Mul,
and ONNX GroupNormalization-21 + Sigmoid / Mul. Layout NCHW for all (ours: channels_last=0); ours
on the same data in NHWC (channels_last=1, the optimizer's layout) is shown as info."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUP = "contrib_group_norm"
IMPLS = ("ours", "ort_unfused", "ort_group_norm_silu", "ours_nhwc")
LABELS = {
    "ort_unfused": "ORT InstanceNorm graph + SiLU",
    "ort_group_norm_silu": "ORT GroupNormalization-21 + SiLU",
    "ours_nhwc": "ours, NHWC (info)",
}
INFO = {"ours_nhwc"}


def cases(quick: bool) -> list:
    shapes = [(1, 64, 8, 8), (1, 128, 16, 16)] if quick else [(2, 320, 64, 64), (1, 128, 256, 256)]
    goal = (C.Goal("ort_unfused", 1.0, "ours / unfused ORT graph <= 1.0"),)
    return [C.Case(GROUP, s, dt, 32, goal) for s in shapes for dt in ("float32", "float16")]


def inputs(case) -> dict:
    rng = np.random.default_rng(2)
    c = case.shape[1]
    x = (rng.standard_normal(case.shape, dtype=np.float32) * 2 + 3).astype(C.DTYPES[case.dtype])
    return {"X": x, "gamma": rng.standard_normal(c).astype(np.float32),
            "beta": rng.standard_normal(c).astype(np.float32)}


def reference(case) -> np.ndarray:
    from ortcustom.ops.contrib import ContribGroupNorm

    f = inputs(case)
    return ContribGroupNorm.reference(f["X"].astype(np.float64), f["gamma"], f["beta"], activation=1,
                                      channels_last=0, epsilon=C.EPS, groups=case.groups)


def _ours(case, feeds, nhwc: bool):
    import ortcustom
    from ortcustom.ops.contrib import ContribGroupNorm, domain
    from ortcustom.testing import make_model

    dom = domain()
    x = feeds["X"]
    if nhwc:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    model = make_model(ContribGroupNorm, dom, {"X": (x.dtype, x.shape), "gamma": feeds["gamma"],
                                               "beta": feeds["beta"]},
                       attrs={"activation": 1, "channels_last": int(nhwc), "epsilon": C.EPS, "groups": case.groups})
    sess = C._session(model.SerializeToString(), ortcustom.session_options(dom))
    run_feeds = dict(feeds, X=x)
    if nhwc:  # checked against the NCHW reference
        return lambda: sess.run(None, run_feeds)[0].transpose(0, 3, 1, 2), sess
    return lambda: sess.run(None, run_feeds), sess


def _unfused(case, instance_norm: bool) -> bytes:
    """NCHW X -> group norm -> * sigmoid(.), with gamma and beta as initializers."""
    from onnx import TensorProto, helper, numpy_helper

    from ortcustom.testing import for_runtime

    n, c = case.shape[:2]
    g = case.groups
    elem = TensorProto.FLOAT16 if case.dtype == "float16" else TensorProto.FLOAT
    f = inputs(case)
    dt = C.DTYPES[case.dtype]
    init = lambda name, a: numpy_helper.from_array(np.asarray(a), name)  # noqa: E731
    if instance_norm:  # what torch.onnx.export (TorchScript, opset 17) writes for nn.GroupNorm
        nodes = [helper.make_node("Reshape", ["X", "grouped"], ["xg"]),
                 helper.make_node("InstanceNormalization", ["xg", "ones", "zeros"], ["ng"], epsilon=C.EPS),
                 helper.make_node("Shape", ["X"], ["shape"]),
                 helper.make_node("Reshape", ["ng", "shape"], ["nx"]),
                 helper.make_node("Mul", ["nx", "gamma"], ["sx"]),
                 helper.make_node("Add", ["sx", "beta"], ["gn"])]
        inits = [init("grouped", np.array([0, g, -1], np.int64)), init("ones", np.ones(g, dt)),
                 init("zeros", np.zeros(g, dt)), init("gamma", f["gamma"].astype(dt).reshape(c, 1, 1)),
                 init("beta", f["beta"].astype(dt).reshape(c, 1, 1))]
        opset = 17
    else:
        nodes = [helper.make_node("GroupNormalization", ["X", "gamma", "beta"], ["gn"], num_groups=g,
                                  epsilon=C.EPS)]
        inits = [init("gamma", f["gamma"].astype(dt)), init("beta", f["beta"].astype(dt))]
        opset = 21
    nodes += [helper.make_node("Sigmoid", ["gn"], ["sig"]), helper.make_node("Mul", ["gn", "sig"], ["Y"])]
    graph = helper.make_graph(nodes, "unfused", [helper.make_tensor_value_info("X", elem, list(case.shape))],
                              [helper.make_tensor_value_info("Y", elem, None)], inits)
    return for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])).SerializeToString()


def make_impl(case, key: str, label: str):
    feeds = inputs(case)
    if key in ("ours", "ours_nhwc"):
        fn, sess = _ours(case, feeds, key == "ours_nhwc")
        return C.Impl(key, label, fn, info=key in INFO, keep=(sess,))
    if key in ("ort_unfused", "ort_group_norm_silu"):
        try:
            sess = C._session(_unfused(case, key == "ort_unfused"))
            x = {"X": feeds["X"]}
            sess.run(None, x)
        except Exception as e:  # e.g. no float16 kernel for an op on ORT's CPU
            raise C.Unavailable(f"n/a: {str(e).splitlines()[0][:110]}") from None
        return C.Impl(key, label, lambda: sess.run(None, x), keep=(sess,))
    raise ValueError(f"no implementation {key!r} for {GROUP}")
