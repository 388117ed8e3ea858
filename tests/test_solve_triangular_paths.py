"""solve_triangular: PyTorch's OpInfo samples, the exporters and the other entry points (the kernel's numerics:
test_solve_triangular.py, which test_isa runs again under each instruction-set pass)."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_solve_triangular import DOM, run, triangular, want  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pytorch_opinfo_samples(dtype):
    from opinfo import samples

    seen = 0
    for s in samples("linalg.solve_triangular", dtype):
        a, b = s.input, s.args[0]
        kw = s.kwargs
        w = torch.linalg.solve_triangular(a, b, **kw).numpy()
        attrs = dict(upper=int(kw["upper"]), left=int(kw.get("left", True)), unitriangular=int(kw.get("unitriangular", False)))
        got = run(a.numpy(), b.contiguous().numpy(), **attrs)
        assert got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=1e-3 if dtype == torch.float32 else 1e-8, atol=1e-4 if dtype == torch.float32 else 1e-9)
        seen += 1
    assert seen >= 20


class Solves(torch.nn.Module):
    def forward(self, a, b):
        return (torch.linalg.solve_triangular(a, b, upper=False)
                + torch.linalg.solve_triangular(a.transpose(-1, -2), b.transpose(-1, -2), upper=True, left=False,
                                             unitriangular=True).transpose(-1, -2))


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["linalg"], ["solve_triangular"]])
def test_exports_with_both_exporters(dynamo, ops):
    import ortcustom.export as oe

    rng = np.random.default_rng(4)
    a = torch.from_numpy(triangular(rng, (3, 5, 5), np.float32, 0))
    b = torch.from_numpy(rng.standard_normal((3, 5, 2)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(Solves(), (a, b), dynamo=dynamo, ops=ops)
    assert {(n.domain, n.op_type) for n in m.graph.node if n.domain} == {("ortcustom", "SolveTriangular")}
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    got = sess.run(None, {i.name: t.numpy() for i, t in zip(sess.get_inputs(), (a, b))})[0]
    np.testing.assert_allclose(got, Solves()(a, b).numpy(), rtol=1e-4, atol=1e-5)


def test_torch_op_traces_with_broadcast_shapes():
    class Own(torch.nn.Module):
        def forward(self, a, b):
            return torch.ops.ortcustom.solve_triangular(a, b, 1)

    import ortcustom.export as oe

    rng = np.random.default_rng(5)
    a = torch.from_numpy(triangular(rng, (2, 1, 4, 4), np.float64, 1))
    b = torch.from_numpy(rng.standard_normal((3, 4, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(Own(), (a, b), dynamo=True)
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    got = sess.run(None, {i.name: t.numpy() for i, t in zip(sess.get_inputs(), (a, b))})[0]
    np.testing.assert_allclose(got, want(a.numpy(), b.numpy(), 1), rtol=1e-10)
