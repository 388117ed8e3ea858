"""Kernels in libraries of your own (ortcustom/kernel.h): found by import or by path, ABI version
checked, matched against the declaration, every attribute kind and create/destroy through a
session and a direct call, a native and a Python op in one domain; a library's op as a torch op.
The headers' pkg-config file and the package scaffold: tests/test_cli.py."""
import ctypes
import gc
import pathlib
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from helpers import CPU, compile_library, session
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.testing import for_runtime

HERE = pathlib.Path(__file__).parent
ABI = ortcustom._customop.ABI_VERSION  # OC_ABI_VERSION of the installed headers


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """tests/native/test_kernels.cpp compiled against the installed headers, as a plain shared
    library inside a package (`kpkg/_testkernels.so`) that is importable for the module's tests."""
    root = tmp_path_factory.mktemp("native")
    pkg = root / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    so = pkg / "_testkernels.so"
    compile_library([HERE / "native" / "test_kernels.cpp"], so)
    sys.path.insert(0, str(root))
    yield so
    sys.path.remove(str(root))


def destroyed(so) -> int:
    return ctypes.CDLL(str(so)).test_kernels_destroyed()


def offset_op(native, name="Offset", **kw):
    decl = dict(inputs=[Input("X", "float")], outputs=[Output("Y", "float", shape="X")],
                attrs=[Attr("mode", "string", "add"), Attr("k", "int", 0), Attr("f", "float", 0.0),
                       Attr("ks", "ints", (0,)), Attr("fs", "floats", (0.0,))], native=native)
    decl.update(kw)
    return Op(name, **decl)


ATTRS = {"mode": "mul", "k": 2, "f": 0.5, "ks": [1, 3], "fs": [0.25, 0.125]}  # c = 6.875


def test_every_attribute_kind_and_create_destroy_in_a_session(library):
    op = offset_op("kpkg._testkernels:offset")
    d = Domain("native.attrs").add(op)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = destroyed(library)
    sess = session(op, d, {"X": x}, attrs=ATTRS)
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], x * np.float32(6.875))
    np.testing.assert_array_equal(session(op, d, {"X": x}).run(None, {"X": x})[0], x)  # the defaults: + 0
    del sess
    gc.collect()
    assert destroyed(library) == before + 2  # one create/destroy per node (session)


def test_every_attribute_kind_and_create_destroy_in_a_direct_call(library):
    op = offset_op("kpkg._testkernels:offset")
    x = np.arange(6, dtype=np.float32)
    before = destroyed(library)
    np.testing.assert_array_equal(kernels.call(op, x, **ATTRS), x * np.float32(6.875))
    np.testing.assert_array_equal(kernels.call(op, x, mode="add", k=-1), x - 1)
    np.testing.assert_array_equal(kernels.call(op, x, mode="add", k=-1), x - 1)
    # create runs once per (op, attributes, types); its state is kept for the next call, not
    # destroyed after each
    assert destroyed(library) == before


def test_a_0d_input_gives_a_0d_output_as_in_a_session(library):
    op = offset_op("kpkg._testkernels:offset")
    y = kernels.call(op, np.float32(2), k=1)
    assert y.shape == () and y == 3
    d = Domain("native.attrs").add(op)  # one domain per op name: onnx.reference wants unique names
    x = np.array(2, np.float32)
    assert session(op, d, {"X": x}, attrs={"k": 1}).run(None, {"X": x})[0].shape == ()


def test_create_refuses_bad_attributes_clearly(library):
    op = offset_op("kpkg._testkernels:offset")
    d = Domain("native.create").add(op)
    x = np.ones(3, np.float32)
    with pytest.raises(Exception, match=r"Offset.*mode must be 'add' or 'mul', got 'pow'"):
        session(op, d, {"X": x}, attrs={"mode": "pow"})
    with pytest.raises(ValueError, match=r"Offset.*mode must be 'add' or 'mul', got 'pow'"):
        kernels.call(op, x, mode="pow")


def test_a_kernel_by_path_or_by_library_object(library):
    k = ortcustom.load_kernels(library)["offset"]
    assert ortcustom.load_kernels(str(library)) is ortcustom.load_kernels(library)  # opened once
    assert k.info["attrs"] == [("mode", "string"), ("k", "int"), ("f", "float"), ("ks", "ints"), ("fs", "floats")]
    op = offset_op(k, name="OffsetByPath")
    np.testing.assert_array_equal(kernels.call(op, np.ones(2, np.float32), k=4), np.full(2, 5, np.float32))


