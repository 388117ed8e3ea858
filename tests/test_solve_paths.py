"""solve, solve_ex, slogdet: PyTorch's OpInfo samples, the NumPy reference in onnx's
ReferenceEvaluator and both exporters (several results per node included); the kernel's numerics:
test_solve.py."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import Slogdet, Solve, SolveEx
from ortcustom.testing import make_model

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_solve import DOM, assert_solution  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pytorch_opinfo_samples(dtype):
    from opinfo import samples

    from ortcustom import kernels

    seen = 0
    for name in ("linalg.solve", "linalg.solve_ex"):
        for s in samples(name, dtype):
            a, b = s.input, s.args[0]
            left = int(s.kwargs.get("left", True))
            want_x, want_info = torch.linalg.solve_ex(a, b, left=bool(left))
            x, info = kernels.solve_ex(a.numpy(), b.numpy(), left=left)
            assert x.shape == tuple(want_x.shape) and info.shape == tuple(want_info.shape)
            np.testing.assert_array_equal(info, want_info.numpy())
            if x.size and not info.any():
                assert_solution(a.numpy(), b.numpy(), x, left)
            seen += 1
    for s in samples("linalg.slogdet", dtype):
        ws, wl = torch.linalg.slogdet(s.input)
        sign, logabs = kernels.slogdet(s.input.numpy())
        finite = np.isfinite(wl.numpy())
        np.testing.assert_array_equal(sign[finite], ws.numpy()[finite])
        np.testing.assert_allclose(logabs[finite], wl.numpy()[finite], rtol=1e-4, atol=1e-4)
        seen += 1
    assert seen >= 10


def test_reference_evaluator():
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 5, 5))
    b = rng.standard_normal((2, 1, 5, 2))
    new_ops = ortcustom.reference_ops(DOM)
    got = ReferenceEvaluator(make_model(Solve, DOM, {"A": a, "B": b}), new_ops=new_ops).run(None, {"A": a, "B": b})[0]
    np.testing.assert_allclose(got, np.linalg.solve(a, b), atol=1e-12)
    x, info = ReferenceEvaluator(make_model(SolveEx, DOM, {"A": a, "B": b}), new_ops=new_ops).run(None, {"A": a, "B": b})
    np.testing.assert_allclose(x, np.linalg.solve(a, b), atol=1e-12)
    assert info.shape == (3,) and not info.any()
    sign, logabs = ReferenceEvaluator(make_model(Slogdet, DOM, {"A": a}), new_ops=new_ops).run(None, {"A": a})
    ws, wl = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign, ws)
    np.testing.assert_allclose(logabs, wl, atol=1e-12)


class Linalg(torch.nn.Module):
    def forward(self, a, b, bt):
        x, info = torch.linalg.solve_ex(a, b)
        sign, logabs = torch.linalg.slogdet(a)
        return (torch.linalg.solve(a, b) + x, torch.linalg.solve(a, b[..., 0]), torch.linalg.solve(a, bt, left=False),
                info, sign * logabs, torch.slogdet(a)[1])


def _inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(2)
    a = torch.randn(3, 4, 4, generator=g, dtype=dtype)
    b = torch.randn(3, 4, 2, generator=g, dtype=dtype)
    return a, b, b.transpose(-1, -2).contiguous()


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["linalg"], ["solve", "solve_ex", "slogdet"]])
def test_exports_with_both_exporters(dynamo, ops):
    import ortcustom.export as oe

    args = _inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(Linalg(), args, dynamo=dynamo, ops=ops)
    assert {(n.domain, n.op_type) for n in m.graph.node if n.domain} == {
        ("ortcustom", "Solve"), ("ortcustom", "SolveEx"), ("ortcustom", "Slogdet")}
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    got = sess.run(None, {i.name: v.numpy() for i, v in zip(sess.get_inputs(), args)})
    for g, w in zip(got, Linalg()(*args), strict=True):
        assert g.dtype == w.numpy().dtype and g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_cholesky_ex_exports_both_results(dynamo):
    import ortcustom.export as oe

    class CholEx(torch.nn.Module):
        def forward(self, a):
            return torch.linalg.cholesky_ex(a, upper=True)

    a = torch.eye(3).expand(2, 3, 3).clone()
    a[1, 2, 2] = -1.0  # not positive-definite: info 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(CholEx(), (a,), dynamo=dynamo, ops=["cholesky_ex"])
    assert [n.op_type for n in m.graph.node if n.domain == "ortcustom"] == ["CholeskyEx"]
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    l, info = sess.run(None, {sess.get_inputs()[0].name: a.numpy()})
    np.testing.assert_array_equal(info, [0, 3])
    np.testing.assert_array_equal(l[0], np.eye(3, dtype=np.float32))


def test_a_torch_op_of_two_results_exports_and_a_mismatched_mapping_is_refused():
    import ortcustom.export as oe

    class TorchOps(torch.nn.Module):
        def forward(self, a):
            return torch.ops.ortcustom.slogdet(a)

    a = _inputs(torch.float64)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(TorchOps(), (a,), dynamo=True)
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    for g, w in zip(sess.run(None, {sess.get_inputs()[0].name: a.numpy()}), torch.linalg.slogdet(a), strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"aten::linalg_slogdet returns \(Tensor, Tensor\); .* at most one per output "
                                         r"of Solve \(1\)"):
        oe.map_op("aten::linalg_slogdet", Solve, domain="mine")
