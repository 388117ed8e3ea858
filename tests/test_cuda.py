"""The CUDA kernels, in ORT's CUDA provider (inputs bound on the GPU with IOBinding, no host round
trip) and directly on CuPy arrays; checked against CuPy. Skips without a GPU."""
import json

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import _kernels, kernels
from ortcustom.ops import GroupNorm, Inverse
from ortcustom.testing import make_model

cp = pytest.importorskip("cupy", reason="needs CuPy (pip install cupy-cuda13x)")
if not _kernels.cuda_built():
    pytest.skip("this ortcustom was built without CUDA (no nvcc at build time)", allow_module_level=True)
if _kernels.cuda_device_count() == 0:
    pytest.skip("no CUDA GPU or driver on this machine", allow_module_level=True)
if "CUDAExecutionProvider" not in ort.get_available_providers():
    pytest.skip("this onnxruntime has no CUDA provider (install onnxruntime-gpu)", allow_module_level=True)

PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"]
DOM = ortcustom.Domain("ortcustom").add(Inverse, GroupNorm)


def cuda_session(op, inputs, attrs=None, so=None, outputs=None):
    model = make_model(op, DOM, inputs, attrs=attrs, outputs=outputs)
    sess = ort.InferenceSession(model.SerializeToString(), so or ortcustom.session_options(DOM), providers=PROVIDERS)
    if sess.get_providers()[0] != "CUDAExecutionProvider":
        pytest.skip("ORT's CUDA provider could not start here")
    return sess


def run_bound(sess, feeds_gpu, host_feeds=None):
    """Runs with every input already on the GPU and the output left there; returns it as CuPy."""
    b = sess.io_binding()
    for name, arr in feeds_gpu.items():
        b.bind_input(name, "cuda", 0, arr.dtype, arr.shape, arr.data.ptr)
    for name, arr in (host_feeds or {}).items():
        b.bind_cpu_input(name, arr)
    b.bind_output(sess.get_outputs()[0].name, "cuda")
    sess.run_with_iobinding(b)
    out = b.get_outputs()[0]
    mem = cp.cuda.UnownedMemory(out.data_ptr(), int(np.prod(out.shape())) * np.dtype(out.element_type()).itemsize, out)
    return cp.ndarray(out.shape(), out.element_type(), cp.cuda.MemoryPointer(mem, 0)).copy()


def well_conditioned(shape, dtype, seed=0):
    n = shape[-1]
    rng = cp.random.default_rng(seed)
    return (rng.standard_normal(shape, dtype=cp.float64) + n * cp.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-3), (np.float64, 1e-9), (np.float16, 3e-2)])
@pytest.mark.parametrize("shape", [(4096, 4, 4), (256, 16, 16), (8, 64, 64), (1, 1, 1), (0, 3, 3),
                                   (2, 256, 256), (1, 1024, 1024)])
def test_inverse_on_gpu_matches_cupy(dtype, tol, shape):
    x = well_conditioned(shape, dtype)
    sess = cuda_session(Inverse, {"X": (dtype, ["b", shape[-1], shape[-1]])})
    y = run_bound(sess, {"X": x})
    if x.size:
        ref = cp.linalg.inv(x.astype(cp.float64))
        cp.testing.assert_allclose(y.astype(cp.float64), ref, rtol=tol, atol=tol)
        np.testing.assert_allclose(cp.asnumpy(kernels.inverse(x)).astype(np.float64), cp.asnumpy(ref), rtol=tol, atol=tol)


def test_inverse_singular_on_gpu_is_non_finite():
    x = cp.zeros((2, 3, 3), cp.float32)
    sess = cuda_session(Inverse, {"X": (np.float32, [2, 3, 3])})
    assert not cp.isfinite(run_bound(sess, {"X": x})).any()


def cupy_group_norm(x, groups, scale, bias, eps):
    n, c = x.shape[:2]
    g = x.astype(cp.float64).reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / cp.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * scale.astype(cp.float64).reshape(shape) + bias.astype(cp.float64).reshape(shape)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-4), (np.float64, 1e-10), (np.float16, 2e-2)])
@pytest.mark.parametrize("shape, groups", [((1, 32, 8, 8), 32), ((8, 64, 32, 32), 32), ((2, 320, 64, 64), 32),
                                           ((3, 6, 7), 3), ((2, 4, 1000, 1000), 2)])
def test_group_norm_on_gpu_matches_cupy(dtype, tol, shape, groups):
    rng = cp.random.default_rng(1)
    x = (rng.standard_normal(shape, dtype=cp.float64) * 2 + 3).astype(dtype)
    s = rng.standard_normal(shape[1], dtype=cp.float64).astype(dtype)
    b = rng.standard_normal(shape[1], dtype=cp.float64).astype(dtype)
    sess = cuda_session(GroupNorm, {"X": (dtype, list(shape)), "num_groups": (np.int64, []),
                                    "scale": (dtype, [shape[1]]), "bias": (dtype, [shape[1]])})
    y = run_bound(sess, {"X": x, "scale": s, "bias": b}, {"num_groups": np.array(groups, np.int64)})
    cp.testing.assert_allclose(y.astype(cp.float64), cupy_group_norm(x, groups, s, b, 1e-5), rtol=tol, atol=tol)


def test_nodes_run_on_the_cuda_provider(tmp_path):
    so = ortcustom.session_options(DOM)
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = cuda_session(Inverse, {"X": (np.float32, [16, 4, 4])}, so=so)
    run_bound(sess, {"X": well_conditioned((16, 4, 4), np.float32)})
    events = json.load(open(sess.end_profiling()))
    ours = [e for e in events if e.get("cat") == "Node" and e.get("args", {}).get("op_name") == "Inverse"]
    assert ours and all(e["args"]["provider"] == "CUDAExecutionProvider" for e in ours)
    # and no copies were put around it: no Memcpy nodes in the graph
    assert not [e for e in events if "Memcpy" in e.get("args", {}).get("op_name", "")]


def test_bad_input_on_gpu_is_an_error_and_session_survives():
    sess = cuda_session(Inverse, {"X": (np.float32, None)})
    with pytest.raises(Exception, match=r"Inverse \(node 'n0'\): input X has shape \(2, 3\)"):
        run_bound(sess, {"X": cp.ones((2, 3), cp.float32)})
    cp.testing.assert_allclose(run_bound(sess, {"X": 2 * cp.eye(3, dtype=cp.float32)}), cp.eye(3) / 2)
