"""The C test host (tests/c_host/oc_host.c): ONNX models run by ONNX Runtime's C API with no Python.

    from c_host import needs_c_library, run_host

    @needs_c_library
    def test_x():
        r = run_host(model, {"x": x}, libraries=[path_of_our_library], threads=4)
        assert r.returncode == 0 and not r.libpython

The host dlopen()s the libonnxruntime.so.* that the installed onnxruntime wheel ships (1.31 wheels do,
1.17's does not: tests then skip), is compiled once per source version with the system C compiler
(`cc`, or $CC), and talks to us through raw tensor files: a header line `<dtype> <rank> <dims...>\\n`,
then the elements, C order, little-endian. Nothing here imports ortcustom.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tests" / "c_host" / "oc_host.c"
GLUE = REPO / "src" / "ortcustom" / "glue"   # ort_abi.h, our declarations of ORT's C ABI

# numpy dtype names the host reads and writes (bfloat16 needs ml_dtypes on the numpy side)
DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "uint16",
          "int32", "uint32", "int64", "uint64", "bool")


# ------------------------------------------------------------------ the runtime
def ort_package_dir(package: str = "onnxruntime") -> Path | None:
    """The installed onnxruntime package's directory, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def ort_c_library(package_dir: Path | str | None = None) -> str | None:
    """Path of the C library (onnxruntime/capi/libonnxruntime.so.<version>) of the installed onnxruntime
    wheel (or of `package_dir`), or None where the wheel has none (ORT 1.17's links it into its
    Python extension)."""
    root = Path(package_dir) if package_dir is not None else ort_package_dir()
    if root is None:
        return None
    found = sorted((root / "capi").glob("libonnxruntime.so*"))   # not the libonnxruntime_providers_*
    return str(found[-1]) if found else None


def no_c_library_reason(package_dir: Path | str | None = None) -> str | None:
    """Why C-host tests cannot run here (a skip reason), or None when they can."""
    if ort_c_library(package_dir) is not None:
        return None
    try:
        import onnxruntime
        version = onnxruntime.__version__
    except ImportError:
        version = "(not installed)"
    return f"onnxruntime {version} ships no C library (libonnxruntime.so); the 1.31 wheels do"


try:
    import pytest

    _reason = no_c_library_reason()
    needs_c_library = pytest.mark.skipif(_reason is not None, reason=_reason or "")
except ImportError:  # usable without pytest too
    pass


# ---------------------------------------------------------------- raw tensor files
def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes  # noqa: F401  (registers the dtype with numpy)
    return np.dtype(name)


def raw_bytes(array) -> bytes:
    """`array` in the host's raw format (text: str as UTF-8, bytes as they are, each after its byte
    count as a uint64)."""
    a = np.asarray(array)
    if a.dtype.kind in "USO":
        elems = [v.encode() if isinstance(v, str) else bytes(v) for v in a.reshape(-1)]
        return (f"string {a.ndim}{''.join(f' {d}' for d in a.shape)}\n".encode()
                + b"".join(len(e).to_bytes(8, "little") + e for e in elems))
    if a.dtype.name not in DTYPES:
        raise TypeError(f"oc_host has no raw format for {a.dtype}")
    data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return f"{a.dtype.name} {a.ndim}{''.join(f' {d}' for d in a.shape)}\n".encode() + data


def write_raw(path, array) -> None:
    Path(path).write_bytes(raw_bytes(array))


def parse_raw(blob: bytes) -> np.ndarray:
    header, sep, data = blob.partition(b"\n")
    words = header.decode().split()
    if not sep or len(words) < 2 or len(words) != 2 + int(words[1]):
        raise ValueError(f"not a raw tensor: header {header[:80]!r}")
    shape = tuple(int(w) for w in words[2:])
    if words[0] == "string":  # str where the bytes are UTF-8, else bytes
        out, at = [], 0
        for _ in range(int(np.prod(shape))):
            n = int.from_bytes(data[at:at + 8], "little")
            e = data[at + 8:at + 8 + n]
            at += 8 + n
            try:
                out.append(e.decode())
            except UnicodeDecodeError:
                out.append(e)
        arr = np.empty(len(out), object)
        arr[:] = out
        return arr.reshape(shape)
    dtype = _dtype(words[0]).newbyteorder("<")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def read_raw(path) -> np.ndarray:
    return parse_raw(Path(path).read_bytes())


