"""Registration does not grow with the product of type constraints: ORT gets one OrtCustomOp per
provider and combination of the types that decide an output's type (plus the type guard), the
other inputs typed "any", and the glue finds the node's binding when it makes the kernel. An op
taking any of the 20 element types on four independent inputs (20 ** 4 = 160000 bindings) is two
ORT ops, on every path; the binding found is the node's own; mixed types where one constraint
types two inputs are refused naming the node's types and the accepted ones."""
import numpy as np
import pytest

import ortcustom
from c_host import needs_c_library, run_host
from helpers import session
from ortcustom import Domain, Input, Op, Output, _customop
from ortcustom.testing import make_model
from ortcustom.types import onnx_enum
from plain_library import registration_declarations, registration_library, without_ortcustom

decl = registration_declarations()
ANY = decl.ANY
MIXED = {"A": np.zeros(2, np.float32), "B": np.zeros(3, np.int8), "C": np.zeros(1, np.bool_),
         "D": np.zeros((1, 2), np.uint64)}
MIXED_TYPES = [onnx_enum(t) for t in ("float", "int8", "bool", "uint64")]


def python_pick():
    def pick(A, B, C, D):
        return np.array([onnx_enum(ortcustom.types.name_of_dtype(a.dtype)) for a in (A, B, C, D)], np.float32)

    return Op("Pick", [Input(n, f"T{n}") for n in "ABCD"], [Output("Y", "float")],
              types={f"T{n}": ANY for n in "ABCD"}, compute=pick)


def test_four_independent_constraints_are_two_ort_ops():
    op = python_pick()
    d = Domain("test.pypick").add(op)
    assert len(op.type_bindings()) == len(ANY) ** 4 == 20 ** 4
    desc = _customop.describe(d)
    assert [(b["type_guard"], b["input_types"], b["output_types"]) for b in desc] == [
        (False, ["any"] * 4, ["float"]), (True, ["any"] * 4, ["float"])]
    # (registering checks the Python kernel's 20 ** 4 signatures against as many bindings: looked up)
    got = session(op, d, MIXED).run(None, MIXED)[0]
    np.testing.assert_array_equal(got, MIXED_TYPES)


def test_an_output_typed_by_a_constraint_keeps_its_type():
    # Y has A's type: ORT infers output types from the first ORT op whose input types match the
    # node, so A's type stays in what ORT is told (one ORT op per type of A); B's is "any"
    first = Op("First", [Input("A", "T"), Input("B", "U")], [Output("Y", "T", shape="A")],
               types={"T": ANY, "U": ANY}, compute=lambda A, B: A.copy())
    d = Domain("test.first").add(first)
    desc = _customop.describe(d)
    assert len(desc) == len(ANY) + 1
    assert {b["input_types"][1] for b in desc} == {"any"}
    assert sorted(b["input_types"][0] for b in desc[:-1]) == sorted(ANY)
    for a, b in ((np.arange(3, dtype=np.int8), np.zeros(1, np.float64)),
                 (np.arange(3, dtype=np.float16), np.zeros(1, np.uint32))):
        sess = session(first, d, {"A": a, "B": b})
        assert sess.get_outputs()[0].type == f"tensor({ortcustom.types.name_of_dtype(a.dtype)})"
        out = sess.run(None, {"A": a, "B": b})[0]
        assert out.dtype == a.dtype
        np.testing.assert_array_equal(out, a)


def test_one_constraint_on_two_inputs_refuses_mixed_types_naming_them():
    both = Op("Both", [Input("X", "T"), Input("Y", "T")], [Output("Z", "float")], types={"T": ("float", "double")},
              compute=lambda X, Y: np.zeros(1, np.float32))
    d = Domain("test.both").add(both)
    assert [b["input_types"] for b in _customop.describe(d)] == [["any", "any"], ["any", "any"]]
    x = np.zeros(2, np.float32)
    np.testing.assert_array_equal(session(both, d, {"X": x, "Y": x}).run(None, {"X": x, "Y": x})[0], [0])
    with pytest.raises(Exception, match=r"no kernel for input types \(X: float, Y: double\); Both accepts "
                                        r"\(X: T, Y: T\) with T in \{float, double\}"):
        session(both, d, {"X": x, "Y": x.astype(np.float64)})


# ---- a plain library -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def main_library(tmp_path_factory):
    return registration_library("MAIN", tmp_path_factory.mktemp("bindings"))


def pick_model():
    return make_model(decl.PICK, decl.MAIN[1], MIXED)


def test_library_from_python_without_ortcustom_finds_each_nodes_binding(main_library, tmp_path):
    r = without_ortcustom([main_library], pick_model(), MIXED, tmp_dir=tmp_path)
    assert r["failed"] is None, r
    np.testing.assert_array_equal(r["outputs"][0], MIXED_TYPES * 2)  # the binding, then the tensors' types


@needs_c_library
def test_library_in_a_c_host_finds_each_nodes_binding(main_library):
    r = run_host(pick_model(), MIXED, libraries=[main_library])
    assert r.returncode == 0, r.stdout
    np.testing.assert_array_equal(r.outputs["Y"], MIXED_TYPES * 2)



def test_a_product_above_the_limit_is_refused_when_declared():
    with pytest.raises(ValueError, match=r"op 'Huge'.*531441 type bindings \(3 \(T0\) x 3 \(T1\) x .*limit of 200000"):
        Op("Huge", [Input(f"I{i}", f"T{i}") for i in range(12)], [Output("Y", "float")],
           types={f"T{i}": ("float", "double", "int64") for i in range(12)}, compute=lambda *a: a[0])
