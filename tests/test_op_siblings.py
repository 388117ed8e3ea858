"""Several declarations under one op name, each with its own type signature and kernel (issue 28
item 3): a node runs the kernel of the declaration its input types pick, in a session (Python and
native kernels), a direct call, a plain library loaded by Python without ortcustom and by a C host;
the schema, onnx's shape inference and the NumPy reference pick alike; types no declaration takes
are refused naming the op, the node and every declaration; declarations that could both match a
node, or that differ in more than types, are refused when added."""
import sys

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

import ortcustom
from c_host import needs_c_library, run_host
from helpers import compile_kernels, session
from ortcustom import Attr, Domain, Input, Op, Output, _customop, kernels
from ortcustom.testing import make_model
from plain_library import NATIVE, build_library, without_ortcustom

sys.path.append(str(NATIVE))
import sibling_ops  # noqa: E402

F = np.array([1.5, -2.0], np.float32)
I = np.array([3, -4, 5], np.int64)
S = np.array(["ab", "", "h\u00e9llo"], dtype=object)
MEASURED = [(F, np.float32, [3.0, -4.0]), (I, np.int64, [-3, 4, -5]), (S, np.int64, [2, 0, 6])]
ACCEPTS = r"Measure accepts \(X: float\) or \(X: int64\) or \(X: string\)"


def python_measure():
    return (Op("Measure", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda x: 2 * x),
            Op("Measure", [Input("X", "int64")], [Output("Y", "int64", shape="X")], compute=lambda x: -x),
            Op("Measure", [Input("X", "string")], [Output("Y", "int64", shape="X")],
               compute=lambda x: np.array([len(v.encode()) for v in x.reshape(-1)], np.int64).reshape(x.shape)))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    path = compile_kernels([NATIVE / "sibling_kernels.cpp"], tmp_path_factory.mktemp("sib") / "k.so")
    return ortcustom.load_kernels(path)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("sib_lib") / "siblings.so"
    return build_library(NATIVE, "sibling_ops:SIBLINGS", [NATIVE / "sibling_kernels.cpp"], out)


def ops_of(kind, loaded):
    return python_measure() if kind == "python" else sibling_ops.measure(lambda n: loaded[n])


@pytest.mark.parametrize("kind", ["python", "native"])
def test_a_session_runs_the_declaration_the_input_types_pick(kind, loaded):
    ops = ops_of(kind, loaded)
    d = Domain("test.sib." + kind).add(*ops)
    assert d.declarations("Measure") == ops
    for x, dtype, want in MEASURED:
        y = session(ops[0], d, {"X": x}).run(None, {"X": x})[0]
        assert y.dtype == dtype and y.tolist() == want
    bad = np.zeros(2, np.int8)
    with pytest.raises(Exception, match=r"Measure \(node 'n0'\): no kernel for input types \(X: int8\); " + ACCEPTS):
        # (typed as ORT guesses a type no declaration gives: the type of the node's last input)
        session(ops[0], d, {"X": bad}, outputs={"Y": ("int8", None)})
    y = session(ops[0], d, {"X": F}).run(None, {"X": F})[0]  # the next session works
    assert y.tolist() == [3.0, -4.0]


@pytest.mark.parametrize("kind", ["python", "native"])
def test_an_input_that_types_no_output_still_picks_the_declaration(kind, loaded):
    """Route's declarations differ only in K, which types no output: alone, ORT would be told K is
    any type; beside a sibling it must be told K's types, else the first op would take every node."""
    if kind == "python":
        ops = (Op("Route", [Input("X", "T"), Input("K", "I")], [Output("Y", "T", shape="X")],
                  types={"T": ["float", "double"], "I": ["int32", "int16"]}, compute=lambda x, k: x + 100),
               Op("Route", [Input("X", "T"), Input("K", "int64")], [Output("Y", "T", shape="X")],
                  types={"T": ["float", "double"]}, compute=lambda x, k: x + 200))
    else:
        ops = sibling_ops.route(lambda n: loaded[n])
    d = Domain("test.route." + kind).add(*ops)
    for xt in (np.float32, np.float64):
        for kt, add in ((np.int32, 100), (np.int16, 100), (np.int64, 200)):
            feeds = {"X": np.arange(3, dtype=xt), "K": np.zeros(1, kt)}
            y = session(ops[0], d, feeds).run(None, feeds)[0]
            assert y.dtype == xt and y.tolist() == [add, add + 1, add + 2], (xt, kt)
    feeds = {"X": np.zeros(1, np.float32), "K": np.zeros(1, np.int8)}
    with pytest.raises(Exception, match=r"Route \(node 'n0'\): no kernel for input types \(X: float, K: int8\); "
                                        r"Route accepts \(X: T, K: I\) .* or \(X: T, K: int64\)"):
        session(ops[0], d, feeds, outputs={"Y": ("int8", None)})


