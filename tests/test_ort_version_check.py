"""The installed onnxruntime's version is checked: a too-old one is refused clearly, before ORT is
touched."""
import types

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from helpers import session
from known_good import INV_DOM, check_inverse_works
from ortcustom import Domain, session as ocsession
from ortcustom.ops import Inverse


@pytest.mark.parametrize("version", ["1.16.3", "1.9.0", "0.5.1", "1.16.0.dev20231001"])
def test_runtime_older_than_minimum_is_a_clear_error(version):
    with pytest.raises(RuntimeError, match=f"ortcustom needs onnxruntime >= 1.17 .*installed onnxruntime is {version}"):
        ocsession._check_ort_version(types.SimpleNamespace(__version__=version))


@pytest.mark.parametrize("version", ["1.17.0", "1.17.3", "1.31.1", "1.40.0.dev20260101", "2.0.0"])
def test_supported_runtimes_pass_the_check(version):
    ocsession._check_ort_version(types.SimpleNamespace(__version__=version))


def test_registration_with_too_old_runtime_raises_before_touching_ort(monkeypatch):
    monkeypatch.setattr(ort, "__version__", "1.16.3")
    so = ort.SessionOptions()
    with pytest.raises(RuntimeError, match="needs onnxruntime >= 1.17"):
        ortcustom.register(so, Domain("org.rel.old").add(Inverse))
    monkeypatch.undo()
    sess = session(Inverse, INV_DOM, {"X": (np.float32, [3, 3])})  # and then registration works
    check_inverse_works(sess)
