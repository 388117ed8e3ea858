"""Session configuration entries read by a kernel (`oc_config`, ctx.config): ORT's convention names an
op's own "custom_op.<op name>.<key>"; a kernel reads them at creation and at each run, in a session
and in a plain library loaded without ortcustom (ONNX Runtime 1.24 or newer; an older one gives the
kernel a clear error naming the version). A direct call has no session: every entry is unset."""
from __future__ import annotations

import os
import shutil
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.testing import make_model
from helpers import CPU
from plain_library import build_library, without_ortcustom

HERE = os.path.dirname(__file__)
NEW_ENOUGH = tuple(int(x) for x in ort.__version__.split(".")[:2]) >= (1, 24)
DECLARATIONS = textwrap.dedent("""
    from ortcustom import Attr, Domain, Input, Op, Output

    ConfigEcho = Op("ConfigEcho", [Input("X", "float")], [Output("Y", "string")], attrs=[Attr("key", "string")],
                    native="configops._kernels:config_echo")
    domain = Domain("configops").add(ConfigEcho)
""")
X = np.zeros(1, np.float32)


@pytest.fixture(scope="module")
def configops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("config") / "src"
    (src / "configops").mkdir(parents=True)
    (src / "configops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "configops:domain", [os.path.join(HERE, "native", "constant_kernels.cpp")],
                        src / "configops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import configops

    yield configops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "configops"]:
        del sys.modules[name]


def run_session(pkg, entries, key="greeting"):
    so = ortcustom.session_options(pkg.domain)
    for k, v in entries.items():
        so.add_session_config_entry(k, v)
    m = make_model(pkg.ConfigEcho, pkg.domain, {"X": X}, attrs={"key": key})
    return ort.InferenceSession(m.SerializeToString(), so, providers=CPU).run(None, {"X": X})[0].tolist()


@pytest.mark.skipif(not NEW_ENOUGH, reason=f"onnxruntime {ort.__version__} gives kernels no configuration entries")
def test_a_kernel_reads_its_config_entries_in_a_session(configops):
    pkg, _ = configops
    assert run_session(pkg, {"custom_op.ConfigEcho.greeting": "h\u00e9llo"}) == ["h\u00e9llo", "h\u00e9llo"]
    assert run_session(pkg, {"custom_op.ConfigEcho.other": "x"}) == ["(unset)", "(unset)"]
    assert run_session(pkg, {"custom_op.ConfigEcho.other": "x"}, key="other") == ["x", "x"]
    assert run_session(pkg, {}) == ["(unset)", "(unset)"]


@pytest.mark.skipif(not NEW_ENOUGH, reason=f"onnxruntime {ort.__version__} gives kernels no configuration entries")
def test_a_plain_library_reads_them_without_ortcustom(configops, tmp_path):
    pkg, lib = configops
    m = make_model(pkg.ConfigEcho, pkg.domain, {"X": X}, attrs={"key": "greeting"})
    r = without_ortcustom([lib], None, tmp_dir=tmp_path, code_after=textwrap.dedent(f"""
        so2 = ort.SessionOptions()
        so2.add_session_config_entry("custom_op.ConfigEcho.greeting", "bonjour")
        so2.register_custom_ops_library({str(lib)!r})
        sess = ort.InferenceSession({m.SerializeToString()!r}, so2, providers=["CPUExecutionProvider"])
        print("ECHO", sess.run(None, {{"X": np.zeros(1, np.float32)}})[0].tolist())
    """))
    assert r["failed"] is None and "ECHO ['bonjour', 'bonjour']" in r["stdout"], r


@pytest.mark.skipif(NEW_ENOUGH, reason=f"onnxruntime {ort.__version__} gives kernels their configuration entries")
def test_an_older_runtime_gives_a_clear_error(configops):
    pkg, _ = configops
    with pytest.raises(Exception, match=rf"ConfigEcho \(node 'n0'\): oc_config\(\"custom_op.ConfigEcho.greeting\"\): "
                                        rf"ONNX Runtime {ort.__version__} gives a kernel no session configuration entries"):
        run_session(pkg, {"custom_op.ConfigEcho.greeting": "x"})


def test_a_direct_call_has_no_entries(configops):
    pkg, _ = configops
    assert kernels.call(pkg.ConfigEcho, X, key="greeting").tolist() == ["(unset)", "(unset)"]
