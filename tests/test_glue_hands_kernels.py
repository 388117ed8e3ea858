"""What the glue hands a kernel, and checks, on every path where a kernel runs: a session (the Python
module), a direct call (ortcustom.kernels) and a plain library (no Python). Kernels of
tests/native/probe_kernels.cpp echo what they get; each test names the bug it is there to catch."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from helpers import CPU, compile_kernels
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.ops import Inverse
from ortcustom.testing import for_runtime, make_model

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "native"))
import probe_ops  # noqa: E402

PATHS = ["session", "direct", "library"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the kernels as a plain kernel library, the plain custom-op library of probe_ops.domain)."""
    out = tmp_path_factory.mktemp("probe")
    kernels_so = compile_kernels([HERE / "native" / "probe_kernels.cpp"], out / "probe_kernels.so")
    table = out / "table.cpp"
    r = subprocess.run([sys.executable, "-m", "ortcustom", "library-source", "--path", str(HERE / "native"),
                        "probe_ops:domain", "-o", str(table)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    glue = Path(ortcustom.__file__).parent / "glue"
    library = compile_kernels([HERE / "native" / "probe_kernels.cpp", table,
                               *[glue / f for f in ("attrs.cpp", "ort_op.cpp", "run.cpp")]],
                              out / "probe_library.so", f"-I{glue}", f"-Wl,--version-script={glue / 'library.map'}")
    return ortcustom.load_kernels(str(kernels_so)), str(library)


def run(built, path, name, x, attrs=None):
    """The outputs of op `name` on x, by `path` (a session, a direct call, the plain library)."""
    lib, library = built
    op = probe_ops.ops(lib)[name]
    attrs = attrs or {}
    if path == "direct":
        out = kernels.call(op, x, **attrs)
        return out if isinstance(out, tuple) else (out,)
    d = Domain("test.probe").add(op)
    outputs = {o.name: ({"A": np.float32, "B": np.float32, "Y": np.float64 if name.startswith("EchoF") or name == "EchoRequired" else np.uint8}[o.name],
                        None) for o in op.outputs}
    model = make_model(op, d, {"X": x}, outputs=outputs, attrs=attrs)
    if path == "session":
        so = ortcustom.session_options(d)
    else:
        so = ort.SessionOptions()
        so.register_custom_ops_library(library)
    return tuple(ort.InferenceSession(model.SerializeToString(), so, providers=CPU).run(None, {"X": x}))


@pytest.mark.parametrize("path", PATHS)
def test_each_output_is_written_where_the_kernel_wrote_it(built, path):
    """Bug: the glue allocating or reading output i+1 for output i."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = run(built, path, "TwoOutputs", x)
    np.testing.assert_array_equal(a, x + 1)
    np.testing.assert_array_equal(b, -np.concatenate([x.ravel(), x.ravel()]))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("f", [None, 0.1, 1 / 3, -2.5e-8])
def test_a_float_attribute_reaches_the_kernel_rounded_to_float32_on_every_path(built, path, f):
    """Bug: one path (a session's default, a direct call, a plain library's table) handing the kernel
    the double the declaration or the caller wrote instead of the float32 a node carries."""
    (y,) = run(built, path, "EchoFloat", np.ones(1, np.float32), None if f is None else {"f": f})
    want = float(np.float32(0.1 if f is None else f))
    assert y.dtype == np.float64 and y[0] == want, (y[0], want)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("s", [None, "plain", "ünï→códe ✓", ""])
def test_a_string_attribute_reaches_the_kernel_as_its_utf8_bytes(built, path, s):
    """Bug: a string's count taken as its characters, not its UTF-8 bytes (the default, non-ASCII,
    from the Python module or a plain library's table; a node's value; a direct call's)."""
    (y,) = run(built, path, "EchoString", np.ones(1, np.float32), None if s is None else {"s": s})
    assert bytes(y) == (probe_ops.NON_ASCII if s is None else s).encode()


@pytest.mark.parametrize("path", ["session", "library"])
def test_a_required_attribute_the_node_lacks_is_refused(built, path):
    """Bug: `required` lost on the way to the glue (a plain library's table): the kernel would get 0."""
    x = np.ones(1, np.float32)
    assert run(built, path, "EchoRequired", x, {"f": 2.5})[0][0] == 2.5
    with pytest.raises(Exception, match=re.escape("EchoRequired (node 'n0'): required attribute 'f' (float) is missing")):
        run(built, path, "EchoRequired", x)


def _k_int32(built):
    lib, _ = built
    return Op("KInt", [Input("X", "float"), Input("K", "int32")], [Output("Y", "float", shape="X")],
              native=lib["k_int64"])


NO_SIGNATURE = re.escape("native kernel 'k_int64' has no signature for the declared type binding "
                         "(X: float, K: int32, Y: float)")


def test_the_signature_check_compares_every_input_not_only_the_first(built):
    """Bug: only input 0's type compared: a kernel built for K int64 taken for an op declaring K
    int32 (it would read 8 bytes per 4-byte element). Refused on first use, by every path."""
    with pytest.raises(ValueError, match=NO_SIGNATURE):
        _k_int32(built).kernel
    with pytest.raises(ValueError, match=NO_SIGNATURE):
        kernels.call(_k_int32(built), np.ones(2, np.float32), np.ones(2, np.int32))
    with pytest.raises(ValueError, match=NO_SIGNATURE):
        ortcustom.session_options(Domain("test.sig").add(_k_int32(built)))
    lib, _ = built  # declared as the kernel is built: accepted
    ok = Op("KInt", [Input("X", "float"), Input("K", "int64")], [Output("Y", "float", shape="X")], native=lib["k_int64"])
    np.testing.assert_array_equal(kernels.call(ok, np.ones(2, np.float32), np.ones(2, np.int64)), np.ones(2))
    # the same with a signature that takes X of any type: K's int64 still compared
    wild = Op("KInt", [Input("X", "float"), Input("K", "int32")], [Output("Y", "float", shape="X")],
              native=lib["k_any_int64"])
    with pytest.raises(ValueError, match=NO_SIGNATURE.replace("k_int64", "k_any_int64")):
        kernels.call(wild, np.ones(2, np.float32), np.ones(2, np.int32))
    ok = Op("KInt", [Input("X", "float"), Input("K", "int64")], [Output("Y", "float", shape="X")],
            native=lib["k_any_int64"])
    np.testing.assert_array_equal(kernels.call(ok, np.ones(2, np.float32), np.ones(2, np.int64)), np.ones(2))


def test_a_python_int_for_a_float_input_is_that_float_on_every_call(built):
    """A direct call takes a Python int for an input of one fixed type as an array of that type; its
    repeats (kernels' _Plan.repeats) too (bug: converted by NumPy's default, int64: the kernel reads
    the int64 bits as float)."""
    lib, _ = built
    copy = Op("KInt", [Input("X", "float"), Input("K", "int64")], [Output("Y", "float", shape="X")],
              native=lib["k_int64"])
    for _ in range(3):
        for v in (3, -7):
            y = kernels.call(copy, v, np.ones(2, np.int64))
            assert y.dtype == np.float32 and y.shape == () and y == v


def test_a_refused_kernel_is_refused_again_not_cached(built):
    """Bug: the kernel cached before it was checked: refused once, then accepted."""
    op = _k_int32(built)
    for _ in range(2):
        with pytest.raises(ValueError, match=NO_SIGNATURE):
            op.kernel
        with pytest.raises(ValueError, match=NO_SIGNATURE):
            kernels.call(op, np.ones(2, np.float32), np.ones(2, np.int32))
        with pytest.raises(ValueError, match=NO_SIGNATURE):
            ortcustom.session_options(Domain("test.sig").add(op))


def _two_nodes(op_type, domain):
    """Two nodes of `op_type`, each on an input whose first dim is unknown (no value, no name)."""
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None, 2, 2]) for n in ("X1", "X2")]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("Y1", "Y2")]
    nodes = [helper.make_node(op_type, [i], [o], domain=domain, name=o) for i, o in (("X1", "Y1"), ("X2", "Y2"))]
    g = helper.make_graph(nodes, "g", ins, outs)
    return for_runtime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                           helper.make_opsetid(domain, 1)])).SerializeToString()


