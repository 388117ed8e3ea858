"""The C test host itself (tests/c_host/oc_host.c), on plain ONNX models (no custom ops): plain ORT
through its C API, without Python, gives numpy's results bit for bit, from several threads, and
reports errors without crashing. Needs no ortcustom installed."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from c_host import (build_host, needs_c_library, no_c_library_reason, ort_c_library, parse_raw, raw_bytes,
                    read_raw, run_host, write_raw)

# onnx 1.23 writes IR 14, which ORT 1.31 refuses (reads <= 13) and 1.17 too (<= 9)
IR_VERSION = 8


def model(nodes, inputs, outputs):
    """A model of `nodes`; inputs/outputs: name -> (TensorProto type, shape)."""
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    return m


def add_identity(elem=TensorProto.FLOAT, shape=("n", 3)):
    """y = Identity(a + b), and the sum itself as a second output."""
    return model([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Identity", ["s"], ["y"])],
                 {"a": (elem, shape), "b": (elem, shape)}, {"y": (elem, shape), "s": (elem, shape)})


def assert_bits(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.tobytes() == expected.tobytes()


def assert_ok(r):
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("OK")
    assert "LIBPYTHON: no" in r.stdout and not r.libpython


# ------------------------------------------------------------------ without a runtime
def test_raw_format_round_trip(tmp_path):
    for a in (np.arange(6, dtype=np.float32).reshape(2, 3), np.float64(2.5), np.zeros((0, 4), np.int64),
              np.array([1.5, -0.0, np.inf], np.float16), np.array([[True, False]]),
              np.arange(12, dtype=">i4").reshape(3, 4)):       # big-endian input: written little-endian
        write_raw(tmp_path / "t.bin", a)
        back = read_raw(tmp_path / "t.bin")
        assert back.shape == np.shape(a) and back.dtype == np.asarray(a).dtype.newbyteorder("=")
        assert np.array_equal(back, a)
    assert raw_bytes(np.array([[1, 2]], np.int64)) == b"int64 2 1 2\n" + np.array([1, 2], "<i8").tobytes()
    assert raw_bytes(np.float32(1)) == b"float32 0\n" + np.float32(1).tobytes()
    with pytest.raises(ValueError):
        parse_raw(b"float32 2 3\n")


def test_skip_path_without_c_library(tmp_path):
    """ORT 1.17's wheel has no libonnxruntime.so (only its Python extension): the helper says so."""
    (tmp_path / "capi").mkdir()
    (tmp_path / "capi" / "onnxruntime_pybind11_state.so").write_bytes(b"")
    (tmp_path / "capi" / "libonnxruntime_providers_shared.so").write_bytes(b"")
    assert ort_c_library(tmp_path) is None
    reason = no_c_library_reason(tmp_path)
    assert reason.startswith("onnxruntime ") and "ships no C library (libonnxruntime.so); the 1.31 wheels do" in reason
    (tmp_path / "capi" / "libonnxruntime.so.1.31.1").write_bytes(b"")
    assert ort_c_library(tmp_path) == str(tmp_path / "capi" / "libonnxruntime.so.1.31.1")
    assert no_c_library_reason(tmp_path) is None


# ----------------------------------------------------------------------- the host
@needs_c_library
def test_builds_warning_free():
    assert build_host() == build_host()   # cached: compiled once


@needs_c_library
def test_float32_bit_exact(tmp_path):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((7, 3)).astype(np.float32) for _ in range(2))
    path = tmp_path / "add.onnx"
    onnx.save(add_identity(), path)
    r = run_host(path, {"a": a, "b": b})            # a model file
    assert_ok(r)
    assert sorted(r.outputs) == ["s", "y"]
    assert_bits(r.outputs["y"], a + b)
    assert_bits(r.outputs["s"], a + b)
    assert "ORT: " in r.stdout


@needs_c_library
def test_float64_bit_exact():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    m = model([helper.make_node("Mul", ["x", "y"], ["p"]), helper.make_node("Sub", ["p", "x"], ["z"])],
              {"x": (TensorProto.DOUBLE, [4, 5]), "y": (TensorProto.DOUBLE, [4, 5])},
              {"z": (TensorProto.DOUBLE, [4, 5])})
    r = run_host(m.SerializeToString(), {"x": x, "y": y})   # serialized bytes
    assert_ok(r)
    assert_bits(r.outputs["z"], x * y - x)


@needs_c_library
@pytest.mark.parametrize("dtype", ["float16", "int64", "int32", "uint8", "bool", "float64"])
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 3)])
def test_identity_round_trip(dtype, shape):
    """Every byte of the raw format crosses the host unchanged, scalars and empty tensors included."""
    x = (np.random.default_rng(2).standard_normal(shape) * 100).astype(dtype)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    r = run_host(model([helper.make_node("Identity", ["x"], ["y"])], {"x": (elem, list(shape))}, {"y": (elem, list(shape))}),
                 {"x": x})
    assert_ok(r)
    assert_bits(r.outputs["y"], x)


@needs_c_library
def test_threads_agree():
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((512, 3)).astype(np.float32) for _ in range(2))
    r = run_host(add_identity(), {"a": a, "b": b}, threads=4, repeat=8)
    assert_ok(r)
    assert "MISMATCH" not in r.stdout
    assert_bits(r.outputs["y"], a + b)


@needs_c_library
@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("bad", ["rank", "type", "missing"])
def test_bad_input_is_an_error_not_a_crash(bad, threads):
    a = np.ones((2, 3), np.float32)
    inputs = {"rank": {"a": a, "b": np.ones((2, 3, 1), np.float32)},
              "type": {"a": a, "b": np.ones((2, 3), np.float64)},
              "missing": {"a": a}}[bad]
    r = run_host(add_identity(), inputs, threads=threads, repeat=2)
    assert r.returncode == 5, r.stdout + r.stderr   # not a signal (negative) nor another failure
    assert r.error and "OK" not in r.stdout.split()


@needs_c_library
def test_missing_library_is_reported(tmp_path):
    lib = tmp_path / "no_such_library.so"
    r = run_host(add_identity(), {"a": np.ones((1, 3), np.float32), "b": np.ones((1, 3), np.float32)},
                 libraries=[lib])
    assert r.returncode == 3, r.stdout + r.stderr
    assert str(lib) in r.error and "cannot open shared object file" in r.error   # ORT's message, with dlopen's


@needs_c_library
def test_bad_model_is_reported():
    r = run_host(b"not an onnx model", {})
    assert r.returncode == 4 and r.error, r.stdout + r.stderr


@needs_c_library
def test_no_libpython():
    """A plain C host has no libpython; what the tests of our libraries rely on to see that they
    pull none in."""
    r = run_host(add_identity(), {"a": np.ones((1, 3), np.float32), "b": np.ones((1, 3), np.float32)})
    assert_ok(r)
    assert "LIBPYTHON: no" in r.stdout.splitlines()


@needs_c_library
def test_differing_runs_are_a_mismatch():
    """RandomNormal without a seed draws new numbers each run: the host must notice."""
    m = model([helper.make_node("RandomNormal", [], ["r"], shape=[64], dtype=TensorProto.FLOAT)],
              {}, {"r": (TensorProto.FLOAT, [64])})
    r = run_host(m, {}, threads=2, repeat=2)
    assert r.returncode == 6, r.stdout + r.stderr
    assert "MISMATCH" in r.stdout and "OK" not in r.stdout.split()
    single = run_host(m, {})                 # one run: nothing to compare
    assert_ok(single)
    assert single.outputs["r"].shape == (64,)
