"""Watches for PyTorch learning to export, by itself, the ops ortcustom provides because it cannot
(issue 29): plain torch.onnx.export, no ortcustom mapping, both exporters. Each case asserts today's
failure; when one starts to pass, the README's op list must say the stock path exists."""
import io
import warnings

import pytest
import torch

CALLS = {  # what a user writes, on inputs each accepts
    "torch.linalg.solve": (lambda a, b: torch.linalg.solve(a, b), lambda: (_spd(3), torch.ones(2, 3, 1))),
    "torch.linalg.cholesky": (lambda a: torch.linalg.cholesky(a), lambda: (_spd(3),)),
    "torch.linalg.solve_triangular": (lambda a, b: torch.linalg.solve_triangular(a, b, upper=False),
                                      lambda: (_spd(3).tril(), torch.ones(2, 3, 2))),
    "torch.linalg.qr": (lambda a: torch.linalg.qr(a)[0], lambda: (_spd(3),)),
    "torch.linalg.qr complete": (lambda a: torch.linalg.qr(a[:, :, :2], mode="complete")[0], lambda: (_spd(3),)),
    "torch.linalg.qr r": (lambda a: torch.linalg.qr(a, mode="r")[1], lambda: (_spd(3),)),
    "torch.linalg.eigh": (lambda a: torch.linalg.eigh(a)[0], lambda: (_spd(3),)),
    "torch.linalg.eigh U": (lambda a: torch.linalg.eigh(a, UPLO="U")[1], lambda: (_spd(3),)),
    "torch.linalg.eigvalsh": (lambda a: torch.linalg.eigvalsh(a), lambda: (_spd(3),)),
    "torch.linalg.svd": (lambda a: torch.linalg.svd(a)[1], lambda: (_spd(3),)),
    "torch.linalg.svdvals": (lambda a: torch.linalg.svdvals(a), lambda: (_spd(3),)),
    "torch.linalg.slogdet": (lambda a: torch.linalg.slogdet(a)[1], lambda: (_spd(3),)),
    "torch.searchsorted": (lambda s, v: torch.searchsorted(s, v), lambda: (torch.arange(5.0), torch.rand(2, 3) * 5)),
}


def _spd(n):
    a = torch.randn(2, n, n, generator=torch.Generator().manual_seed(0))
    return a @ a.mT + n * torch.eye(n)


class _Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_no_stock_export_path_yet(name, dynamo):
    fn, args = CALLS[name]
    model, inputs = _Call(fn), args()
    exported = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if dynamo:
                torch.onnx.export(model, inputs, dynamo=True, verbose=False)
            else:
                torch.onnx.export(model, inputs, io.BytesIO(), dynamo=False)
        except Exception:
            exported = False
    exporter = "dynamo" if dynamo else "TorchScript"
    assert not exported, f"a stock export path now exists for {name} ({exporter} exporter): say so in README"
