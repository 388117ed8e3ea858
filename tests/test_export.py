"""ortcustom.export: PyTorch models to ONNX with both exporters, run by ORT with our ops, checked
against PyTorch (rtol 1e-3, atol 1e-5)."""
import io

import numpy as np
import onnx
import onnxruntime as ort
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")

import ortcustom  # noqa: E402
import ortcustom.export as oe  # noqa: E402
from ortcustom.export import mapping as mapping_mod  # noqa: E402
from ortcustom.ops import GroupNorm, Inverse  # noqa: E402
from ortcustom.testing import max_ir_version  # noqa: E402

from helpers import CPU, EXPORTERS, quiet_exporters, torch_well_conditioned  # noqa: E402,F401

RTOL, ATOL = 1e-3, 1e-5


def custom_nodes(m):
    return [(n.domain, n.op_type) for n in m.graph.node if n.domain not in ("", "ai.onnx")]


def run(m, *args):
    """Runs model `m` in ORT with the domains it needs; returns its outputs."""
    domains = oe.domains(m)
    so = ortcustom.session_options(*domains) if domains else ort.SessionOptions()
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=CPU)
    return sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)})


def check(model, args, m, n_out=1):
    with torch.no_grad():
        want = model(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = run(m, *args)
    assert len(got) == len(want) == n_out
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=RTOL, atol=ATOL)
    return got


class InversePlusX(torch.nn.Module):
    def forward(self, x):
        return torch.inverse(x) + x


class LinalgInv(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.inv(x) * 2


class ConvGroupNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.gn = torch.nn.GroupNorm(4, 8)
        self.conv2 = torch.nn.Conv2d(8, 4, 1)
        self.gn2 = torch.nn.GroupNorm(2, 4, affine=False)

    def forward(self, x):
        return self.gn2(self.conv2(torch.relu(self.gn(self.conv(x)))))


def test_plain_torch_export_fails_as_the_issue_says():
    # the reason for ortcustom.export: torch 2.13 alone exports torch.inverse with neither exporter
    with pytest.raises(Exception, match=r"aten::linalg_inv"):
        torch.onnx.export(InversePlusX(), (torch_well_conditioned((3, 3)),), io.BytesIO(), dynamo=False)
    with pytest.raises(Exception, match=r"linalg_inv_ex"):
        torch.onnx.export(InversePlusX(), (torch_well_conditioned((3, 3)),), dynamo=True, verbose=False)


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("shape", [(3, 3), (4, 5, 5)])
def test_inverse_plus_x(dynamo, shape):
    x = torch_well_conditioned(shape)
    m = oe.export(InversePlusX(), (x,), dynamo=dynamo)
    assert isinstance(m, onnx.ModelProto)
    assert custom_nodes(m) == [("com.microsoft", "Inverse")]
    assert m.ir_version <= max_ir_version()
    assert [(d.name, d.version, [o.name for o in d.ops]) for d in oe.domains(m)] == [("com.microsoft", 1, ["Inverse"])]
    check(InversePlusX(), (x,), m)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_inverse_dynamic_batch(dynamo):
    x = torch_well_conditioned((4, 5, 5))
    if dynamo:
        kw = {"dynamic_shapes": {"x": {0: torch.export.Dim("batch")}}}
    else:
        kw = {"dynamic_axes": {"x": {0: "batch"}}}
    m = oe.export(InversePlusX(), (x,), dynamo=dynamo, **kw)
    dim0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim0.dim_param and not dim0.HasField("dim_value")
    for batch in (1, 4, 9):
        check(InversePlusX(), (torch_well_conditioned((batch, 5, 5), seed=batch),), m)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_linalg_inv_and_file_output(dynamo, tmp_path):
    x = torch_well_conditioned((2, 4, 4))
    path = tmp_path / "inv.onnx"
    m = oe.export(LinalgInv(), (x,), str(path), dynamo=dynamo)
    assert custom_nodes(m) == [("com.microsoft", "Inverse")]
    assert onnx.load(str(path)).SerializeToString() == m.SerializeToString()
    buf = io.BytesIO()
    oe.export(LinalgInv(), (x,), buf, dynamo=dynamo)
    assert custom_nodes(onnx.load_from_string(buf.getvalue())) == [("com.microsoft", "Inverse")]
    check(LinalgInv(), (x,), m)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_conv_group_norm_network(dynamo):
    torch.manual_seed(0)
    net = ConvGroupNorm().eval()
    with torch.no_grad():  # non-trivial affine parameters
        net.gn.weight.uniform_(0.5, 2)
        net.gn.bias.uniform_(-1, 1)
    x = torch.randn(2, 3, 8, 8)
    m = oe.export(net, (x,), dynamo=dynamo, ops=["inverse", "group_norm"])
    assert custom_nodes(m) == [("ortcustom", "GroupNorm")] * 2
    gn = [n for n in m.graph.node if n.op_type == "GroupNorm"]
    assert [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}["num_groups"] for n in gn] == [4, 2]
    assert len(gn[0].input) == 4 and gn[0].input[1] == ""  # num_groups as attribute; scale and bias
    assert len(gn[1].input) == 1  # affine=False: no scale, no bias
    assert [(d.name, [o.name for o in d.ops]) for d in oe.domains(m)] == [("ortcustom", ["GroupNorm"])]
    check(net, (x,), m)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_group_norm_only_when_asked(dynamo):
    # by default group_norm stays ONNX's (ORT's own); the model still runs and matches
    net = ConvGroupNorm().eval()
    x = torch.randn(1, 3, 6, 6)
    m = oe.export(net, (x,), dynamo=dynamo)
    assert custom_nodes(m) == [] and oe.domains(m) == []
    check(net, (x,), m)


