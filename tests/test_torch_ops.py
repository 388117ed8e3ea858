"""torch.ops.ortcustom.*: our CPU kernels run by PyTorch (eager, autograd, torch.export)."""
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ortcustom  # noqa: E402
import ortcustom.torch_ops as torch_ops  # noqa: E402  registers torch.ops.ortcustom.*
from helpers import run_python, torch_well_conditioned  # noqa: E402


def test_import_ortcustom_does_not_import_torch():
    code = ("import sys, ortcustom, ortcustom.ops, ortcustom.kernels, ortcustom.testing\n"
            "assert 'torch' not in sys.modules, 'import ortcustom imported torch'\nprint('ok')")
    r = run_python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


@pytest.mark.parametrize("module", ["ortcustom.export", "ortcustom.torch_ops"])
def test_needs_torch_says_so(module):
    code = (f"import sys; sys.modules['torch'] = None\nimport ortcustom\n"
            f"try:\n    import {module}\nexcept ImportError as e:\n    print(e)\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'needs PyTorch: pip install torch onnxscript, or in an ortcustom checkout pip install ".[torch]"' in r.stdout


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(3, 3), (4, 5, 5), (2, 3, 4, 4), (0, 2, 2)])
def test_inverse_matches_torch(shape, dtype):
    x = torch_well_conditioned(shape, dtype)
    y = torch.ops.ortcustom.inverse(x)
    assert y.shape == x.shape and y.dtype == dtype
    torch.testing.assert_close(y, torch.inverse(x), rtol=1e-4 if dtype == torch.float32 else 1e-10, atol=1e-6)


def test_inverse_float16_and_non_contiguous():
    x = torch_well_conditioned((3, 4, 4), torch.float32)
    torch.testing.assert_close(torch.ops.ortcustom.inverse(x.half()).float(), torch.inverse(x.half().float()),
                               rtol=2e-2, atol=2e-3)
    xt = x.transpose(-1, -2)  # not contiguous: read through a contiguous copy
    assert not xt.is_contiguous()
    torch.testing.assert_close(torch.ops.ortcustom.inverse(xt), torch.inverse(xt), rtol=1e-4, atol=1e-6)


def test_inverse_writes_into_a_new_tensor_and_leaves_input_alone():
    x = torch_well_conditioned((2, 3, 3))
    before = x.clone()
    y = torch.ops.ortcustom.inverse(x)
    assert y.data_ptr() != x.data_ptr()
    assert torch.equal(x, before)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 8, 4, 4), 2), ((1, 4, 2), 4), ((2, 4, 2, 3, 2), 1)])
def test_group_norm_matches_torch(shape, groups, affine, dtype):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(shape, generator=g, dtype=dtype) * 3 + 1
    w = torch.randn(shape[1], generator=g, dtype=dtype) if affine else None
    b = torch.randn(shape[1], generator=g, dtype=dtype) if affine else None
    y = torch.ops.ortcustom.group_norm(x, groups, w, b, 1e-5)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(y, torch.nn.functional.group_norm(x, groups, w, b, 1e-5), **tol)


def test_group_norm_defaults_and_bias_only():
    x = torch.randn(2, 4, 3)
    b = torch.randn(4)
    torch.testing.assert_close(torch.ops.ortcustom.group_norm(x, 2), torch.nn.functional.group_norm(x, 2))
    torch.testing.assert_close(torch.ops.ortcustom.group_norm(x, 2, None, b),
                               torch.nn.functional.group_norm(x, 2, None, b), rtol=1e-4, atol=1e-5)


def test_autograd():
    x = torch_well_conditioned((2, 3, 3), torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(torch.ops.ortcustom.inverse, (x,))
    xg = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, w, b: torch.ops.ortcustom.group_norm(x, 2, w, b, 1e-5), (xg, w, b))
    assert torch.autograd.gradcheck(lambda x: torch.ops.ortcustom.group_norm(x, 2), (xg,))