def test_a_direct_call_picks_by_the_inputs_types(loaded):
    ops = sibling_ops.measure(lambda n: loaded[n])
    d = Domain("test.sib.direct").add(*ops)
    for x, dtype, want in MEASURED:
        y = kernels.call(d.declarations("Measure"), x)
        assert y.dtype == dtype and y.tolist() == want
    assert kernels.call(d.declarations("Measure"), X=I).tolist() == [-3, 4, -5]  # by keyword too
    with pytest.raises(TypeError, match=r"Measure: no declaration takes inputs of types \(int8\); it accepts "
                                        r"\(X: float\) or \(X: int64\) or \(X: string\)"):
        kernels.call(d.declarations("Measure"), np.zeros(2, np.int8))
    route = sibling_ops.route(lambda n: loaded[n])
    x = np.ones(2, np.float64)
    assert kernels.call(route, x, np.zeros(1, np.int16)).tolist() == [101, 101]
    assert kernels.call(route, x, np.zeros(1, np.int64)).tolist() == [201, 201]
    with pytest.raises(TypeError, match=r"declarations of one op name and version"):
        kernels.call((ops[0], route[0]), F)


def test_a_plain_library_from_python_without_ortcustom(library, tmp_path):
    d = sibling_ops.SIBLINGS[0]
    for x, dtype, want in MEASURED:
        r = without_ortcustom([library], make_model(sibling_ops.MEASURE[0], d, {"X": x}), {"X": x}, tmp_dir=tmp_path)
        assert r["failed"] is None, r
        assert r["outputs"][0].dtype == dtype and r["outputs"][0].tolist() == want
    feeds = {"X": np.arange(2, dtype=np.float32), "K": np.zeros(1, np.int64)}
    r = without_ortcustom([library], make_model(sibling_ops.ROUTE[0], d, feeds), feeds, tmp_dir=tmp_path)
    assert r["failed"] is None and r["outputs"][0].tolist() == [200, 201], r
    bad = {"X": np.zeros(2, np.int8)}
    r = without_ortcustom([library], make_model(sibling_ops.MEASURE[0], d, bad, outputs={"Y": ("int8", None)}),
                          bad, tmp_dir=tmp_path)
    assert r["failed"] == "session" and "no kernel for input types (X: int8); Measure accepts (X: float) or " \
                                         "(X: int64) or (X: string)" in r["error"], r


@needs_c_library
def test_a_plain_library_in_a_c_host(library):
    d = sibling_ops.SIBLINGS[0]
    for x, dtype, want in MEASURED:
        r = run_host(make_model(sibling_ops.MEASURE[0], d, {"X": x}), {"X": x}, libraries=[library])
        assert r.returncode == 0, r.stdout
        assert r.outputs["Y"].dtype == dtype and r.outputs["Y"].tolist() == want


def test_schema_shape_inference_and_reference_pick_alike():
    ops = python_measure()
    d = Domain("test.sib.schema").add(*ops)
    for x, dtype, want in MEASURED:
        elem = x.dtype if x.dtype != object else "string"
        model = make_model(ops[0], d, {"X": (elem, ["n"])}, outputs={"Y": (dtype, ["n"])})
        model.graph.node[0].output[0] = "Z"  # an inner value: onnx says its type and shape
        model.graph.node.append(onnx.helper.make_node("Identity", ["Z"], ["Y"]))
        onnx.checker.check_model(model, full_check=True)
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        (z,) = [v for v in inferred.graph.value_info if v.name == "Z"]
        assert z.type.tensor_type.elem_type == onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        assert [dim.dim_param for dim in z.type.tensor_type.shape.dim] == ["n"]
        got = ReferenceEvaluator(make_model(ops[0], d, {"X": x}), new_ops=ortcustom.reference_ops(d)).run(None, {"X": x})
        assert got[0].tolist() == want
    bad = make_model(ops[0], d, {"X": (np.int8, [2])}, outputs={"Y": ("float", [2])})
    with pytest.raises(Exception, match=r"Measure: no declaration takes input types \(int8\); it accepts"):
        onnx.shape_inference.infer_shapes(bad, strict_mode=True)


def _op(x_type, y_type="float", **kw):
    return Op("Twice", [Input("X", x_type)], [Output("Y", y_type)], compute=lambda x: x, **kw)


@pytest.mark.parametrize("a, b, why", [
    (_op("T", types={"T": ["float", "int64"]}), _op("int64", "int64"),
     r"its signature \(X: int64\) and \(X: T\) with T in \{float, int64\} both take a node with \(X: int64\)"),
    (_op("float"), Op("Twice", [Input("A", "int64")], [Output("Y", "float")], compute=abs),
     r"must declare the same inputs .* \(X\) vs \(A\)"),
    (_op("float"), Op("Twice", [Input("X", "int64", optional=True)], [Output("Y", "float")], compute=abs),
     r"must declare the same inputs"),
    (_op("float"), _op("int64", attrs=[Attr("k", "int", default=1)]), r"must declare the same attributes"),
    (_op("float", attrs=[Attr("k", "int", default=1)]), _op("int64", attrs=[Attr("k", "int", default=2)]),
     r"same attributes \(names, kinds, defaults\)"),
    (_op("float", torch="test::twice"), _op("int64", torch="test::twice"),
     r"both make the torch op 'test::twice', which has one kernel"),
])
def test_siblings_that_could_match_one_node_or_differ_in_more_than_types_are_refused(a, b, why):
    d = Domain("test.sib.bad").add(a)
    with pytest.raises(ValueError, match=r"domain 'test.sib.bad': op 'Twice' \[1, inf\] cannot join .*" + why):
        d.add(b)
    assert d.ops == (a,)


