"""com.microsoft GroupNorm / SkipGroupNorm (ORT's contrib schema) on the CPU: values against the
NumPy reference and torch, both layouts and types, refusals, the CUDA-first provider list, and a
PyTorch model fused by onnxruntime.transformers.optimizer."""
import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import _customop, kernels
from ortcustom.ops.contrib import ContribGroupNorm, SkipGroupNorm, domain, inference_session
from ortcustom.testing import for_runtime, make_model

from helpers import CPU

torch = pytest.importorskip("torch")
F = torch.nn.functional

DOM = domain()
CUDA_FIRST = ["CUDAExecutionProvider", "CPUExecutionProvider"]
TOL = {np.float32: 2e-5, np.float16: 4e-3}  # atol and rtol, against the float64 reference


def attrs(groups, channels_last=1, activation=0, epsilon=1e-5):
    return dict(activation=activation, channels_last=channels_last, epsilon=epsilon, groups=groups)


def session(op, feeds, a, outputs=None, providers=CPU):
    inputs = {k: (v.dtype, None) if v is not None else None for k, v in feeds.items()}
    model = make_model(op, DOM, inputs, attrs=a, outputs=outputs)
    return ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=providers)


def run(op, feeds, a, outputs=None, providers=CPU):
    present = {k: v for k, v in feeds.items() if v is not None}
    return session(op, feeds, a, outputs, providers).run(None, present)


def torch_group_norm(s, gamma, beta, a):
    """torch's group_norm (+ silu) of s in the op's layout, in float64."""
    t = torch.from_numpy(s.astype(np.float64))
    if a["channels_last"]:
        t = t.permute(0, 3, 1, 2)
    y = F.group_norm(t, a["groups"], torch.from_numpy(gamma.astype(np.float64)),
                     torch.from_numpy(beta.astype(np.float64)), eps=a["epsilon"])
    if a["activation"]:
        y = F.silu(y)
    return (y.permute(0, 2, 3, 1) if a["channels_last"] else y).numpy()


def close(got, want, dtype):
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=TOL[dtype], atol=TOL[dtype])


def data(rng, shape, dtype, offset=0.0):
    return (rng.standard_normal(shape) * 2 + offset).astype(dtype)


