"""searchsorted: PyTorch's OpInfo samples, the exporters and the other entry points (the kernel's numerics:
test_searchsorted.py, which test_isa runs again under each instruction-set pass)."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import SearchSorted
from ortcustom.testing import make_model

from helpers import CPU

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

from test_searchsorted import DOM, assert_all_paths, run_session, torch_result  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int32, torch.int64,
                                   torch.uint8])
def test_pytorch_opinfo_samples(dtype):
    from opinfo import samples

    seen = 0
    for s in samples("searchsorted", dtype):
        kw = dict(s.kwargs)
        if kw.pop("out_int32", False):
            continue  # refused: tested below
        seq, values = s.input.numpy(), s.args[0]
        if not isinstance(values, torch.Tensor):
            values = torch.tensor(values, dtype=dtype)
        sorter = kw.get("sorter")
        assert_all_paths(seq, values.numpy(), None if sorter is None else sorter.numpy(), int(kw.get("right", False)),
                         kw.get("side") or "")
        seen += 1
    assert seen >= 50


class Bucketize(torch.nn.Module):
    def forward(self, boundaries, x):
        return torch.searchsorted(boundaries, x, right=True) + torch.searchsorted(boundaries, x, side="left")


class Sorted(torch.nn.Module):
    def forward(self, s, x, sorter):
        return torch.searchsorted(s, x, sorter=sorter)


class OwnOp(torch.nn.Module):
    def forward(self, s, x):
        return torch.ops.ortcustom.searchsorted(s, x, right=1) * 2


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
@pytest.mark.parametrize("ops", [["searchsorted"], None])
def test_exports_with_both_exporters(dynamo, ops):
    import ortcustom.export as oe

    rng = np.random.default_rng(6)
    s = torch.from_numpy(np.sort(rng.standard_normal((2, 30)).astype(np.float32), axis=-1))
    x = torch.from_numpy(rng.standard_normal((2, 7)).astype(np.float32))
    so = torch.from_numpy(np.argsort(rng.standard_normal((2, 30)), axis=-1))
    cases = [(OwnOp(), (s, x))]  # torch.ops.ortcustom.* export whatever ops= says
    if ops is not None:
        cases += [(Bucketize(), (s, x)), (Sorted(), (torch.flip(s, [-1]), x, so))]
    for model, args in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = oe.export(model, args, dynamo=dynamo, **({"ops": ops} if ops else {}))
        assert {(n.domain, n.op_type) for n in m.graph.node if n.domain == "ortcustom"} == {("ortcustom", "SearchSorted")}
        sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
        got = sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)})[0]
        np.testing.assert_array_equal(got, model(*args).numpy())


def test_without_the_mapping_torch_searchsorted_does_not_become_ours():
    import ortcustom.export as oe

    with pytest.raises(Exception):
        oe.export(Bucketize(), (torch.arange(5.0), torch.rand(3)), dynamo=False, ops=["inverse"])


def test_plain_library_runs_it_without_python_ortcustom(tmp_path):
    """ortcustom.get_library_path() registers ortcustom::SearchSorted for any ORT host; here a process
    that imports onnxruntime and numpy only."""
    import textwrap

    from helpers import run_python

    seq, values = np.array([[1, 3, 5, 7], [2, 4, 6, 8]], np.float32), np.array([[0, 5, 9], [4, 4, 1]], np.float32)
    model = make_model(SearchSorted, DOM, {"sorted_sequence": seq, "values": values}, attrs={"side": "right"})
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    code = textwrap.dedent(f"""
        import sys, numpy as np, onnxruntime as ort
        so = ort.SessionOptions()
        so.register_custom_ops_library({ortcustom.get_library_path()!r})
        sess = ort.InferenceSession({str(path)!r}, so, providers=["CPUExecutionProvider"])
        s = np.array({seq.tolist()!r}, np.float32); v = np.array({values.tolist()!r}, np.float32)
        print(sess.run(None, {{"sorted_sequence": s, "values": v}})[0].tolist())
        assert "ortcustom" not in sys.modules
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert eval(r.stdout.strip()) == torch_result(seq, values, side="right").tolist()
