"""A user's op exported from PyTorch, as a new user writes one: torch.bucketize as Bucketize.
Outputs whose type is not their shape source's carry their declared element type (fixed, or their
type constraint's binding), with both exporters, for a native and a Python op, run by ORT and equal
to PyTorch; a torch name with several overloads maps those that take its arguments."""
import pathlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")

import ortcustom  # noqa: E402
import ortcustom.export as oe  # noqa: E402
from ortcustom import Attr, Input, Op, Output  # noqa: E402
from ortcustom.export import symbolics  # noqa: E402

from helpers import CPU, EXPORTERS, compile_kernels, quiet_exporters  # noqa: E402,F401

HERE = pathlib.Path(__file__).parent


def _bucketize(X, boundaries, right=0):
    return np.searchsorted(boundaries, X, side="right" if right else "left").astype(np.int64)


def bucketize_op(**kernel):
    """torch.bucketize's op: X float/double, boundaries of X's type -> Y int64 of X's shape."""
    return Op("Bucketize", inputs=[Input("X", "T"), Input("boundaries", "T")],
              outputs=[Output("Y", "int64", shape="X")], types={"T": ("float", "double")},
              attrs=[Attr("right", "int", default=0, choices=(0, 1))], **kernel)


@pytest.fixture(scope="module")
def native_bucketize(tmp_path_factory):
    so = compile_kernels([HERE / "native" / "bucketize.cpp"], tmp_path_factory.mktemp("bucketize") / "bucketize.so")
    return bucketize_op(native=ortcustom.load_kernels(so)["bucketize"])


class Buckets(torch.nn.Module):
    def forward(self, x, b):  # int64 onwards: ORT refuses the model if Y's type is not
        return torch.bucketize(x, b, right=True) * 2 + torch.bucketize(x, b)


def run(m, args):
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*oe.domains(m)), providers=CPU)
    return sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)})


def elem_types(m, op_type):
    """The element types the model gives its `op_type` nodes' outputs (value_info, graph outputs)."""
    outs = {o for n in m.graph.node if n.op_type == op_type for o in n.output}
    return {v.type.tensor_type.elem_type for v in list(m.graph.value_info) + list(m.graph.output) if v.name in outs}


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("kernel, dtype", [("python", torch.float32), ("native", torch.float64)])
def test_output_of_a_fixed_type_other_than_its_shape_source(native_bucketize, kernel, dtype, dynamo):
    op = bucketize_op(compute=_bucketize) if kernel == "python" else native_bucketize
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, generator=g, dtype=dtype)
    b = torch.tensor([-1.0, -0.25, 0.0, 0.5, 1.0], dtype=dtype)
    x[0, :3] = b[1:4]  # on a boundary: right=0 and right=1 differ
    m = oe.export(Buckets(), (x, b), dynamo=dynamo,
                  ops=[oe.map_op("aten::bucketize.Tensor", op, domain="test.types", args=("X", "boundaries", None,
                                                                                          "right"))])
    assert [n.op_type for n in m.graph.node].count("Bucketize") == 2
    assert elem_types(m, "Bucketize") <= {onnx.TensorProto.INT64}
    (y,) = run(m, (x, b))
    want = Buckets()(x, b).numpy()
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, want)


# ---- an output typed by a constraint that its shape source does not bind ------------------------

def _fill_like(X, V):
    return np.full(X.shape, V.reshape(-1)[0], dtype=V.dtype)


FillLike = Op("FillLike", inputs=[Input("X", "T"), Input("V", "U")], outputs=[Output("Y", "U", shape="X")],
              types={"T": ("float", "double"), "U": ("int32", "int64", "float")}, compute=_fill_like)