@pytest.mark.parametrize("channels_last", [1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("activation", [0, 1])
@pytest.mark.parametrize("shape,groups", [((2, 5, 7, 32), 8), ((1, 3, 3, 6), 3), ((3, 1, 1, 4), 1), ((2, 3, 5, 40), 8),
                                          ((1, 64, 64, 64), 32)])  # the last: several tasks per image
def test_group_norm_matches_reference_and_torch(channels_last, dtype, activation, shape, groups):
    rng = np.random.default_rng(sum(shape) + activation)
    if not channels_last:
        shape = (shape[0], shape[3], shape[1], shape[2])
    C = shape[3] if channels_last else shape[1]
    x = data(rng, shape, dtype, offset=3.0)
    gamma, beta = data(rng, C, np.float32), data(rng, C, np.float32)
    a = attrs(groups, channels_last, activation)
    (y,) = run(ContribGroupNorm, {"X": x, "gamma": gamma, "beta": beta}, a)
    assert y.shape == x.shape and y.dtype == x.dtype
    close(y, ContribGroupNorm.reference(x, gamma, beta, **a), dtype)
    close(y, torch_group_norm(x, gamma, beta, a), dtype)


@pytest.mark.parametrize("channels_last", [1, 0])
def test_gamma_beta_float16_with_float_x_and_the_other_way(channels_last):
    rng = np.random.default_rng(1)
    shape = (2, 4, 4, 16) if channels_last else (2, 16, 4, 4)
    a = attrs(4, channels_last, 1)
    for tx, tm in [(np.float32, np.float16), (np.float16, np.float32), (np.float16, np.float16)]:
        x, gamma, beta = data(rng, shape, tx), data(rng, 16, tm), data(rng, 16, tm)
        (y,) = run(ContribGroupNorm, {"X": x, "gamma": gamma, "beta": beta}, a)
        assert y.dtype == tx
        close(y, torch_group_norm(x, gamma, beta, a), tx)


@pytest.mark.parametrize("channels_last", [1, 0])
def test_stable_for_a_large_offset(channels_last):
    rng = np.random.default_rng(2)
    shape = (1, 32, 32, 64) if channels_last else (1, 64, 32, 32)
    x = (1000 + rng.standard_normal(shape)).astype(np.float32)  # mean >> std: naive sums lose it
    gamma, beta = np.ones(64, np.float32), np.zeros(64, np.float32)
    a = attrs(4, channels_last)
    (y,) = run(ContribGroupNorm, {"X": x, "gamma": gamma, "beta": beta}, a)
    close(y, ContribGroupNorm.reference(x, gamma, beta, **a), np.float32)


def skip_shapes(N, C, spatial, channels_last):
    full = (N, *spatial, C) if channels_last else (N, C, *spatial)
    return {"full": full, "per image": (N, 1, 1, C) if channels_last else (N, C, 1, 1), "(N, C)": (N, C)}


@pytest.mark.parametrize("channels_last", [1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("skip_kind", ["full", "per image", "(N, C)"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_skip_group_norm(channels_last, dtype, skip_kind, with_bias):
    rng = np.random.default_rng(3)
    N, C, spatial = 2, 32, (6, 5)
    shapes = skip_shapes(N, C, spatial, channels_last)
    x, skip = data(rng, shapes["full"], dtype), data(rng, shapes[skip_kind], dtype)
    bias = data(rng, C, dtype) if with_bias else None
    gamma, beta = data(rng, C, np.float32), data(rng, C, np.float32)
    a = attrs(8, channels_last, 1)
    feeds = {"X": x, "gamma": gamma, "beta": beta, "skip": skip, "bias": bias}
    y, s = run(SkipGroupNorm, feeds, a, outputs={"Y": (dtype, None), "S": (dtype, None)})
    want_y, want_s = SkipGroupNorm.reference(x, gamma, beta, skip, bias, **a)
    close(s, want_s, dtype)
    close(y, want_y, dtype)
    close(y, torch_group_norm(want_s, gamma, beta, a), dtype)
    (y_only,) = run(SkipGroupNorm, feeds, a, outputs={"Y": (dtype, None)})  # S not asked for
    np.testing.assert_array_equal(y_only, y)


def test_direct_call_runs_the_same_kernel():
    rng = np.random.default_rng(4)
    x, gamma, beta = data(rng, (2, 8, 8, 16), np.float32), data(rng, 16, np.float32), data(rng, 16, np.float32)
    a = attrs(4, 1, 1)
    (y,) = run(ContribGroupNorm, {"X": x, "gamma": gamma, "beta": beta}, a)
    np.testing.assert_array_equal(kernels.call(ContribGroupNorm, x, gamma, beta, **a), y)


def test_empty_input():
    x = np.zeros((0, 4, 4, 8), np.float32)
    y, s = run(SkipGroupNorm, {"X": x, "gamma": np.ones(8, np.float32), "beta": np.ones(8, np.float32),
                               "skip": x}, attrs(2), outputs={"Y": (np.float32, None), "S": (np.float32, None)})
    assert y.shape == s.shape == x.shape


F32 = np.float32
BAD_INPUT = [  # (op, feeds, attributes, words the message must contain)
    (ContribGroupNorm, dict(X=np.zeros((2, 4, 8), F32), gamma=np.ones(8, F32), beta=np.ones(8, F32)), attrs(2),
     ["GroupNorm", "input X", "(2, 4, 8)", "4 dimensions (N, H, W, C)"]),
    (ContribGroupNorm, dict(X=np.zeros((2, 3, 3, 6), F32), gamma=np.ones(6, F32), beta=np.ones(6, F32)), attrs(4),
     ["GroupNorm", "groups=4", "6 channels of X"]),
    (ContribGroupNorm, dict(X=np.zeros((2, 6, 3, 3), F32), gamma=np.ones(3, F32), beta=np.ones(6, F32)),
     attrs(2, channels_last=0), ["GroupNorm", "input gamma", "has shape (3,)", "(C,) = (6,)"]),
    (ContribGroupNorm, dict(X=np.zeros((2, 3, 3, 6), F32), gamma=np.ones(6, F32), beta=np.ones((1, 6), F32)),
     attrs(2), ["GroupNorm", "input beta", "(1, 6)"]),
    (SkipGroupNorm, dict(X=np.zeros((2, 3, 3, 6), F32), gamma=np.ones(6, F32), beta=np.ones(6, F32),
                         skip=np.ones((2, 3, 1, 6), F32)), attrs(2), ["SkipGroupNorm", "input skip", "(2, 3, 1, 6)"]),
    (SkipGroupNorm, dict(X=np.zeros((2, 6, 3, 3), F32), gamma=np.ones(6, F32), beta=np.ones(6, F32),
                         skip=np.ones((2, 1, 1, 6), F32)), attrs(2, channels_last=0),
     ["SkipGroupNorm", "input skip", "(N, C, 1, 1)"]),
    (SkipGroupNorm, dict(X=np.zeros((2, 3, 3, 6), F32), gamma=np.ones(6, F32), beta=np.ones(6, F32),
                         skip=np.ones((2, 6), F32), bias=np.ones(3, F32)), attrs(2), ["SkipGroupNorm", "input bias"]),
]


@pytest.mark.parametrize("op,feeds,a,words", BAD_INPUT)
def test_bad_input_is_refused_clearly(op, feeds, a, words):
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument) as e:
        run(op, feeds, a)
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("a,words", [
    (dict(activation=2, groups=2), ["activation=2", "must be one of 0, 1"]),
    (dict(activation=0, groups=0), ["groups=0", "must be >= 1"]),
    (dict(activation=0, groups=2, epsilon=-1.0), ["epsilon"]),
    (dict(groups=2), ["activation", "required"]),
])
def test_bad_attributes_are_refused_at_session_creation(a, words):
    feeds = dict(X=np.zeros((1, 2, 2, 4), F32), gamma=np.ones(4, F32), beta=np.ones(4, F32))
    with pytest.raises(Exception) as e:
        session(ContribGroupNorm, feeds, a)
    assert "GroupNorm" in str(e.value)
    for w in words:
        assert w in str(e.value)


def test_registered_for_the_cpu_provider_only():
    # ORT's CUDA provider finds no kernel of ours for these nodes (the CUDA/CPU split is ORT's own)
    bindings = _customop.describe(DOM)
    assert {b["name"] for b in bindings} == {"GroupNorm", "SkipGroupNorm"}
    assert {b["provider"] for b in bindings} == {"CPUExecutionProvider"}


def _orts_cuda_provider_starts():
    """Whether ORT's CUDA provider starts here (onnxruntime-gpu with a GPU and its libraries): a session
    of ORT's own Identity listed CUDA first keeps it, else ORT falls back to the CPU."""
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return False
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = for_runtime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    return "CUDAExecutionProvider" in ort.InferenceSession(model.SerializeToString(),
                                                          providers=CUDA_FIRST).get_providers()


def test_cuda_listed_first():
    """No usable CUDA provider: the nodes run on our CPU kernel. A usable one (seen on an H200): ours
    registered makes ORT's built-in CUDA kernel unmatchable (the trap the module's doc names), and
    inference_session, ORT alone first, runs ORT's own CUDA kernel on Stable Diffusion's 320 channels."""
    rng = np.random.default_rng(5)
    x, gamma, beta = data(rng, (2, 8, 8, 320), np.float32), data(rng, 320, np.float32), data(rng, 320, np.float32)
    a = attrs(32, 1, 1)
    feeds = {"X": x, "gamma": gamma, "beta": beta}
    want = ContribGroupNorm.reference(x, gamma, beta, **a)
    if not _orts_cuda_provider_starts():
        (y,) = session(ContribGroupNorm, feeds, a, providers=CUDA_FIRST).run(None, feeds)
        close(y, want, np.float32)
        return
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail, match="kernel type string 'T'"):
        session(ContribGroupNorm, feeds, a, providers=CUDA_FIRST)
    model = make_model(ContribGroupNorm, DOM, {k: (v.dtype, None) for k, v in feeds.items()}, attrs=a)
    sess = inference_session(model.SerializeToString(), providers=CUDA_FIRST)
    assert sess.get_providers()[0] == "CUDAExecutionProvider"
    (y,) = sess.run(None, feeds)
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-3)  # ORT's kernel, not ours: its own accuracy


def test_without_ortcustom_the_cpu_has_no_kernel():
    x = np.zeros((1, 2, 2, 4), F32)
    inputs = {"X": x, "gamma": np.ones(4, F32), "beta": np.ones(4, F32)}
    model = make_model(ContribGroupNorm, DOM, inputs, attrs=attrs(2))
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.NotImplemented, match="GroupNorm"):
        ort.InferenceSession(model.SerializeToString(), providers=CPU)


def test_unet_block_fused_by_the_ort_optimizer_runs_on_cpu(tmp_path):
    from helpers import fused_unet_block

    model, x, want = fused_unet_block(tmp_path)
    ops = [(n.domain, n.op_type) for n in model.graph.node]
    assert ("com.microsoft", "GroupNorm") in ops and ("com.microsoft", "SkipGroupNorm") in ops
    skip_node = next(n for n in model.graph.node if n.op_type == "SkipGroupNorm")
    assert len(skip_node.output) == 2  # the sum is reused: S is an output
    assert [a.i for a in skip_node.attribute if a.name == "groups"] == [32]
    onnx_bytes = model.SerializeToString()
    sess = ort.InferenceSession(onnx_bytes, ortcustom.session_options(DOM), providers=CPU)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=1e-4, atol=1e-4)
    # the helper: ORT alone first, then ours where ORT has no kernel (no usable CUDA provider). With one,
    # the whole block runs on ORT's CUDA kernels: TF32 convolutions, 1.1e-3 off torch's CPU on an H200
    sess = inference_session(onnx_bytes, providers=CUDA_FIRST)
    tol = 5e-3 if sess.get_providers()[0] == "CUDAExecutionProvider" else 1e-4
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=tol, atol=tol)