def test_optional_inputs_do_not_tell_siblings_apart():
    """A node may leave out an optional input: declarations that differ only there are ambiguous."""
    def op(t):
        return Op("Opt", [Input("X", "float"), Input("B", t, optional=True)], [Output("Y", "float")], compute=abs)
    with pytest.raises(ValueError, match=r"both take a node with \(X: float\)"):
        Domain("test.sib.opt").add(op("int64"), op("int32"))


def test_versions_and_siblings_of_one_name():
    """Spans apart are versions (Domain.at picks one); the same span is a sibling; spans that overlap
    otherwise are refused."""
    v1 = _op("float", until=3)
    v2 = _op("float", since=4)
    v2i = _op("int64", "int64", since=4)
    d = Domain("test.sib.versions").add(v1, v2, v2i)
    assert d.at(4).declarations("Twice") == (v2, v2i)
    assert d.at(2).declarations("Twice") == (v1,)
    with pytest.raises(ValueError, match=r"already has an op 'Twice' for versions \[1, 3\], which overlaps \[2, inf\]: declarations of "
                                         r"one name are versions \(spans apart\) or siblings"):
        d.add(_op("double", "double", since=2))


def test_ort_is_told_the_types_that_tell_siblings_apart():
    """Alone, Route's first declaration tells ORT K is any type (K types no output); beside its
    sibling, K's types are told (both declarations), and one type guard ends the name's ops."""
    a, b = (Op("Route", [Input("X", "T"), Input("K", k)], [Output("Y", "T")], types={"T": ["float", "double"], **t},
               compute=lambda x, k: x) for k, t in (("I", {"I": ["int32", "int16"]}), ("int64", {})))
    alone = [(p["input_types"], p["type_guard"]) for p in _customop.describe(Domain("test.sib.a").add(a))]
    assert alone == [(["float", "any"], False), (["double", "any"], False), (["any", "any"], True)]
    both = [(p["input_types"], p["type_guard"]) for p in _customop.describe(Domain("test.sib.ab").add(a, b))]
    assert both == [(["float", "int32"], False), (["float", "int16"], False), (["double", "int32"], False),
                    (["double", "int16"], False), (["float", "int64"], False), (["double", "int64"], False),
                    (["any", "any"], True)]


def test_the_glue_refuses_siblings_with_different_inputs_where_no_python_checked_them():
    """A plain library's table is the glue's only input: it refuses two declarations of one name and
    span whose inputs differ (Domain.add would have; ORT makes one schema per name)."""
    a = Op("Twice", [Input("X", "float")], [Output("Y", "float")], compute=lambda x: x)
    b = Op("Twice", [Input("X", "int64"), Input("K", "int64")], [Output("Y", "int64")], compute=lambda x, k: x)
    why = _customop.check_domain(_customop.domain_def("test.sib.glue", (a, b)))
    assert why == ("domain 'test.sib.glue' declares op 'Twice' twice with different inputs or outputs; declarations "
                   "of one name differ in element types only (ONNX Runtime makes one schema per name)")
    assert _customop.check_domain(_customop.domain_def("test.sib.glue", (a, _op("int64", "int64")))) is None


def test_a_constraint_shared_by_two_inputs_is_honoured():
    """(X: T, K: T) and (X: float, K: double) never take one node: both are taken, and (float, double)
    runs the second, in a session and in the reference."""
    a = Op("Pair", [Input("X", "T"), Input("K", "T")], [Output("Y", "T", shape="X")], types={"T": ["float", "double"]},
           compute=lambda x, k: x + k)
    b = Op("Pair", [Input("X", "float"), Input("K", "double")], [Output("Y", "float", shape="X")],
           compute=lambda x, k: (x - k).astype(np.float32))
    d = Domain("test.sib.pairref").add(a, b)
    x = np.ones(2, np.float32)
    for k, want in ((np.full(1, 2, np.float32), 3.0), (np.full(1, 2, np.float64), -1.0)):
        model = make_model(a, d, {"X": x, "K": k})
        got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(d)).run(None, {"X": x, "K": k})[0]
        assert got.tolist() == [want, want]
        y = session(a, d, {"X": x, "K": k}).run(None, {"X": x, "K": k})[0]
        assert y.dtype == np.float32 and y.tolist() == [want, want]