def test_errors_name_the_op():
    with pytest.raises(TypeError, match=r"ortcustom::inverse: x has dtype torch.bfloat16"):
        torch.ops.ortcustom.inverse(torch.eye(2, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match=r"ortcustom::group_norm: input has dtype torch.int64"):
        torch.ops.ortcustom.group_norm(torch.ones(2, 2, dtype=torch.int64), 1)
    with pytest.raises(ValueError, match=r"expected \(\.\.\., N, N\)"):
        torch.ops.ortcustom.inverse(torch.ones(2, 3))
    with pytest.raises(ValueError, match="num_groups must be positive and divide"):
        torch.ops.ortcustom.group_norm(torch.ones(2, 6, 3), 4)


def test_bad_attribute_is_invalid_attribute_naming_op_attribute_and_argument():
    from ortcustom.export import InvalidAttribute

    with pytest.raises(InvalidAttribute, match=r"^ortcustom::group_norm: GroupNorm attribute epsilon=nan is invalid: "
                                               r"must be >= 0 \(from ortcustom::group_norm argument 'eps'\)$"):
        torch.ops.ortcustom.group_norm(torch.ones(2, 4, 3), 2, None, None, float("nan"))
    assert issubclass(InvalidAttribute, ValueError)
    # a valid value is remembered as checked (kernels.attr_key), a refused one never: refused every call
    for _ in range(2):
        torch.ops.ortcustom.group_norm(torch.ones(2, 4, 3), 2, None, None, 0.5)
        with pytest.raises(InvalidAttribute, match="epsilon=-0.5 is invalid"):
            torch.ops.ortcustom.group_norm(torch.ones(2, 4, 3), 2, None, None, -0.5)


def test_non_cpu_tensors_raise_not_implemented():
    # A tensor on a device we have no kernel for is refused, never copied to the host. (This
    # torch build has no CUDA; a "meta" tensor stands in for any such device: the op itself would
    # take its fake implementation, so the device check is called directly.)
    with pytest.raises(NotImplementedError, match=r"ortcustom::inverse has no META kernel \(ortcustom has no META"):
        torch_ops._operand("inverse", "x", torch.empty(3, 3, device="meta"))
    # a CUDA tensor (torch.device only: this torch has no CUDA): refused unless built with CUDA
    cuda_tensor = types.SimpleNamespace(device=torch.device("cuda", 0), is_cpu=False)
    if ortcustom.build_info()["cuda"]:
        torch_ops._check_device("group_norm", "input", cuda_tensor)  # our CUDA kernels take it
    else:
        with pytest.raises(NotImplementedError, match=r"ortcustom::group_norm has no CUDA kernel \(this ortcustom "
                                                      r"was built without CUDA kernels\); input is on cuda:0"):
            torch_ops._check_device("group_norm", "input", cuda_tensor)


def test_fake_implementations_trace():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.ortcustom.group_norm(torch.ops.ortcustom.inverse(x), 1, None, None, 1e-5)

    batch = torch.export.Dim("batch")
    ep = torch.export.export(M(), (torch_well_conditioned((4, 3, 3)),), dynamic_shapes={"x": {0: batch}})
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert torch.ops.ortcustom.inverse.default in targets and torch.ops.ortcustom.group_norm.default in targets
    x = torch_well_conditioned((6, 3, 3))
    torch.testing.assert_close(ep.module()(x), M()(x))
    with torch.device("meta"):
        assert torch.ops.ortcustom.inverse(torch.empty(5, 2, 2)).shape == (5, 2, 2)


def test_one_kernel_two_runtimes_identical_inverse():
    # the torch op and the ORT session run the same compiled kernel: bit-identical results
    import onnxruntime as ort

    import ortcustom
    from ortcustom.ops import Inverse
    from ortcustom.testing import make_model

    x = torch_well_conditioned((5, 6, 6))
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    sess = ort.InferenceSession(make_model(Inverse, dom, {"X": x.numpy()}).SerializeToString(),
                               ortcustom.session_options(dom), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"X": x.numpy()})[0], torch.ops.ortcustom.inverse(x).numpy())