def _rule(shapes, attrs):
    return shapes["X"]


PY_SHAPED = Op("PyShaped", [Input("X", "float")], [Output("Y", "float", shape=_rule)], compute=lambda X: X.copy())


@pytest.mark.parametrize("how", ["glue", "python rule", "library"])
def test_an_unknown_dim_gets_a_name_of_its_own_in_each_node(how):
    """Bug: one name given to the unknown dims of several nodes' outputs (ORT then takes them as one
    size and may reuse one's buffer for the other)."""
    if how == "python rule":
        so, model = ortcustom.session_options(Domain("test.unk").add(PY_SHAPED)), _two_nodes("PyShaped", "test.unk")
    elif how == "glue":
        so, model = ortcustom.session_options(Domain("ortcustom").add(Inverse)), _two_nodes("Inverse", "ortcustom")
    else:
        so = ort.SessionOptions()
        so.register_custom_ops_library(ortcustom.get_library_path())
        model = _two_nodes("Inverse", "ortcustom")
    sess = ort.InferenceSession(model, so, providers=CPU)
    (y1, *rest1), (y2, *rest2) = (o.shape for o in sess.get_outputs())
    assert rest1 == rest2 == [2, 2]
    assert isinstance(y1, str) and isinstance(y2, str) and y1 != y2, (y1, y2)
    x1, x2 = np.tile(2 * np.eye(2, dtype=np.float32), (3, 1, 1)), np.tile(4 * np.eye(2, dtype=np.float32), (5, 1, 1))
    r1, r2 = sess.run(None, {"X1": x1, "X2": x2})
    assert r1.shape == (3, 2, 2) and r2.shape == (5, 2, 2)


