"""The native kernel ABI (ortcustom/kernel.h): kernels found and checked against declarations, one
trampoline for every op, attributes bound by name, the registration handoff."""
import dataclasses
import os
import pathlib
import re
import threading

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from helpers import run_python, session
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.ops import GroupNorm, Inverse

SRC = pathlib.Path(ortcustom.__file__).parent


def inverse_like(**kw):
    decl = dict(name="Inv", inputs=[Input("X", "T")], outputs=[Output("Y", "T", shape="X")],
                types={"T": ["float"]}, native="inverse")
    decl.update(kw)
    return Op(**decl)


@pytest.mark.parametrize("kw, match", [
    (dict(inputs=[Input("A", "T")], outputs=[Output("Y", "T", shape="A")]),
     r"op 'Inv': native kernel 'inverse' takes inputs \['X'\]; the op declares \['A'\] \(.*_kernels.so\)"),
    (dict(outputs=[Output("Z", "T", shape="X")]), r"has outputs \['Y'\]; the op declares \['Z'\]"),
    (dict(attrs=[Attr("alpha", "float", 1.0)]), r"reads attribute|does not read the declared attributes \['alpha'\]"),
    (dict(types={"T": ["float", "int64"]}), r"has no signature for the declared type binding \(X: int64, Y: int64\)"),
    (dict(native="no_such_kernel"), r"op 'Inv': no native kernel 'no_such_kernel' in .*ortcustom_kernel_no_such_kernel_cpu"),
    (dict(native="no_such_module_xyz:inverse"), r"op 'Inv': no kernel library 'no_such_module_xyz'"),
    (dict(native="json:inverse"), r"json is a Python module, not a compiled kernel library"),
    (dict(native=42), r"native= takes a kernel name"),
])
def test_a_kernel_that_does_not_match_its_declaration_is_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        inverse_like(**kw).kernel  # declarations are data: the kernel is found and checked on first use
    if kw.get("native") != 42:
        with pytest.raises(ValueError, match=match):
            ortcustom.session_options(Domain("abi.mismatch").add(inverse_like(**kw)))


def test_attribute_kinds_are_checked():
    gn = dict(name="GN", inputs=GroupNorm.inputs, outputs=GroupNorm.outputs, types=GroupNorm.types, native="group_norm")
    with pytest.raises(ValueError, match=r"reads attribute 'epsilon' as float; the op declares it int"):
        Op(**gn, attrs=[Attr("epsilon", "int", 0), Attr("num_groups", "int", 0)]).kernel
    with pytest.raises(ValueError, match=r"does not read the declared attributes \['extra'\]"):
        Op(**gn, attrs=list(GroupNorm.attrs) + [Attr("extra", "string", "")]).kernel


def test_attributes_bind_by_name_whatever_the_declaration_order():
    """The kernel reads attributes in its own order; a declaration listing them in another order
    gives the same values (never epsilon read as num_groups)."""
    swapped = dataclasses.replace(GroupNorm, name="GroupNormSwapped", attrs=tuple(reversed(GroupNorm.attrs)),
                                  torch=None, torch_args=None)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    for op in (GroupNorm, swapped):
        d = Domain("abi.test." + op.name).add(op)
        y = session(op, d, {"X": x}, attrs={"num_groups": 3, "epsilon": 0.25}).run(None, {"X": x})[0]
        np.testing.assert_allclose(y, GroupNorm.reference(x, None, epsilon=0.25, num_groups=3), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(kernels.call(op, x, num_groups=3, epsilon=0.25), y, rtol=1e-6, atol=1e-6)


def test_the_glue_names_no_op():
    """One trampoline for every op: the glue (C++) and its Python front end know no op by name."""
    glue = list((SRC / "glue").glob("*.cpp")) + list((SRC / "glue").glob("*.h*"))
    assert len(glue) >= 6
    for f in list(SRC.glob("_*.pyx")) + list(SRC.glob("_*.pxi")) + list(SRC.glob("_*.pxd")) + glue:
        text = f.read_text()
        assert not re.search(r"inverse|group_?norm", text, re.I), f"{f.name} names an op"


def test_kernels_describe_themselves():
    assert Inverse.kernel.info["inputs"] == ["X"] and Inverse.kernel.info["outputs"] == ["Y"]
    assert GroupNorm.kernel.info["attrs"] == [("epsilon", "float"), ("num_groups", "int")]
    assert Inverse.kernel.cpu and bool(Inverse.kernel.cuda) == ortcustom.build_info()["cuda"]
    assert os.path.exists(os.path.join(ortcustom.get_include(), "ortcustom", "kernel.h"))


def test_direct_call_needs_a_native_op_and_declared_attributes():
    py = Op("Py", [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X)
    with pytest.raises(TypeError, match="takes an Op with a native kernel"):
        kernels.call(py, np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"GroupNorm: no attribute 'eps'"):
        kernels.call(GroupNorm, np.ones((1, 2), np.float32), 1, eps=1.0)
    with pytest.raises(TypeError, match=r"Inverse: takes 1 inputs \(X\), got 2"):
        kernels.inverse(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32))
    with pytest.raises(TypeError, match=r"Inverse: input X is required"):
        kernels.inverse()


def test_out_may_be_the_input_only_where_the_kernel_says_so():
    x = np.stack([2 * np.eye(3, dtype=np.float32)] * 2)
    np.testing.assert_allclose(kernels.inverse(x.copy(), out=None), np.eye(3) / 2 + 0 * x)
    y = x.copy()
    assert kernels.inverse(y, out=y) is y  # Inverse declares inplace = {Y: X}
    np.testing.assert_allclose(y, x / 4)


def test_missed_registration_handoff_is_an_error_not_the_builtin_domain():
    """RegisterCustomOps called with nothing pending on its thread while another thread is
    registering: the handoff was missed, and ORT gets an error (before, it silently registered
    the built-in domain)."""
    from ortcustom import _customop

    entered, leave = threading.Event(), threading.Event()

    def hold():
        with _customop.registering([Domain("abi.handoff").add(Inverse)]):
            entered.set()
            leave.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert entered.wait(30)
        so = ort.SessionOptions()
        with pytest.raises(Exception, match="called on a thread other than the one registering"):
            so.register_custom_ops_library(_customop.__file__)
    finally:
        leave.set()
        t.join()
    # the plain library needs no handoff: it registers the built-in ops
    so = ort.SessionOptions()
    so.register_custom_ops_library(ortcustom.get_library_path())


def test_process_exits_cleanly_with_sessions_alive():
    """Native kernels are destroyed without the GIL, Python kernels' state is left to the process
    when the interpreter is finalizing: sessions alive at exit do not crash it."""
    code = """
import numpy as np, onnxruntime as ort, ortcustom
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import Inverse, GroupNorm
from ortcustom.testing import make_model
Twice = Op("Twice", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: X * 2)
d = Domain("exit.test").add(Inverse, GroupNorm, Twice)
x = np.eye(3, dtype=np.float32)[None] * 2
keep = []
for op, feeds, attrs in ((Inverse, {"X": x}, None), (Twice, {"X": x}, None),
                         (GroupNorm, {"X": x}, {"num_groups": 1})):
    m = make_model(op, d, feeds, attrs=attrs)
    s = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=["CPUExecutionProvider"])
    s.run(None, feeds)
    keep.append(s)
print("ok")
"""
    r = run_python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])