class GroupNormEps(torch.nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(4))

    def forward(self, x):
        return torch.nn.functional.group_norm(x, 2, self.weight, None, eps=self.eps)


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("eps", [-0.5, float("nan")])
def test_invalid_attribute_is_refused_at_export_naming_op_attribute_and_value(dynamo, eps):
    # the declaration's check (epsilon >= 0), as ORT would apply it at session creation
    with pytest.raises(oe.InvalidAttribute, match=rf"^exporting aten::group_norm as ortcustom::GroupNorm: GroupNorm "
                                                  rf"attribute epsilon={eps!r} is invalid: must be >= 0 \(from "
                                                  rf"aten::group_norm argument 'eps'\)$"):
        oe.export(GroupNormEps(eps), (torch.randn(2, 4, 3),), dynamo=dynamo, ops=["group_norm"])


class TorchOpEps(torch.nn.Module):
    """A torch op made from a declaration (torch_ops.register), given an attribute its check refuses."""

    def forward(self, x):
        return torch.ops.ortcustom.group_norm(x, 2, None, None, -0.5)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_invalid_attribute_of_a_torch_op_is_the_same_error_with_both_exporters(dynamo):
    # dynamo traces the op's fake and checks in the translation; TorchScript runs its eager kernel
    import ortcustom.torch_ops  # noqa: F401

    with pytest.raises(oe.InvalidAttribute, match=r"^(exporting )?ortcustom::group_norm(: | as ortcustom::GroupNorm: )"
                                                  r"GroupNorm attribute epsilon=-0.5 is invalid: must be >= 0 \(from "
                                                  r"ortcustom::group_norm argument 'eps'\)$"):
        oe.export(TorchOpEps(), (torch.randn(2, 4, 3),), dynamo=dynamo)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_valid_attribute_is_coerced_to_its_declared_kind(dynamo):
    m = oe.export(GroupNormEps(0), (torch.randn(2, 4, 3),), dynamo=dynamo, ops=["group_norm"])  # an int eps
    (gn,) = [n for n in m.graph.node if n.op_type == "GroupNorm"]
    eps = [a for a in gn.attribute if a.name == "epsilon"]
    assert [(a.type, a.f) for a in eps] == [(onnx.AttributeProto.FLOAT, 0.0)]