@torch.library.custom_op("ortcustom_test::fill_like", mutates_args=())
def fill_like(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.full(x.shape, v.reshape(-1)[0].item(), dtype=v.dtype)


@fill_like.register_fake
def _(x, v):
    return torch.empty(x.shape, dtype=v.dtype)


class Filled(torch.nn.Module):
    def forward(self, x, v):
        return torch.ops.ortcustom_test.fill_like(x, v) + 1


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("vtype", [torch.int32, torch.int64])
def test_output_typed_by_the_constraint_of_another_input(dynamo, vtype):
    x, v = torch.randn(2, 3), torch.tensor([7], dtype=vtype)
    m = oe.export(Filled(), (x, v), dynamo=dynamo,
                  ops=[oe.map_op("ortcustom_test::fill_like", FillLike, domain="test.types")])
    want_type = {torch.int32: onnx.TensorProto.INT32, torch.int64: onnx.TensorProto.INT64}[vtype]
    assert elem_types(m, "FillLike") <= {want_type}
    (y,) = run(m, (x, v))
    want = Filled()(x, v).numpy()
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(y, want)


class _Value:
    """A TorchScript value as a symbolic function sees it: only its type() is read."""

    def __init__(self, t):
        self._t = t

    def type(self):
        return t if (t := self._t) is not None else torch._C.TensorType.get()


def _typed(shape, dtype=None):
    t = torch._C.TensorType.get().with_sizes(list(shape))
    return _Value(t.with_dtype(dtype) if dtype is not None else t)


def test_torchscript_output_type_rule():
    # fixed type: that type, the shape source's shape
    t = symbolics._output_type(bucketize_op(compute=_bucketize), [_typed((2, 3), torch.float64), _typed((4,))])
    assert (t.dtype(), t.varyingSizes()) == (torch.int64, [2, 3])
    # a constraint: its binding from whichever input of that constraint has a known type
    t = symbolics._output_type(FillLike, [_typed((5,), torch.float32), _typed((1,), torch.int32)])
    assert (t.dtype(), t.varyingSizes()) == (torch.int32, [5])
    # not known: the shape alone, the element type left to ONNX/ORT's inference (never X's)
    t = symbolics._output_type(FillLike, [_typed((5, 2), torch.float32), _typed((1,))])
    assert (t.dtype(), t.varyingSizes()) == (None, [5, 2])
    # a constraint with one type is bound
    one = Op("One", inputs=[Input("X", "T")], outputs=[Output("Y", "U", shape="X")],
             types={"T": ("float",), "U": ("int8",)}, compute=lambda X: X.astype(np.int8))
    assert symbolics._output_type(one, [_typed((3,))]).dtype() == torch.int8


# ---- a torch name with several overloads --------------------------------------------------------

FloatBucketize = Op("Bucketize", inputs=[Input("X", "float"), Input("boundaries", "float")],
                    outputs=[Output("Y", "int64", shape="X")], attrs=[Attr("right", "int", default=0)],
                    compute=_bucketize)


class ScalarAndTensor(torch.nn.Module):
    def forward(self, b):  # aten::bucketize.Scalar, then aten::bucketize.Tensor
        return torch.bucketize(0.3, b, right=True) + torch.bucketize(b * 2, b)


def names(m):
    return [f"{ov._schema.name}.{ov._overloadname}" for ov in m.overloads]


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_a_name_maps_each_overload_that_takes_its_arguments(dynamo):
    # X of a fixed type can take a scalar too: .Tensor and .Scalar both map (out= variants never)
    mp = oe.map_op("aten::bucketize", FloatBucketize, domain="test.types", args=("X", "boundaries", None, "right"))
    assert names(mp) == ["aten::bucketize.Tensor", "aten::bucketize.Scalar"]
    assert "aten::bucketize.Scalar" in repr(mp)
    b = torch.tensor([-1.0, 0.0, 0.3, 1.0])
    m = oe.export(ScalarAndTensor(), (b,), dynamo=dynamo, ops=[mp])
    assert [n.op_type for n in m.graph.node].count("Bucketize") == 2
    (y,) = run(m, (b,))
    np.testing.assert_array_equal(y, ScalarAndTensor()(b).numpy())


def test_overloads_that_cannot_be_mapped_are_left_out_or_named():
    # X typed by a constraint takes no scalar: .Scalar is left out
    mp = oe.map_op("aten::bucketize", bucketize_op(compute=_bucketize), domain="test.types",
                   args=("X", "boundaries", None, "right"))
    assert names(mp) == ["aten::bucketize.Tensor"]
    with pytest.raises(ValueError, match=r"aten::bucketize argument 'self' \(number\) is a scalar; it can feed only "
                                         r"an input of a fixed element type"):
        oe.map_op("aten::bucketize.Scalar", bucketize_op(compute=_bucketize), domain="test.types")
    # none maps: each overload, and why
    with pytest.raises(ValueError, match=r"(?s)no overload of aten::bucketize can be mapped to test.types::Bucketize:"
                                         r".*aten::bucketize.Tensor\(Tensor self.*has no input or attribute 'nope'"
                                         r".*aten::bucketize.Scalar\(Scalar self.*has no input or attribute 'nope'"):
        oe.map_op("aten::bucketize", FloatBucketize, domain="test.types", args=("nope",))
    # several map but take different arguments: name one
    with pytest.raises(ValueError, match=r"the overloads of aten::div take different arguments; map one, "
                                         r"'aten::div.<overload>', of: aten::div.Tensor\(Tensor self, Tensor other\).*"
                                         r"aten::div.Tensor_mode\("):
        oe.map_op("aten::div", FloatBucketize, domain="test.types")
    with pytest.raises(ValueError, match=r"aten::div returns \(float\); ortcustom.export maps ops whose results are Tensors"):
        oe.map_op("aten::div.int", FloatBucketize, domain="test.types")


# ---- domains(model) in a process that has not imported the op's package -------------------------

PACKAGE = '''
import numpy as np
from ortcustom import Attr, Domain, Input, Op, Output

def _bucketize(X, boundaries, right=0):
    return np.searchsorted(boundaries, X, side="right" if right else "left").astype(np.int64)

Bucketize = Op("Bucketize", inputs=[Input("X", "T"), Input("boundaries", "T")],
               outputs=[Output("Y", "int64", shape="X")], types={"T": ("float", "double")},
               attrs=[Attr("right", "int", default=0)], compute=_bucketize)
domain = Domain("bucketops").add(Bucketize)
'''

LOAD = '''
import sys, numpy as np, onnx, onnxruntime as ort, ortcustom, ortcustom.export as oe
m = onnx.load(sys.argv[1])
assert "bucketops" not in sys.modules
ds = oe.domains(m)
print([(d.name, [o.name for o in d.ops]) for d in ds], "bucketops" in sys.modules)
sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*ds), providers=["CPUExecutionProvider"])
x, b = np.load(sys.argv[2]), np.load(sys.argv[3])
print(sess.run(None, {sess.get_inputs()[0].name: x, sess.get_inputs()[1].name: b})[0].tolist())
'''


def test_domains_imports_the_package_the_metadata_names(tmp_path):
    import os
    import subprocess
    import sys

    pkg = tmp_path / "pkgs" / "bucketops"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(PACKAGE)
    sys.path.insert(0, str(pkg.parent))
    try:
        import bucketops

        mp = oe.map_op("aten::bucketize", bucketops.Bucketize, domain="bucketops", name="bucketize",
                       args=("X", "boundaries", None, "right"))
        x, b = torch.randn(4, 3, dtype=torch.float64), torch.tensor([-0.5, 0.0, 0.5], dtype=torch.float64)
        oe.export(Buckets(), (x, b), str(tmp_path / "m.onnx"), dynamo=False, ops=[mp])
    finally:
        sys.path.remove(str(pkg.parent))
        sys.modules.pop("bucketops", None)
    m = onnx.load(str(tmp_path / "m.onnx"))
    assert {p.key: p.value for p in m.metadata_props}[oe.METADATA_KEY] == "bucketops::bucketize=bucketops:Bucketize"
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "b.npy", b.numpy())
    args = [sys.executable, "-c", LOAD, str(tmp_path / "m.onnx"), str(tmp_path / "x.npy"), str(tmp_path / "b.npy")]
    # a new process, the package installed (on its path): imported, its op found under the node's name
    r = subprocess.run(args, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(pkg.parent), os.environ.get("PYTHONPATH", "")])))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "[('bucketops', ['bucketize'])] True"
    assert lines[1] == str(Buckets()(x, b).tolist())
    # not installed: an error naming the package, not a domain silently left out
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert ("ImportError: the model's node bucketops::bucketize is the op Bucketize of the package 'bucketops' (its "
            "metadata says so), which does not import here (No module named 'bucketops'): install bucketops, or "
            "register its domain yourself") in r.stderr
