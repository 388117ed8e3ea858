"""ScaledAdd: ONNX Runtime vs NumPy, bad input refused, the direct call, and the torch op (eager
and exported with both exporters) running the same kernel."""
import numpy as np
import onnxruntime as ort
import pytest

try:
    import torch
except ImportError:  # the PyTorch tests skip, the others run
    torch = None

import ortcustom
from ortcustom import kernels
from ortcustom.testing import make_model

import myops
from myops import ScaledAdd

CPU = ["CPUExecutionProvider"]
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (pip install torch onnxscript)")


def session(x, y, alpha=None, providers=CPU):
    attrs = None if alpha is None else {"alpha": alpha}
    model = make_model(ScaledAdd, myops.domain, {"X": x, "Y": y}, attrs=attrs)
    return ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(myops.domain),
                                providers=providers)


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(7,), (3, 50_000), (0, 4)])  # 150k elements: several tasks
def test_session_matches_numpy(dtype, shape):
    x, y = data(shape, dtype)
    (z,) = session(x, y, alpha=0.5).run(None, {"X": x, "Y": y})
    assert z.dtype == dtype and z.shape == shape
    tol = 1e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(z, ScaledAdd.reference(x, y, alpha=0.5), rtol=tol, atol=tol)


def test_the_plain_library_runs_without_ortcustom(tmp_path):
    """Deploy without Python: a process with onnxruntime alone loads this package's library (what
    C/C++, C#, Java and Triton load) and gets the Python path's outputs, bit for bit."""
    import subprocess
    import sys

    x, y = data((4, 6), np.float32)
    model = make_model(ScaledAdd, myops.domain, {"X": x, "Y": y}, attrs={"alpha": 0.5})
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    np.savez(tmp_path / "in.npz", X=x, Y=y)
    code = (
        "import sys, numpy as np, onnxruntime as ort\n"
        "so = ort.SessionOptions(); so.register_custom_ops_library(sys.argv[1])\n"
        "s = ort.InferenceSession(sys.argv[2], so, providers=['CPUExecutionProvider'])\n"
        "np.save(sys.argv[3], s.run(None, dict(np.load(sys.argv[4])))[0])\n"
        "assert 'ortcustom' not in sys.modules\n")
    library = ortcustom.get_library_path(myops.domain)
    subprocess.run([sys.executable, "-c", code, library, str(tmp_path / "m.onnx"), str(tmp_path / "z.npy"),
                    str(tmp_path / "in.npz")], check=True)
    (want,) = session(x, y, alpha=0.5).run(None, {"X": x, "Y": y})
    np.testing.assert_array_equal(np.load(tmp_path / "z.npy"), want)


def test_alpha_defaults_to_one():
    x, y = data((5, 3), np.float64)
    (z,) = session(x, y).run(None, {"X": x, "Y": y})
    np.testing.assert_array_equal(z, x + y)


def test_mismatched_shapes_are_refused_clearly():
    x, _ = data((2, 3), np.float32)
    y = np.ones((3, 2), np.float32)
    sess = session(("float", ["a", "b"]), ("float", ["c", "d"]))
    with pytest.raises(Exception, match=r"ScaledAdd.*input Y has shape \(3, 2\); expected the shape of X, \(2, 3\)"):
        sess.run(None, {"X": x, "Y": y})
    with pytest.raises(ValueError, match=r"ScaledAdd.*input Y has shape \(3, 2\)"):
        kernels.call(ScaledAdd, x, y)


def test_other_element_types_are_refused():
    with pytest.raises(TypeError, match=r"ScaledAdd: X has dtype int32; accepts float32, float64, float16"):
        kernels.call(ScaledAdd, np.ones(3, np.int32), np.ones(3, np.int32))


def test_direct_call_equals_the_session():
    x, y = data((4, 1000), np.float32)
    (z,) = session(x, y, alpha=-2.0).run(None, {"X": x, "Y": y})
    np.testing.assert_array_equal(kernels.call(ScaledAdd, x, y, alpha=-2.0), z)
    out = x.copy()
    kernels.call(ScaledAdd, out, y, alpha=-2.0, out=out)  # in place over X: declared
    np.testing.assert_array_equal(out, z)


# ---- PyTorch: the torch op made from the declaration --------------------------------------------

def torch_model():
    class Model(torch.nn.Module):
        def forward(self, x, y):
            return torch.ops.myops.scaled_add(x, y, 3.0).relu()

    return Model().eval()  # exported for inference


@needs_torch
def test_torch_op_eager():
    import myops.torch_ops  # noqa: F401  (registers torch.ops.myops.scaled_add)

    x, y = (torch.from_numpy(a) for a in data((6, 8), np.float32))
    torch.testing.assert_close(torch.ops.myops.scaled_add(x, y, 3.0), x + 3.0 * y)
    with pytest.raises(ValueError, match="input Y has shape"):
        torch.ops.myops.scaled_add(x, y.T.contiguous(), 1.0)


@needs_torch
@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_torch_export_runs_the_same_kernel_in_ort(dynamo):
    import ortcustom.export
    import myops.torch_ops  # noqa: F401

    x, y = (torch.from_numpy(a) for a in data((6, 8), np.float32))
    m = ortcustom.export.export(torch_model(), (x, y), dynamo=dynamo, ops=[myops.domain])
    nodes = [(n.domain, n.op_type) for n in m.graph.node]
    assert ("myops", "ScaledAdd") in nodes
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(myops.domain), providers=CPU)
    feeds = dict(zip([i.name for i in sess.get_inputs()], (x.numpy(), y.numpy())))
    (got,) = sess.run(None, feeds)
    np.testing.assert_array_equal(got, torch_model()(x, y).numpy())


# ---- CUDA: the .cu kernel, where this package was built with it and a GPU is there -------------

def _cuda_session_or_skip(x, y):
    if not ScaledAdd.kernel.cuda:
        pytest.skip("built without the CUDA kernel (no nvcc, or -Dcuda=disabled)")
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("this onnxruntime has no CUDA provider")
    sess = session(x, y, alpha=2.0, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    if sess.get_providers()[0] != "CUDAExecutionProvider":
        pytest.skip("no usable GPU")
    return sess


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_cuda_kernel_in_ort(dtype):
    x, y = data((3, 100_000), dtype)
    (z,) = _cuda_session_or_skip(x, y).run(None, {"X": x, "Y": y})
    tol = 1e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(z, ScaledAdd.reference(x, y, alpha=2.0), rtol=tol, atol=tol)
