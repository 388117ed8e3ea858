"""svd, svdvals: PyTorch's OpInfo samples, the exporters and the other entry points (the kernel's numerics:
test_svd.py, which test_isa runs again under each instruction-set pass)."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import Svd, Svdvals
from ortcustom.testing import make_model

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_svd import DOM, assert_svd, run  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pytorch_opinfo_samples(dtype):
    from opinfo import samples

    seen = 0
    for s in samples("linalg.svd", dtype):
        if s.input.is_complex():
            continue
        full = int(s.kwargs.get("full_matrices", s.args[0] if s.args else True))
        a = s.input.numpy()
        u, sv, vh = run(Svd, a, full_matrices=full)
        assert [x.shape for x in (u, sv, vh)] == [tuple(t.shape) for t in torch.linalg.svd(s.input, full_matrices=bool(full))]
        assert_svd(a, u, sv, vh, full)
        seen += 1
    for s in samples("linalg.svdvals", dtype):
        if s.input.is_complex():
            continue
        a = s.input.numpy()
        want = torch.linalg.svdvals(s.input).numpy()
        got = run(Svdvals, a)
        assert got.shape == want.shape
        eps = np.finfo(a.dtype).eps
        np.testing.assert_allclose(got, want, rtol=0, atol=8 * max(a.shape[-2:], default=1) * eps * max(1, np.abs(want).max(initial=0)))
        seen += 1
    assert seen >= 10


def test_reference_evaluator():
    from onnx.reference import ReferenceEvaluator

    a = np.random.default_rng(1).standard_normal((3, 6, 4))
    for op, attrs in ((Svd, {"full_matrices": 0}), (Svd, {"full_matrices": 1}), (Svdvals, None)):
        model = make_model(op, DOM, {"A": a}, attrs=attrs)
        got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(DOM)).run(None, {"A": a})
        if op is Svdvals:
            np.testing.assert_allclose(got[0], np.linalg.svd(a, compute_uv=False), atol=1e-12)
        else:
            assert_svd(a, *got, attrs["full_matrices"])


class SvdModel(torch.nn.Module):
    def forward(self, a):
        u, s, vh = torch.linalg.svd(a, full_matrices=False)
        uf, sf, vhf = torch.linalg.svd(a)
        # sign-free: the reconstruction, the full bases' projectors, the values
        return ((u * s[..., None, :]) @ vh, uf @ uf.transpose(-1, -2), vhf.transpose(-1, -2) @ vhf, sf + torch.linalg.svdvals(a) * 2)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["linalg"], ["svd", "svdvals"]])
def test_exports_with_both_exporters(dynamo, ops):
    import ortcustom.export as oe

    a = torch.from_numpy(np.random.default_rng(2).standard_normal((4, 6, 5)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(SvdModel(), (a,), dynamo=dynamo, ops=ops)
    assert {(n.domain, n.op_type) for n in m.graph.node if n.domain} == {("ortcustom", "Svd"), ("ortcustom", "Svdvals")}
    fulls = sorted(next((at.i for at in n.attribute if at.name == "full_matrices"), 1)
                   for n in m.graph.node if n.op_type == "Svd")
    assert fulls == [0, 1]
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    got = sess.run(None, {sess.get_inputs()[0].name: a.numpy()})
    for g, w in zip(got, SvdModel()(a)):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=2e-5)


def test_an_svd_node_without_the_mapping_is_not_produced():
    """Without svd in ops=, the exporters fail as stock torch does (test_stock_export.py): nothing silently
    exported another way."""
    import ortcustom.export as oe

    a = torch.ones(2, 3, 3)
    with warnings.catch_warnings(), pytest.raises(Exception):
        warnings.simplefilter("ignore")
        oe.export(SvdModel(), (a,), dynamo=False, ops=["cholesky"])


def test_more_results_than_outputs_is_refused():
    import ortcustom.export as oe

    with pytest.raises(ValueError, match=r"aten::linalg_svd returns \(Tensor, Tensor, Tensor\); .*at most one per "
                                         r"output of Svdvals \(1\)"):
        oe.map_op("aten::linalg_svd", Svdvals, domain="ortcustom", args=("A", None, None))
