"""qr: PyTorch's OpInfo samples, the exporters, the plain library and the reference evaluator (the kernel's
numerics: test_qr.py, which test_isa runs again under each instruction-set pass)."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import Qr
from ortcustom.testing import make_model

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_qr import DOM, MODES, assert_like_torch, assert_qr, run, torch_qr  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pytorch_opinfo_samples(dtype):
    """linalg.qr's samples (random, empty batches and matrices, every M, N), each in every mode: torch's shapes,
    torch's factors to cond(A) times the bound, Q R = A and Q orthonormal."""
    from opinfo import samples

    seen = 0
    for s in samples("linalg.qr", dtype):
        a = s.input.numpy()
        cond = np.linalg.cond(a.astype(np.float64)).max() if a.size and a.shape[-1] == a.shape[-2] else 10.0
        for mode in MODES:
            want = torch_qr(a, mode)
            got = run(a, mode)
            assert [x.shape for x in got] == [x.shape for x in want]
            assert_qr(a, *got, mode)
            assert_like_torch(got, want, a, c=8 * max(cond, 1.0))
        seen += 1
    assert seen >= 30


def test_reference_evaluator():
    from onnx.reference import ReferenceEvaluator

    a = np.random.default_rng(1).standard_normal((3, 6, 4))
    for mode in MODES:
        model = make_model(Qr, DOM, {"A": a}, attrs={"mode": mode})
        got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(DOM)).run(None, {"A": a})
        assert_qr(a, *got, mode)
        assert_like_torch(got, torch_qr(a, mode), a)


def test_the_plain_library_checks_the_mode_itself():
    """Without Python (ORT loading ortcustom's plain library), the kernel's create refuses a bad mode, naming the op,
    the node and the attribute, and runs a good one as the Python module does."""
    a = np.random.default_rng(4).standard_normal((2, 5, 3)).astype(np.float32)
    model = make_model(Qr, DOM, {"A": (np.float32, [2, 5, 3])}, attrs={"mode": "complete"})
    so = ort.SessionOptions()
    so.register_custom_ops_library(ortcustom.get_library_path())
    got = ort.InferenceSession(model.SerializeToString(), so, providers=CPU).run(None, {"A": a})
    for g, w in zip(got, kernels.qr(a, mode="complete")):
        np.testing.assert_array_equal(g, w)
    bad = make_model(Qr, DOM, {"A": (np.float32, [2, 5, 3])}, attrs={"mode": "full"})
    so = ort.SessionOptions()
    so.register_custom_ops_library(ortcustom.get_library_path())
    with pytest.raises(Exception, match=r"Qr \(node 'n0'\): attribute mode can only be 'reduced', 'complete' or 'r', "
                                        r"got 'full'"):
        ort.InferenceSession(bad.SerializeToString(), so, providers=CPU)


class QrModel(torch.nn.Module):
    def forward(self, a):
        q, r = torch.linalg.qr(a)
        qc, rc = torch.linalg.qr(a, mode="complete")
        qn, rr = torch.linalg.qr(a, mode="r")
        return q, r, qc, rc, qn, rr, q @ r


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["linalg"], ["qr"]])
@pytest.mark.parametrize("shape", [(4, 6, 5), (3, 5, 6)])
def test_exports_with_both_exporters(dynamo, ops, shape):
    import ortcustom.export as oe

    a = torch.from_numpy(np.random.default_rng(2).standard_normal(shape).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(QrModel(), (a,), dynamo=dynamo, ops=ops)
    assert {(n.domain, n.op_type) for n in m.graph.node if n.domain} == {("ortcustom", "Qr")}
    modes = sorted(next((at.s.decode() for at in n.attribute if at.name == "mode"), "reduced")
                   for n in m.graph.node if n.op_type == "Qr")
    assert modes == ["complete", "r", "reduced"]
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    got = sess.run(None, {sess.get_inputs()[0].name: a.numpy()})
    want = QrModel()(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):  # the same factors as torch's (LAPACK's conventions)
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.numpy(), rtol=0, atol=2e-5)


def test_a_qr_node_without_the_mapping_is_not_produced():
    """Without qr in ops=, the exporters fail as stock torch does (test_stock_export.py): nothing silently exported
    another way."""
    import ortcustom.export as oe

    a = torch.ones(2, 3, 3)
    with warnings.catch_warnings(), pytest.raises(Exception):
        warnings.simplefilter("ignore")
        oe.export(QrModel(), (a,), dynamo=False, ops=["svd"])


def test_a_bad_mode_is_refused_at_export():
    import ortcustom.export as oe

    class Bad(torch.nn.Module):
        def forward(self, a):
            return torch.ops.ortcustom.qr(a, "full")

    with warnings.catch_warnings(), pytest.raises(Exception, match=r"mode can only be 'reduced', 'complete' or 'r'"):
        warnings.simplefilter("ignore")
        oe.export(Bad(), (torch.ones(3, 3),), dynamo=False, ops=["qr"])


def test_dynamo_export_with_a_dynamic_batch():
    """The declared shape rules give the exported model a symbolic batch dim; another batch size runs."""
    import ortcustom.export as oe

    class M(torch.nn.Module):
        def forward(self, a):
            return torch.linalg.qr(a, mode="complete")

    a = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = oe.export(M(), (a,), dynamo=True, ops=["qr"], dynamic_shapes=({0: torch.export.Dim("b")},))
    dims = [[d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output]
    assert dims == [["b", 6, 6], ["b", 6, 5]]
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    x = np.random.default_rng(5).standard_normal((7, 6, 5)).astype(np.float32)
    got = sess.run(None, {sess.get_inputs()[0].name: x})
    for g, w in zip(got, torch.linalg.qr(torch.from_numpy(x), mode="complete")):
        np.testing.assert_allclose(g, w.numpy(), rtol=0, atol=2e-5)


def test_float16_is_refused_as_torch_refuses_it():
    """torch 2.13 has no CPU qr for float16 (nor bfloat16): neither does Qr; the refusal names the op and the types."""
    a = np.eye(3, dtype=np.float16)
    with pytest.raises(TypeError, match=r"Qr: A has dtype float16; accepts float32, float64"):
        kernels.qr(a)
    with pytest.raises(RuntimeError, match="not implemented for 'Half'"):
        torch.linalg.qr(torch.from_numpy(a))
    model = make_model(Qr, DOM, {"A": (np.float16, [3, 3])})
    with pytest.raises(Exception, match=r"Qr \(node 'n0'\): no kernel for input types \(A: float16\); Qr accepts "
                                        r"\(A: T\) with T in \{float, double\}"):
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
