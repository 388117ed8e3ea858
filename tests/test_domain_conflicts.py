"""One domain name, two registrations into one SessionOptions. ONNX Runtime takes one registration
per domain name and said only "Domain already set in registry", at session creation. Now each
registration records itself in the options (a session config entry per domain name, which every
copy of the glue sees and which dies with the options): a second, different registration of the
name is refused at registration, naming the domain and both sources; the same registration again
is a no-op. On every path: ortcustom.register, plain libraries from a Python without ortcustom and
from a C host, and mixes of them."""
import numpy as np
import pytest

import ortcustom
from c_host import needs_c_library, run_host
from helpers import CPU, session
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import Inverse, contrib
from ortcustom.testing import make_model
from plain_library import registration_declarations, registration_library, without_ortcustom

decl = registration_declarations()
TWICE = "is registered twice into one SessionOptions, by "


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("conflicts")
    return {name: registration_library(name, tmp) for name in ("MAIN", "OTHER")}


def refused(message, domain, *sources):
    assert f"domain '{domain}' {TWICE}" in message, message
    for s in sources:
        assert str(s) in message, message


def scale_model():
    return make_model(decl.OLD, decl.MAIN[0], {"X": np.ones(3, np.float32)})


# ---- plain libraries -------------------------------------------------------------------------------

def test_ortcustoms_two_libraries_both_serving_com_microsoft_are_refused_naming_both(tmp_path):
    main, other = ortcustom.get_library_path(), contrib.get_library_path()
    r = without_ortcustom([main, other], tmp_dir=tmp_path)
    assert r["failed"] == "register"
    refused(r["error"], "com.microsoft", main, other, "ops Inverse)", "ops Inverse, GroupNorm, SkipGroupNorm")


def test_two_libraries_of_one_domain_refused_at_registration(libs, tmp_path):
    r = without_ortcustom([libs["MAIN"], libs["OTHER"]], tmp_dir=tmp_path)
    assert r["failed"] == "register"
    refused(r["error"], "test.scale", libs["MAIN"], libs["OTHER"], "ops Scale", "ops Triple")


def test_one_library_registered_twice_is_a_no_op(libs, tmp_path):
    r = without_ortcustom([libs["MAIN"], libs["MAIN"]], scale_model(), {"X": np.ones(3, np.float32)}, tmp_dir=tmp_path)
    assert r["failed"] is None, r
    np.testing.assert_array_equal(r["outputs"][0], [2, 2, 2])


def test_fresh_options_carry_no_record_of_freed_ones(libs, tmp_path):
    # records live in the options: a new SessionOptions (perhaps at a freed one's address) is clean
    code = f"""
import gc
for i in range(50):  # MAIN, OTHER, MAIN, ...: each in fresh options
    so = ort.SessionOptions()
    so.register_custom_ops_library({[str(libs["MAIN"]), str(libs["OTHER"])]!r}[i % 2])
    del so
    gc.collect()
print("FIFTY OK")
"""
    r = without_ortcustom([], code_after=code, tmp_dir=tmp_path)
    assert "FIFTY OK" in r["stdout"]


@needs_c_library
def test_c_host_refuses_the_second_library_naming_both(libs):
    x = np.ones(3, np.float32)
    r = run_host(scale_model(), {"X": x}, libraries=[libs["MAIN"], libs["OTHER"]])
    assert r.returncode == 3, r.stdout
    refused(r.error, "test.scale", libs["MAIN"], libs["OTHER"])
    r = run_host(scale_model(), {"X": x}, libraries=[libs["MAIN"], libs["MAIN"]])
    assert r.returncode == 0, r.stdout
    np.testing.assert_array_equal(r.outputs["Y"], 2 * x)
    main, other = ortcustom.get_library_path(), contrib.get_library_path()
    r = run_host(scale_model(), {"X": x}, libraries=[main, other])
    assert r.returncode == 3, r.stdout
    refused(r.error, "com.microsoft", main, other)


# ---- the Python path, and mixes ---------------------------------------------------------------------

def scale(factor):
    return Op("Scale", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: factor * X)


def test_the_same_domain_twice_is_a_no_op():
    d = Domain("test.pytwice").add(scale(2))
    so = ortcustom.session_options(d)
    ortcustom.register(so, d)
    ortcustom.register(so, Domain("test.pytwice").add(*d.ops))  # another Domain object, the same ops
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(session(d.ops[0], d, {"X": x}, so=so).run(None, {"X": x})[0], 2 * x)


def test_two_domains_of_one_name_with_other_ops_are_refused():
    so = ortcustom.session_options(Domain("test.pyother").add(scale(2)))
    with pytest.raises(Exception) as e:
        ortcustom.register(so, Domain("test.pyother").add(scale(3)))
    refused(str(e.value), "test.pyother", "ortcustom.register (Python) (ops Scale)")


def test_python_registration_and_a_library_of_one_domain_are_refused_either_way(libs):
    py = Domain("test.scale").add(scale(5))
    so = ortcustom.session_options(py)
    with pytest.raises(Exception) as e:
        so.register_custom_ops_library(str(libs["MAIN"]))
    refused(str(e.value), "test.scale", "ortcustom.register (Python)", libs["MAIN"])
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.register_custom_ops_library(str(libs["MAIN"]))
    with pytest.raises(Exception) as e:
        ortcustom.register(so, py)
    refused(str(e.value), "test.scale", libs["MAIN"], "ortcustom.register (Python)")


def test_python_can_put_ops_of_two_sources_in_one_domain():
    # what a plain library cannot: Inverse (ortcustom's library) and contrib's GroupNorm in one
    # com.microsoft registration
    d = Domain("com.microsoft").add(Inverse, contrib.ContribGroupNorm)
    so = ortcustom.session_options(d)
    x = np.eye(3, dtype=np.float32)[None] * 2
    np.testing.assert_allclose(session(Inverse, d, {"X": x}, so=so).run(None, {"X": x})[0], x / 4)
