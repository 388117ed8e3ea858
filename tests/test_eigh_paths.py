"""eigh, eigvalsh: PyTorch's OpInfo samples, the exporters and the other entry points (the kernel's numerics:
test_eigh.py)."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import Eigh, Eigvalsh
from ortcustom.testing import make_model

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_eigh import DOM, assert_eigh, run  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pytorch_opinfo_samples(dtype):
    from opinfo import samples

    seen = 0
    for name, op in (("linalg.eigh", Eigh), ("linalg.eigvalsh", Eigvalsh)):
        for s in samples(name, dtype):
            if s.input.is_complex():
                continue
            uplo = s.kwargs.get("UPLO", s.args[0] if s.args else "L")
            a = s.input.numpy()
            want = torch.linalg.eigvalsh(s.input, UPLO=uplo).numpy()
            got = run(op, a, UPLO=uplo)
            w = got[0] if op is Eigh else got
            assert w.shape == want.shape
            eps = np.finfo(a.dtype).eps
            n = max(a.shape[-1], 1)
            np.testing.assert_allclose(w, want, rtol=0, atol=16 * n * eps * max(1, np.abs(want).max(initial=0)))
            if op is Eigh:
                assert_eigh(a, *got, uplo.upper())
            seen += 1
    assert seen >= 10


def test_reference_evaluator():
    from onnx.reference import ReferenceEvaluator

    a = np.random.default_rng(1).standard_normal((3, 5, 5))
    for op in (Eigh, Eigvalsh):
        for uplo in ("L", "U"):
            model = make_model(op, DOM, {"A": a}, attrs={"UPLO": uplo})
            got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(DOM)).run(None, {"A": a})
            np.testing.assert_allclose(got[0], torch.linalg.eigvalsh(torch.from_numpy(a), UPLO=uplo).numpy(),
                                       atol=1e-12)


class EighModel(torch.nn.Module):
    def forward(self, a):
        w, v = torch.linalg.eigh(a)
        wu, vu = torch.linalg.eigh(a, UPLO="U")
        # sign-free: the reconstructions, the values
        return ((v * w[..., None, :]) @ v.transpose(-1, -2), (vu * wu[..., None, :]) @ vu.transpose(-1, -2), w,
                torch.linalg.eigvalsh(a) * 2 + wu, torch.linalg.eigvalsh(a, UPLO="U"))


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["linalg"], ["eigh", "eigvalsh"]])
def test_exports_with_both_exporters(dynamo, ops):
    import ortcustom.export as oe

    a = torch.from_numpy(np.random.default_rng(2).standard_normal((4, 6, 6)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(EighModel(), (a,), dynamo=dynamo, ops=ops)
    assert {(n.domain, n.op_type) for n in m.graph.node if n.domain} == {("ortcustom", "Eigh"),
                                                                         ("ortcustom", "Eigvalsh")}
    uplos = sorted(next((at.s.decode() for at in n.attribute if at.name == "UPLO"), "L")
                   for n in m.graph.node if n.domain == "ortcustom")
    assert uplos == ["L", "L", "U", "U"]
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    got = sess.run(None, {sess.get_inputs()[0].name: a.numpy()})
    want = EighModel()(a)
    assert not np.allclose(want[0].numpy(), want[1].numpy())  # the two triangles differ: UPLO matters
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=5e-5)


def test_an_eigh_node_without_the_mapping_is_not_produced():
    """Without eigh in ops=, the exporters fail as stock torch does (test_stock_export.py)."""
    import ortcustom.export as oe

    with warnings.catch_warnings(), pytest.raises(Exception):
        warnings.simplefilter("ignore")
        oe.export(EighModel(), (torch.ones(2, 3, 3),), dynamo=False, ops=["cholesky"])