# ---- direct calls: out= arrays -------------------------------------------------------------------

def test_out_next_to_an_input_is_not_an_overlap():
    """Bug: the overlap test made `<=`: an out array that ends where X starts (or starts where X
    ends) shares no byte with it and must be accepted."""
    buf = np.zeros((3, 2, 2), np.float32)
    x, out = buf[0:1], buf[1:2]  # adjacent: out starts where x ends
    x[...] = 2 * np.eye(2)
    assert kernels.inverse(x, out=out) is out
    np.testing.assert_array_equal(out, np.eye(2)[None] / 2)
    x2, out2 = buf[2:3], buf[1:2]  # out ends where x2 starts
    x2[...] = 4 * np.eye(2)
    kernels.inverse(x2, out=out2)
    np.testing.assert_array_equal(out2, np.eye(2)[None] / 4)


@pytest.mark.parametrize("x_at, out_at", [(0, 1), (1, 0), (0, 3), (3, 0), (0, 7), (7, 0)])
def test_out_sharing_any_byte_with_an_input_is_refused(x_at, out_at):
    """Bug: the overlap check looking at half of either range. x and out are 8 floats (two 2x2
    matrices) of one buffer, `x_at`/`out_at` elements in: they share 1 to 7 elements, at x's
    start or at its end."""
    flat = np.zeros(16, np.float32)
    x = flat[x_at:x_at + 8].reshape(2, 2, 2)
    x[...] = 2 * np.eye(2)
    with pytest.raises(ValueError, match="out overlaps X"):
        kernels.inverse(x, out=flat[out_at:out_at + 8].reshape(2, 2, 2))


# ---- no fixed cap on outputs: the glue checks every one ------------------------------------------

