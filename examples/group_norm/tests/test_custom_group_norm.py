"""The tutorial's group norm end to end: one kernel, run by ONNX Runtime and by eager PyTorch,
equal to torch.nn.functional.group_norm, and exported by both exporters to mydomain::mygroupnorm."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import ortcustom
import ortcustom.export
from ortcustom.testing import make_model

import custom_group_norm
import custom_group_norm.torch_ops  # noqa: F401  (torch.ops.mynamespace.custom_group_norm)
from custom_group_norm import MyGroupNorm

CPU = ["CPUExecutionProvider"]
EPS = 2.0 ** -16  # a float32 value: ONNX's float attributes are float32, a direct call's are not


def inputs(shape=(3, 6, 4, 5), groups=3, dtype=torch.float32, seed=0, groups_dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    c = shape[1]
    return (torch.randn(shape, generator=g, dtype=dtype), torch.tensor([groups], dtype=groups_dtype),
            torch.rand(c, generator=g, dtype=dtype) + 0.5, torch.randn(c, generator=g, dtype=dtype))


def expected(x, num_groups, scale, bias, eps):
    """torch.nn.functional.group_norm, computed in float64 (torch's float32 one rounds more than ours)."""
    y = torch.nn.functional.group_norm(x.double(), int(num_groups.item()), scale.double(), bias.double(), eps)
    return y.to(x.dtype)


def ort_run(args, eps):
    feeds = dict(zip(["X", "num_groups", "scale", "bias"], (a.numpy() for a in args)))
    model = make_model(MyGroupNorm, custom_group_norm.domain, feeds, attrs={"epsilon": eps})
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(custom_group_norm.domain),
                                providers=CPU)
    return torch.from_numpy(sess.run(None, feeds)[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,groups", [((3, 2, 1, 2), 2), ((3, 6, 4, 5), 3), ((2, 8, 100), 1), ((4, 4), 4)])
@pytest.mark.parametrize("groups_dtype", [torch.float32, torch.int64])
def test_ort_and_eager_equal_torch_group_norm(dtype, shape, groups, groups_dtype):
    args = inputs(shape, groups, dtype, groups_dtype=groups_dtype)
    eager = torch.ops.mynamespace.custom_group_norm(*args, EPS)
    in_ort = ort_run(args, EPS)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(eager, expected(*args, EPS), **tol)
    assert torch.equal(in_ort, eager)  # one kernel, two runtimes


def test_the_tutorials_inputs():
    x = torch.randn(3, 2, 1, 2)
    args = (x, torch.tensor([2.0]), torch.tensor([2.0, 1.0]), torch.tensor([1.0, 0.0]))
    torch.testing.assert_close(ort_run(args, 0.0), expected(*args, 0.0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("groups,match", [(4, "num_groups must be a positive whole number dividing the 6 "
                                                "channels of X, got 4"),
                                          (1.5, "got 1.5"), (0, "got 0")])
def test_bad_num_groups_refused(groups, match):
    x, _, scale, bias = inputs()
    with pytest.raises(Exception, match=f"mygroupnorm.*{match}"):
        ort_run((x, torch.tensor([groups], dtype=torch.float32), scale, bias), 1e-5)
    with pytest.raises(ValueError, match=f"mygroupnorm.*{match}"):
        torch.ops.mynamespace.custom_group_norm(x, torch.tensor([groups], dtype=torch.float32), scale, bias, 1e-5)


def test_bad_scale_refused():
    x, g, scale, bias = inputs()
    with pytest.raises(ValueError, match=r"mygroupnorm.*input scale has shape \(5,\); expected \(C,\)"):
        torch.ops.mynamespace.custom_group_norm(x, g, scale[:5], bias, 1e-5)


class Model(torch.nn.Module):
    def forward(self, x, num_groups, scale, bias):
        return torch.ops.mynamespace.custom_group_norm(x, num_groups, scale, bias, EPS) * 2


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_export_to_mydomain_mygroupnorm(dynamo):
    args = inputs()
    m = ortcustom.export.export(Model(), args, dynamo=dynamo, ops=[custom_group_norm.domain])
    (node,) = [n for n in m.graph.node if n.domain == "mydomain"]
    assert node.op_type == "mygroupnorm" and len(node.input) == 4
    (eps,) = [a for a in node.attribute if a.name == "epsilon"]
    assert eps.type == onnx.AttributeProto.FLOAT and eps.f == EPS
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(custom_group_norm.domain),
                                providers=CPU)
    feeds = dict(zip([i.name for i in sess.get_inputs()], (a.numpy() for a in args)))
    (got,) = sess.run(None, feeds)
    want = Model()(*args)
    assert torch.equal(torch.from_numpy(got), want)
    torch.testing.assert_close(want, expected(*args, EPS) * 2, rtol=1e-6, atol=1e-6)


def test_info_lists_the_installed_domain():
    """The package declares its domain (entry point group ortcustom.domains): `info` lists its op."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ortcustom", "info"], capture_output=True, text=True, check=True).stdout
    assert "mydomain" in out and "mygroupnorm" in out and "custom_group_norm" in out
