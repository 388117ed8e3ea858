"""The command line, `python -m ortcustom`: info, config (the headers for builds of your own), new (a
package scaffold). The demo: tests/test_demo.py."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import ortcustom


def test_cli_info(tmp_path):  # the demo: tests/test_demo.py
    out = subprocess.run([sys.executable, "-m", "ortcustom", "info"], capture_output=True, text=True, check=True,
                         cwd=tmp_path)
    assert "ortcustom" in out.stdout
    assert "onnxruntime found" in out.stdout and "Inverse" in out.stdout and "minimum onnxruntime: 1.17" in out.stdout
    assert "installed by onnxruntime" in out.stdout


# ---- the headers, for builds of your own --------------------------------------------------------

def ortcustom_cli(*args):
    return subprocess.run([sys.executable, "-m", "ortcustom", *args], capture_output=True, text=True, timeout=120)


def test_config_gives_the_headers():
    inc = ortcustom.get_include()
    assert (pathlib.Path(inc) / "ortcustom" / "kernel.h").exists()
    r = ortcustom_cli("config", "--cflags")
    assert r.returncode == 0 and r.stdout.strip() == f"-I{inc}"
    r = ortcustom_cli("config", "--pkgconfigdir")
    if r.returncode != 0:
        assert "editable install" in r.stderr
        pytest.skip("an editable install has no pkg-config file")
    if shutil.which("pkg-config") is None:
        pytest.skip("no pkg-config")
    env = dict(os.environ, PKG_CONFIG_PATH=r.stdout.strip())
    pc = subprocess.run(["pkg-config", "--cflags", "--print-errors", "ortcustom"], env=env, capture_output=True,
                        text=True, check=True)
    assert os.path.realpath(pc.stdout.strip().removeprefix("-I")) == os.path.realpath(inc)
    version = subprocess.run(["pkg-config", "--modversion", "ortcustom"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == ortcustom.__version__


# ---- python -m ortcustom new (CI builds and tests what it writes: .ci/run) ---------------------

def test_new_writes_a_package_named_throughout(tmp_path):
    r = ortcustom_cli("new", "tensorthings", "--dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    root = tmp_path / "tensorthings"
    steps = [line.split("#")[0].strip() for line in r.stdout.splitlines()]  # the README's build steps
    assert steps[2:5] == [f"cd {root}", "pip install meson-python meson ninja", "pip install --no-build-isolation ."]
    files = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert {"pyproject.toml", "meson.build", "meson.options", "kernels/scaled_add.h",
            "kernels/cpu/scaled_add.cpp", "kernels/cuda/scaled_add.cu", "src/tensorthings/ops.py",
            "src/tensorthings/__init__.py", "src/tensorthings/torch_ops.py", "tests/test_scaled_add.py",
            "benchmarks/bench_scaled_add.py"} <= files
    assert not any("pycache" in f for f in files)
    for f in files:
        assert "myops" not in (root / f).read_text(), f
    assert 'native="tensorthings._kernels:scaled_add"' in (root / "src/tensorthings/ops.py").read_text()
    assert '"ortcustom"' in (root / "pyproject.toml").read_text()  # build-system.requires
    r = ortcustom_cli("new", "tensorthings", "--dir", str(tmp_path))
    assert r.returncode == 2 and "already exists" in r.stderr


@pytest.mark.parametrize("name, why", [("My-Ops", "lowercase Python identifier"), ("class", "identifier"),
                                       ("numpy", "already an importable module")])
def test_new_refuses_bad_names(tmp_path, name, why):
    r = ortcustom_cli("new", name, "--dir", str(tmp_path))
    assert r.returncode == 2 and why in r.stderr
    assert not (tmp_path / name).exists()