N_MANY = 70  # past a 64-bit mask


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """Kernels with N_MANY outputs (source written here): `all` fills output i with i; `skip_last`
    never asks for the last one; `twice` asks for output 66 twice."""
    out = tmp_path_factory.mktemp("many")
    names = ", ".join(f'"Y{i}"' for i in range(N_MANY))
    row = ", ".join(["OC_FLOAT"] * (N_MANY + 1))
    (out / "many.cpp").write_text(f"""#include "ortcustom/kernel.hpp"
const char* const kIn[] = {{"X", nullptr}};
const char* const kOut[] = {{{names}, nullptr}};
constexpr int32_t kSig[][{N_MANY + 1}] = {{{{{row}}}}};
constexpr oc::Spec kSpec = {{kIn, kOut, nullptr, OC_SIGNATURES(kSig), nullptr}};
template <int Last, int Again>
int outputs(oc::Context& ctx) {{
  for (int i = 0; i < Last; ++i) {{
    float* y;
    if (int rc = ctx.output(i, ctx.input(0), &y)) return rc;
    for (int64_t j = 0; y && j < ctx.input(0).size; ++j) y[j] = (float)i;
  }}
  float* y;
  return Again >= 0 ? ctx.output(Again, ctx.input(0), &y) : OC_OK;
}}
OC_KERNEL(all, cpu, kSpec, (outputs<{N_MANY}, -1>))
OC_KERNEL(skip_last, cpu, kSpec, (outputs<{N_MANY - 1}, -1>))
OC_KERNEL(twice, cpu, kSpec, (outputs<{N_MANY}, 66>))
""")
    lib = ortcustom.load_kernels(str(compile_kernels([out / "many.cpp"], out / "many.so")))
    return {k: Op("Many", [Input("X", "float")], [Output(f"Y{i}", "float", shape="X") for i in range(N_MANY)],
                  native=lib[k]) for k in ("all", "skip_last", "twice")}


def test_every_output_past_the_64th_is_checked(many):
    """Bug: outputs past 64 neither tracked nor checked (a 64-bit mask): the last one never allocated,
    or one allocated twice, would pass silently."""
    x = np.ones(3, np.float32)
    got = kernels.call(many["all"], x)
    assert len(got) == N_MANY and all((y == i).all() for i, y in enumerate(got))
    with pytest.raises(RuntimeError, match=f"returned without allocating output Y{N_MANY - 1}"):
        kernels.call(many["skip_last"], x)
    with pytest.raises(RuntimeError, match="output Y66: the kernel asked for it twice"):
        kernels.call(many["twice"], x)


def test_every_output_past_the_64th_gets_its_shape_at_session_creation(many):
    """Bug: shape inference stopped at output 64 (fixed arrays of 64 per op): later outputs of a
    shape="X" op were left unknown, silently."""
    op = many["all"]
    node = helper.make_node("Many", ["X"], [f"Y{i}" for i in range(N_MANY)], domain="many.ops")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
                              [helper.make_tensor_value_info(f"Y{i}", TensorProto.FLOAT, None) for i in range(N_MANY)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("many.ops", 1)])
    sess = ort.InferenceSession(for_runtime(model).SerializeToString(),
                                ortcustom.session_options(Domain("many.ops").add(op)), providers=CPU)
    assert [o.shape for o in sess.get_outputs()] == [["n"]] * N_MANY
    got = sess.run(None, {"X": np.ones(3, np.float32)})
    assert all((y == i).all() and y.shape == (3,) for i, y in enumerate(got))


def test_an_in_place_index_one_past_the_inputs_is_refused(built):
    """Bug: the in-place bound taken as inclusive (`> n_inputs`): output 0 written over input 1 of a
    one-input op would be accepted, and the kernel would write over memory no input has."""
    lib, _ = built
    op = Op("Past", [Input("X", "float")], [Output("Y", "float", shape="X")], native=lib["inplace_past"])
    with pytest.raises(ValueError, match=re.escape("lets output Y be written over input 1; the op has 1 inputs")):
        op.kernel


def test_a_torch_op_whose_output_type_is_not_its_shape_inputs(built):
    """Bug: the torch op's fake (meta) output given its shape input's dtype, not the declared one:
    torch.export, both exporters and torch.compile would see float32 where the kernel gives float64."""
    torch = pytest.importorskip("torch")
    import ortcustom.torch_ops

    lib, _ = built
    op = Op("ToDouble", [Input("X", "float")], [Output("Y", "double", shape="X")], native=lib["to_double"],
            torch="probe::to_double")
    fn = ortcustom.torch_ops.register(op)
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    assert fn(x).dtype == torch.float64
    torch.library.opcheck(fn.default, (x,), test_utils=("test_faketensor",))
