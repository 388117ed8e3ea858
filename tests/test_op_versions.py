"""Several versions of one op (`since`/`until`) and an op's last version (`until`) on every path.

ONNX Runtime makes one schema per custom op name and domain, from the first op of that name, and
never tells a custom op which opset of its domain a model imports: of two versions it ran the first
for every model, and an op declared for opsets 1..4 ran for a model at opset 7. What it cannot
honour is refused at registration, in the same words from ortcustom.register (ValueError), a plain
library loaded by a Python without ortcustom and by a C host; in Python, `domain.at(opset)` (the
user says which opset the models import) registers the one version valid there."""
import re

import numpy as np
import pytest

import ortcustom
from c_host import needs_c_library, run_host
from helpers import CPU, session
from ortcustom import Domain, Input, Op, Output
from ortcustom.testing import make_model
from plain_library import registration_declarations, registration_library, without_ortcustom

decl = registration_declarations()


def words(domain, spans):
    return f"domain '{domain}' declares op 'Scale' for versions {spans}"


SEVERAL = "[1, 4], [5, inf]; ONNX Runtime takes one version of a custom op per domain"
ONLY = "[1, 4] only; ONNX Runtime does not tell a custom op which opset a model imports"


def python_scale(**versions):
    factor = 2 if versions.get("until") else 3
    return Op("Scale", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: factor * X,
              **versions)


PY_OLD, PY_NEW = python_scale(until=4), python_scale(since=5)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("versions")
    return {name: registration_library(name, tmp) for name in ("VERSIONS", "UNTIL")}


def refusal(text, domain):
    """The glue's sentence, without the "ortcustom: " prefix and ORT's decoration."""
    m = re.search(re.escape(f"domain '{domain}' declares") + r"[^\n]*", text)
    assert m, text
    return m.group(0).replace(domain, "<domain>")


# ---- the Python path ----------------------------------------------------------------------------

def test_python_refuses_several_versions_and_until_when_the_opset_is_unknown():
    with pytest.raises(ValueError, match=re.escape(words("test.pyversions", SEVERAL))):
        ortcustom.session_options(Domain("test.pyversions").add(PY_OLD, PY_NEW))
    with pytest.raises(ValueError, match=re.escape(words("test.pyuntil", ONLY))):
        ortcustom.session_options(Domain("test.pyuntil").add(python_scale(until=4)))


def test_python_at_the_models_opset_runs_that_version():
    d = Domain("test.pyat").add(PY_OLD, PY_NEW)
    x = np.ones(3, np.float32)
    for opset, factor in ((1, 2), (4, 2), (5, 3), (7, 3)):
        sess = session(PY_OLD, d, {"X": x}, domain_version=opset, so=ortcustom.session_options(d.at(opset)))
        np.testing.assert_array_equal(sess.run(None, {"X": x})[0], factor * x)
    # `since` is ORT's to enforce: a model older than the one version registered finds no schema
    with pytest.raises(Exception, match="Scale"):
        session(PY_OLD, d, {"X": x}, domain_version=3, so=ortcustom.session_options(d.at(5)))


def test_the_description_shows_what_each_version_declares():
    d = Domain("test.pydesc").add(PY_OLD, PY_NEW)
    assert [(b["since"], b["until"]) for b in ortcustom._customop.describe(d)] == [(1, 4), (5, 2 ** 31 - 1)]


# ---- a plain library (no Python in it) -------------------------------------------------------------

def model(domain, opset):
    return make_model(decl.OLD, domain, {"X": np.ones(3, np.float32)}, domain_version=opset)


@pytest.mark.parametrize("name, domain, tail", [("VERSIONS", "test.versions", SEVERAL), ("UNTIL", "test.until", ONLY)])
def test_library_from_python_without_ortcustom_refuses_at_registration(libs, tmp_path, name, domain, tail):
    r = without_ortcustom([libs[name]], tmp_dir=tmp_path)
    assert r["failed"] == "register", r
    assert words(domain, tail) in r["error"]
    # the Python path's sentence, word for word
    with pytest.raises(ValueError) as e:
        ortcustom.session_options(Domain("test.pysame").add(*((PY_OLD, PY_NEW) if name == "VERSIONS"
                                                              else (python_scale(until=4),))))
    assert refusal(r["error"], domain) == refusal(str(e.value), "test.pysame")


@needs_c_library
@pytest.mark.parametrize("name, domain, tail", [("VERSIONS", "test.versions", SEVERAL), ("UNTIL", "test.until", ONLY)])
def test_library_in_a_c_host_refuses_at_registration(libs, name, domain, tail):
    for opset in (1, 5, 7):  # no model of any opset runs a version it does not import
        r = run_host(model(domain, opset), {"X": np.ones(3, np.float32)}, libraries=[libs[name]])
        assert r.returncode == 3, r.stdout  # registration
        assert words(domain, tail) in r.error


def test_a_package_build_refuses_what_its_library_would_refuse(libs):
    # the build's library-check step runs the same check as RegisterCustomOps
    import subprocess
    import sys

    from plain_library import NATIVE

    for name, domain, tail in (("VERSIONS", "test.versions", SEVERAL), ("UNTIL", "test.until", ONLY)):
        r = subprocess.run([sys.executable, "-m", "ortcustom", "library-check", "--path", str(NATIVE), str(libs[name]),
                            f"registration_ops:{name}"], capture_output=True, text=True)
        assert r.returncode == 1, r.stdout + r.stderr
        assert words(domain, tail) in r.stderr