# ------------------------------------------------------------------------ the host
_built: dict[str, str] = {}


def build_host(tmpdir=None) -> str:
    """Path of the compiled host, built once per version of oc_host.c and ort_abi.h: the binary is
    cached in `tmpdir` (default: a per-user directory under the system temp dir) under a name made
    from the sources' paths and modification times."""
    sources = (SOURCE, GLUE / "ort_abi.h")
    key = hashlib.sha256(repr([(str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in sources])
                         .encode()).hexdigest()[:16]
    if key in _built and os.path.exists(_built[key]):
        return _built[key]
    cache = Path(tmpdir) if tmpdir is not None else Path(tempfile.gettempdir()) / f"ortcustom-c-host-{os.getuid()}"
    cache.mkdir(parents=True, exist_ok=True)
    exe = cache / f"oc_host-{key}"
    if not exe.exists():
        tmp = cache / f".oc_host-{key}-{os.getpid()}"
        cmd = [os.environ.get("CC", "cc"), "-O1", "-std=c11", "-Wall", "-Werror", f"-I{GLUE}",
               str(SOURCE), "-o", str(tmp), "-ldl", "-lpthread"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"building the C host failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        os.replace(tmp, exe)   # atomic: concurrent test processes never run a half-written binary
    _built[key] = str(exe)
    return str(exe)


@dataclasses.dataclass
class HostResult:
    returncode: int                  # 0 OK, 1 runtime, 2 usage/file, 3 register, 4 session, 5 run, 6 mismatch
    stdout: str
    stderr: str                      # ORT's own log lines
    outputs: dict[str, np.ndarray]   # by output name; empty unless the run succeeded
    libpython: bool                  # libpython was mapped into the host (printed as LIBPYTHON: yes)
    rss: dict[int, int] = dataclasses.field(default_factory=dict)  # --cycles: cycle -> resident bytes

    @property
    def error(self) -> str | None:
        """The text of the host's "ERROR: ..." line, if any."""
        m = re.search(r"^ERROR: (.*)$", self.stdout, re.M)
        return m.group(1) if m else None


def run_host(model, inputs: dict, libraries=(), threads: int = 1, repeat: int = 1, *, cycles: int = 0,
             extra_args=(), ort_library: str | None = None, timeout: float = 300) -> HostResult:
    """Runs `model` (a path, serialized bytes, or an onnx ModelProto) in the C host on `inputs`
    (name -> array), registering each of `libraries` with RegisterCustomOpsLibrary_V2, from
    `threads` threads at once, `repeat` runs each; first `cycles` times options with the libraries
    and a session made and dropped (resident memory in HostResult.rss)."""
    ort_library = ort_library or ort_c_library()
    if ort_library is None:
        raise RuntimeError(no_c_library_reason())
    exe = build_host()
    with tempfile.TemporaryDirectory(prefix="oc_host-") as work:
        work = Path(work)
        if hasattr(model, "SerializeToString"):
            model = model.SerializeToString()
        if isinstance(model, (bytes, bytearray)):
            (work / "model.onnx").write_bytes(model)
            model = work / "model.onnx"
        args = [exe, ort_library, str(model), "--out", str(work / "out"),
                "--threads", str(threads), "--repeat", str(repeat), "--cycles", str(cycles)]
        for lib in libraries:
            args += ["--library", str(lib)]
        for i, (name, value) in enumerate(inputs.items()):
            write_raw(work / f"in{i}.bin", value)
            args += ["--input", f"{name}={work / f'in{i}.bin'}"]
        args += [str(a) for a in extra_args]
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        outputs = {}
        if r.returncode == 0:
            for name in re.findall(r"^OUTPUT (\S+)", r.stdout, re.M):
                outputs[name] = read_raw(work / "out" / (name.replace("/", "_") + ".bin"))
    rss = {int(c): int(b) for c, b in re.findall(r"^RSS (\d+) (\d+)$", r.stdout, re.M)}
    return HostResult(r.returncode, r.stdout, r.stderr, outputs, "LIBPYTHON: yes" in r.stdout, rss)
