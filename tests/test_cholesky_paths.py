"""cholesky: PyTorch's OpInfo samples, the exporters and the other entry points (the kernel's numerics:
test_cholesky.py, which test_isa runs again under each instruction-set pass)."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import Cholesky, CholeskyEx
from ortcustom.testing import make_model

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_cholesky import DOM, assert_factor, run, spd  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pytorch_opinfo_samples(dtype):
    from opinfo import samples

    seen = 0
    for name in ("linalg.cholesky", "linalg.cholesky_ex"):
        for s in samples(name, dtype):
            if s.input.is_complex():
                continue
            upper = int(s.kwargs.get("upper", False))
            a = s.input.numpy()
            want_l, want_info = torch.linalg.cholesky_ex(s.input, upper=bool(upper))
            l, info = run(CholeskyEx, a, upper=upper)
            np.testing.assert_array_equal(info, want_info.numpy())
            ok = info.reshape(-1) == 0
            n = a.shape[-1]
            flat = lambda x: x.reshape(-1, n, n)  # noqa: E731
            if n:
                assert_factor(flat(a)[ok], flat(l)[ok], bool(upper))
            seen += 1
    assert seen >= 5


def test_reference_evaluator():
    from onnx.reference import ReferenceEvaluator

    a = spd(np.random.default_rng(1), (3, 6, 6), np.float64)
    model = make_model(Cholesky, DOM, {"A": a}, attrs={"upper": 1})
    got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(DOM)).run(None, {"A": a})[0]
    np.testing.assert_allclose(got, np.linalg.cholesky(a).transpose(0, 2, 1), atol=1e-12)


class Chol(torch.nn.Module):
    def forward(self, a):
        return torch.linalg.cholesky(a) + torch.linalg.cholesky(a, upper=True) * 2 + torch.cholesky(a)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["linalg"], ["cholesky"]])
def test_exports_with_both_exporters(dynamo, ops):
    import ortcustom.export as oe

    a = torch.from_numpy(spd(np.random.default_rng(2), (4, 5, 5), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(Chol(), (a,), dynamo=dynamo, ops=ops)
    assert {(n.domain, n.op_type) for n in m.graph.node if n.domain} == {("ortcustom", "Cholesky")}
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    np.testing.assert_allclose(sess.run(None, {sess.get_inputs()[0].name: a.numpy()})[0], Chol()(a).numpy(),
                               rtol=1e-4, atol=1e-5)