@pytest.mark.parametrize("isa", ["baseline", "avx2", "avx512"])
def test_every_pass_agrees(tmp_path, isa):
    """ORTCUSTOM_ISA (read once per process) picks the loops: SiLU on 4, 8 or 16 lanes, float16 rows
    without or with F16C. Same inputs, same values as this process's pass up to FMA contraction,
    and both match the reference."""
    import os
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from helpers import run_python
    from test_isa import isa_env, other_passes

    if isa not in other_passes():
        pytest.skip(f"{isa}: not runnable here, or this process's pass")

    rng = np.random.default_rng(6)
    cases = {}
    for cl in (1, 0):
        for dt in (np.float32, np.float16):
            shape = (2, 5, 7, 24) if cl else (2, 24, 5, 7)
            cases[f"{cl}{dt.__name__}"] = (data(rng, shape, dt), data(rng, shape, dt), data(rng, 24, np.float32),
                                           data(rng, 24, np.float32), data(rng, 24, dt))
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{f"{k}_{i}": a for k, v in cases.items() for i, a in enumerate(v)})
    code = f"""
import numpy as np
from ortcustom import kernels
from ortcustom.ops.contrib import SkipGroupNorm
f = np.load({str(inputs)!r})
out = {{}}
for key in {sorted(cases)!r}:
    x, skip, g, b, bias = (f[f"{{key}}_{{i}}"] for i in range(5))
    a = dict(activation=1, channels_last=int(key[0]), epsilon=1e-5, groups=4)
    out[key] = kernels.call(SkipGroupNorm, x, g, b, skip, bias, **a)[0]
np.savez({str(tmp_path / "out.npz")!r}, **out)
"""
    r = run_python(code, env=isa_env(ORTCUSTOM_ISA=isa))
    assert r.returncode == 0, r.stderr
    base = np.load(tmp_path / "out.npz")
    for key, (x, skip, g, b, bias) in cases.items():
        a = attrs(4, int(key[0]), 1)
        here = kernels.call(SkipGroupNorm, x, g, b, skip, bias, **a)[0]
        dt = x.dtype.type
        close(base[key], here, dt)
        close(base[key], SkipGroupNorm.reference(x, g, b, skip, bias, **a)[0], dt)