def test_a_native_and_a_python_op_in_one_domain_and_one_session(library):
    native = offset_op("kpkg._testkernels:offset")
    twice = Op("Twice", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: X * 2)
    d = Domain("native.mixed").add(native, twice)
    graph = helper.make_graph(
        [helper.make_node("Offset", ["X"], ["T"], domain=d.name, k=1),
         helper.make_node("Twice", ["T"], ["Y"], domain=d.name)], "mixed",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(d.name, 1)]))
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], (x + 1) * 2)


@pytest.mark.parametrize("native, match", [
    ("kpkg._testkernels:old_abi", rf"op 'Offset': kernel 'old_abi' in .*_testkernels.so was built against ortcustom "
                                  rf"kernel ABI version {ABI - 1}, an older one than this ortcustom's \({ABI}\): rebuild it"),
    ("kpkg._testkernels:new_abi", rf"kernel ABI version {ABI + 1}, a newer one than this ortcustom's \({ABI}\)"),
    ("kpkg._testkernels:no_such", r"op 'Offset': no native kernel 'no_such' in .*_testkernels.so \(no symbol "
                                  r"ortcustom_kernel_no_such_cpu or ortcustom_kernel_no_such_cuda\)"),
    ("kpkg._testkernels:null", r"ortcustom_kernel_null_cpu in .*_testkernels.so returned NULL"),
    ("kpkg._no_such_library:offset", r"op 'Offset': no kernel library 'kpkg._no_such_library'"),
    ("no_such_package_xyz._kernels:offset", r"op 'Offset': no kernel library 'no_such_package_xyz._kernels'"),
    ("kpkg._testkernels:input_named_a", r"op 'Offset': native kernel 'input_named_a' takes inputs \['A'\]; "
                                        r"the op declares \['X'\] \(.*_testkernels.so\)"),
])
def test_a_kernel_that_cannot_be_used_is_refused_clearly(library, native, match):
    kw = {} if "offset" in native or "no_such" in native else dict(attrs=())
    with pytest.raises(ValueError, match=match):
        offset_op(native, **kw).kernel


def test_load_kernels_errors(library, tmp_path):
    with pytest.raises(FileNotFoundError, match="no kernel library at"):
        ortcustom.load_kernels(tmp_path / "missing.so")
    junk = tmp_path / "junk.so"
    junk.write_text("not a library")
    with pytest.raises(OSError, match="cannot load the kernel library .*junk.so"):
        ortcustom.load_kernels(junk)
    with pytest.raises(LookupError, match="no native kernel 'nope'"):
        ortcustom.load_kernels(library)["nope"]


# ---- a library's op as a torch op, exported to itself (export(ops=[domain])) -------------------

@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_a_library_op_runs_in_torch_and_exports_with_its_domain(library, dynamo):
    torch = pytest.importorskip("torch")
    import ortcustom.export
    import ortcustom.torch_ops

    op = offset_op("kpkg._testkernels:offset", name="TorchOffset", torch="nativetest::offset")
    ortcustom.torch_ops.register(op)
    d = Domain("native.torch").add(op)

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.nativetest.offset(x, "mul", 2, 0.5, [1, 3], [0.25, 0.125]) + 1

    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    eager = M()(x)
    torch.testing.assert_close(eager, x * 6.875 + 1, rtol=0, atol=0)
    m = ortcustom.export.export(M(), (x,), dynamo=dynamo, ops=[d])
    (node,) = [n for n in m.graph.node if n.domain == d.name]
    assert node.op_type == "TorchOffset"
    assert {a.name for a in node.attribute} == {"mode", "k", "f", "ks", "fs"}
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    np.testing.assert_array_equal(sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0], eager.numpy())


def test_export_ops_takes_only_domains_with_torch_ops(library):
    pytest.importorskip("torch")
    from ortcustom.export.mapping import resolve

    with pytest.raises(ValueError, match=r"domain 'native.notorch' has no native op that declares its torch op"):
        resolve([Domain("native.notorch").add(offset_op("kpkg._testkernels:offset", name="NoTorch"))])