class TorchLibraryModel(torch.nn.Module):
    """Written with our ops as PyTorch operators: runs our kernels in eager PyTorch."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 6, 3, padding=1)
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 6))
        self.bias = torch.nn.Parameter(torch.linspace(-1, 1, 6))

    def forward(self, x, a):
        y = torch.ops.ortcustom.group_norm(self.conv(x), 3, self.weight, self.bias, 1e-5)
        return y, torch.ops.ortcustom.inverse(a) + a


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_torch_library_ops_export_with_nothing_to_write(dynamo):
    import ortcustom.torch_ops  # noqa: F401

    torch.manual_seed(1)
    model = TorchLibraryModel()
    args = (torch.randn(2, 2, 5, 5), torch_well_conditioned((3, 4, 4)))
    with torch.no_grad():  # eager PyTorch, our kernels, match PyTorch's own ops
        y, inv = model(*args)
        torch.testing.assert_close(
            y, torch.nn.functional.group_norm(model.conv(args[0]), 3, model.weight, model.bias, 1e-5),
            rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(inv, torch.inverse(args[1]) + args[1], rtol=1e-4, atol=1e-5)
    m = oe.export(model, args, dynamo=dynamo, ops=())  # ops=(): no aten mapping; ours still export
    assert sorted(custom_nodes(m)) == [("com.microsoft", "Inverse"), ("ortcustom", "GroupNorm")]
    got = check(model, args, m, n_out=2)
    # one kernel, two runtimes: the inverse is bit-identical
    np.testing.assert_array_equal(got[1], inv.numpy())


# The classic flow: a custom op of the user's (here a torch.library.custom_op implemented with
# PyTorch; in real life often a C++ extension), mapped to our GroupNorm in the user's domain.
@torch.library.custom_op("mynamespace::custom_group_norm", mutates_args=())
def custom_group_norm(X: torch.Tensor, num_groups: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor,
                      eps: float) -> torch.Tensor:
    return torch.nn.functional.group_norm(X, int(num_groups), scale, bias, eps)


@custom_group_norm.register_fake
def _(X, num_groups, scale, bias, eps):
    return torch.empty_like(X)


class UsesCustomGroupNorm(torch.nn.Module):
    def forward(self, x, num_groups, scale, bias):
        return torch.ops.mynamespace.custom_group_norm(x, num_groups, scale, bias, 1e-4) * 2


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_users_custom_op_to_named_domain(dynamo, monkeypatch):
    mp = oe.map_op("mynamespace::custom_group_norm", GroupNorm, domain="mydomain", name="mygroupnorm")
    g = torch.Generator().manual_seed(3)
    args = (torch.randn(2, 6, 7, generator=g), torch.tensor(3), torch.rand(6, generator=g) + 0.5,
            torch.randn(6, generator=g))
    m = oe.export(UsesCustomGroupNorm(), args, dynamo=dynamo, ops=[mp])
    assert custom_nodes(m) == [("mydomain", "mygroupnorm")]
    node = m.graph.node[[n.op_type for n in m.graph.node].index("mygroupnorm")]
    assert len(node.input) == 4 and "" not in node.input  # num_groups from the tensor input
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}["epsilon"] == pytest.approx(1e-4)
    ds = oe.domains(m)
    assert [(d.name, [o.name for o in d.ops]) for d in ds] == [("mydomain", ["mygroupnorm"])]
    assert ds[0].ops[0].native == "group_norm"  # our kernel, under the user's name
    check(UsesCustomGroupNorm(), args, m)
    # another process knows nothing of the mapping: the model's metadata says which op it is
    monkeypatch.setattr(mapping_mod, "_known", {})
    assert [(d.name, [o.name for o in d.ops]) for d in oe.domains(m)] == [("mydomain", ["mygroupnorm"])]
    check(UsesCustomGroupNorm(), args, m)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_domain_override(dynamo):
    x = torch_well_conditioned((2, 3, 3))
    net = ConvGroupNorm().eval()
    m = oe.export(InversePlusX(), (x,), dynamo=dynamo, ops=[oe.inverse(domain="my.inverse")])
    assert custom_nodes(m) == [("my.inverse", "Inverse")]
    check(InversePlusX(), (x,), m)
    xi = torch.randn(1, 3, 5, 5)
    m = oe.export(net, (xi,), dynamo=dynamo, ops=[oe.group_norm(domain="my.norms")])
    assert custom_nodes(m) == [("my.norms", "GroupNorm")] * 2
    check(net, (xi,), m)


def test_public_pieces_with_torch_onnx_export_directly():
    x = torch_well_conditioned((3, 3))
    # dynamo: the translation table
    prog = torch.onnx.export(InversePlusX(), (x,), dynamo=True, verbose=False,
                             custom_translation_table=oe.custom_translation_table())
    assert custom_nodes(prog.model_proto) == [("com.microsoft", "Inverse")]
    assert torch.ops.aten.inverse.default in oe.custom_translation_table()
    assert torch.ops.aten.group_norm.default in oe.custom_translation_table(["group_norm"])
    # TorchScript: the symbolics, registered for a block, then restored
    table = oe.symbolics.symbolics(["inverse", "group_norm"])
    assert {"aten::inverse", "aten::linalg_inv", "aten::group_norm", "ortcustom::inverse",
            "ortcustom::group_norm"} <= set(table)
    buf = io.BytesIO()
    with oe.registered_symbolics(opset_version=17):
        torch.onnx.export(InversePlusX(), (x,), buf, dynamo=False, opset_version=17)
    m = onnx.load_from_string(buf.getvalue())
    assert custom_nodes(m) == [("com.microsoft", "Inverse")]
    check(InversePlusX(), (x,), ortcustom.testing.for_runtime(m))
    with pytest.raises(Exception, match=r"aten::linalg_inv"):  # unregistered again
        torch.onnx.export(InversePlusX(), (x,), io.BytesIO(), dynamo=False, opset_version=17)


def test_map_op_validates():
    with pytest.raises(ValueError, match="no PyTorch operator 'nope::missing'"):
        oe.map_op("nope::missing", GroupNorm, domain="d")
    with pytest.raises(ValueError, match="has no input or attribute 'gamma'"):
        oe.map_op("mynamespace::custom_group_norm", GroupNorm, domain="d", args=("X", "num_groups", "gamma"))
    with pytest.raises(ValueError, match="nothing feeds Inverse's required"):
        oe.map_op("aten::group_norm", Inverse, domain="d", args=(None,))
    with pytest.raises(ValueError, match="ONNX's own domain"):
        oe.map_op("aten::inverse", Inverse, domain="ai.onnx")
    with pytest.raises(ValueError, match="unknown built-in mapping 'softmax'"):
        oe.export(InversePlusX(), (torch_well_conditioned((2, 2)),), ops=["softmax"])
    with pytest.raises(ValueError, match="aten::inverse is mapped twice"):
        oe.export(InversePlusX(), (torch_well_conditioned((2, 2)),), ops=["inverse", oe.inverse(domain="x")])


def test_domains_ignores_foreign_ops():
    from onnx import TensorProto, helper

    nodes = [helper.make_node("FusedMatMul", ["a", "a"], ["b"], domain="com.microsoft"),
             helper.make_node("Inverse", ["b"], ["c"], domain="com.microsoft"),
             helper.make_node("Relu", ["c"], ["d"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 2])],
                          [helper.make_tensor_value_info("d", TensorProto.FLOAT, [2, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    assert [(d.name, [o.name for o in d.ops]) for d in oe.domains(m)] == [("com.microsoft", ["Inverse"])]


def test_a_mapping_that_feeds_no_required_attribute_is_refused():
    """Bug: only required inputs checked: a node without its required attribute, refused by ORT later."""
    from ortcustom import Attr, Input, Op, Output

    need = Op("Need", [Input("X", "float")], [Output("Y", "float", shape="X")], attrs=[Attr("k", "int")],
              compute=lambda X, k: X)
    with pytest.raises(ValueError, match=r"mapping aten::inverse to test.need::Need: nothing feeds Need's required \['k'\]"):
        oe.map_op("aten::inverse", need, domain="test.need")
