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
    assert '"ortcustom"' in (root / "pyproject.toml").read_text()  # its dependencies (not build-system.requires: test_an_isolated_build_says_so)
    r = ortcustom_cli("new", "tensorthings", "--dir", str(tmp_path))
    assert r.returncode == 2 and "already exists" in r.stderr


@pytest.mark.parametrize("name, why", [("My-Ops", "lowercase Python identifier"), ("class", "identifier"),
                                       ("numpy", "already an importable module")])
def test_new_refuses_bad_names(tmp_path, name, why):
    r = ortcustom_cli("new", name, "--dir", str(tmp_path))
    assert r.returncode == 2 and why in r.stderr
    assert not (tmp_path / name).exists()


# ---- what a user types first: --help, --version, wrong names -----------------------------------

COMMANDS = {"info", "demo", "new", "config", "library", "library-source", "library-check"}


def test_help_lists_every_command_and_each_runs_its_help():
    r = ortcustom_cli("--help")
    assert r.returncode == 0
    listed = {line.split()[0] for line in r.stdout.split("  COMMAND\n", 1)[1].split("\noptions:")[0].splitlines()
              if line.startswith("    ") and not line.startswith("     ")}
    assert listed == COMMANDS
    assert "--version" in r.stdout
    for command in COMMANDS:  # each listed command is there: its own --help
        r = ortcustom_cli(command, "--help")
        assert r.returncode == 0 and r.stdout.startswith("usage: python -m ortcustom " + command), (command, r.stderr)


def test_version():
    r = ortcustom_cli("--version")
    assert (r.returncode, r.stdout) == (0, f"ortcustom {ortcustom.__version__}\n")


@pytest.mark.parametrize("ref, error", [
    ("nosuchpkg", "nosuchpkg: ModuleNotFoundError: No module named 'nosuchpkg'"),
    ("ortcustom.ops:nope", "ortcustom.ops:nope: AttributeError: module 'ortcustom.ops' has no attribute 'nope'")])
def test_library_of_what_is_not_there_is_one_line(ref, error):
    r = ortcustom_cli("library", ref)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"python -m ortcustom library: {error}\n")


def test_library_of_a_list_of_domains_gives_their_library():
    r = ortcustom_cli("library", "ortcustom.ops:library_domains")
    assert (r.returncode, r.stdout) == (0, ortcustom.get_library_path() + "\n")


TYPO = '''from ortcustom import Attr, Domain, Input, Op, Output

ScaledAdd = Op("ScaledAdd", inputs=[Input("X", "T"), Input("Y", "T")], outputs=[Output("Z", "T", shape="X")],
               types={"T": ("float", "dobule")}, attrs=[Attr("alpha", "float", default=1.0)],
               native="typoops._kernels:scaled_add")
domain = Domain("typoops").add(ScaledAdd)
'''


@pytest.mark.parametrize("command", ["library-source", "library-check"])
def test_a_typo_in_a_declaration_at_build_time_is_one_line(tmp_path, command):
    # as a package's meson.build runs them: the declarations imported from its source tree
    (tmp_path / "typoops").mkdir()
    decl = tmp_path / "typoops" / "ops.py"
    decl.write_text(TYPO)
    (tmp_path / "typoops" / "__init__.py").write_text("from .ops import ScaledAdd, domain\n")
    args = ["--path", str(tmp_path), "typoops:domain", "-o", str(tmp_path / "out")]
    r = ortcustom_cli(command, *(args if command == "library-source" else [str(tmp_path / "lib.so"), *args]))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"ortcustom {command}: {decl}:3: ValueError: op 'ScaledAdd': type constraint 'T': "
                               f"unknown element type 'dobule'; known: ")
    assert r.stderr.count("\n") == 1 and not (tmp_path / "out").exists()
    decl.write_text(TYPO.replace("Output(", "Outptu("))  # a name that is not there
    r = ortcustom_cli(command, *(args if command == "library-source" else [str(tmp_path / "lib.so"), *args]))
    assert r.stderr == f"ortcustom {command}: {decl}:3: NameError: name 'Outptu' is not defined\n"
    decl.write_text(TYPO.replace('"ScaledAdd",', '"ScaledAdd"'))  # Python's own syntax error
    r = ortcustom_cli(command, *(args if command == "library-source" else [str(tmp_path / "lib.so"), *args]))
    assert r.stderr.startswith(f"ortcustom {command}: {decl}:3: SyntaxError: ") and r.stderr.count("\n") == 1


# ---- info: the domains and ops that ortcustom and installed op packages register -----------------

INFO_PACKAGE = '''
import numpy as np
from ortcustom import Attr, Domain, Input, Op, Output

Clamp = Op("Clamp", inputs=[Input("X", "T"), Input("limit", "T", optional=True)],
           outputs=[Output("Y", "T", shape="X"), Output("hits", "int64")], types={"T": ("float", "int32")},
           attrs=[Attr("low", "float", default=-1.5, min=-10), Attr("mode", "int", default=0, choices=(0, 2)),
                  Attr("tag", "string")], since=2, until=4, compute=lambda X, limit=None, **a: (X, np.zeros(1)))
domain = Domain("infoops", 3).add(Clamp)
'''


def test_info_lists_the_domains_of_ortcustom_and_of_installed_packages(tmp_path):
    (tmp_path / "infoops").mkdir()
    (tmp_path / "infoops" / "__init__.py").write_text(INFO_PACKAGE)
    dist = tmp_path / "infoops-0.1.dist-info"  # what pip installs for a package whose pyproject declares them
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: infoops\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ortcustom.domains]\ninfoops = infoops:domain\ngone = gone_ops:domain\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "ortcustom", "info"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert ("    ortcustom (ortcustom.ops:library_domains):\n"
            "      domain 'com.microsoft' (version 1):\n"
            "        Inverse [opset 1+] (X: T) -> (Y: T) with T in {float, double, float16}\n"
            "          kernel: native inverse\n") in out
    assert "        GroupNorm [opset 1+] (X: T, num_groups?: int64, scale?: T, bias?: T) -> (Y: T)" in out
    assert "          attribute epsilon: float, default 1e-05, >= 0\n" in out
    assert "SkipGroupNorm [opset 1+]" in out  # the contrib library's
    assert ("    package infoops (infoops:domain):\n"
            "      domain 'infoops' (version 3):\n"
            "        Clamp [opsets 2-4] (X: T, limit?: T) -> (Y: T, hits: int64) with T in {float, int32}\n"
            "          attribute low: float, default -1.5, >= -10\n"
            "          attribute mode: int, default 0, one of [0, 2]\n"
            "          attribute tag: string, required\n"
            "          kernel: Python\n") in out
    assert ("    package infoops (gone_ops:domain):\n"
            "      cannot load it: ModuleNotFoundError: No module named 'gone_ops'\n") in out


def test_the_scaffold_declares_its_domains_for_info(tmp_path):
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    assert ortcustom_cli("new", "listedops", "--dir", str(tmp_path)).returncode == 0
    with open(tmp_path / "listedops" / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["entry-points"]["ortcustom.domains"] == {"listedops": "listedops:domain"}


# ---- the scaffold's build and README -------------------------------------------------------------

def test_an_isolated_build_says_to_use_no_build_isolation(tmp_path):
    # pip's isolated build environment has meson but no ortcustom: its meson.build stops, saying why
    pytest.importorskip("mesonbuild")
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (meson's project() needs one)")
    assert ortcustom_cli("new", "isoops", "--dir", str(tmp_path)).returncode == 0
    shadow = tmp_path / "isolated" / "ortcustom"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not in this environment')\n")
    r = subprocess.run([sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(tmp_path / "build"),
                        str(tmp_path / "isoops"), "-Dcuda=disabled"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(shadow.parent)))
    assert r.returncode != 0
    assert ("ERROR: Problem encountered: ortcustom does not import in the Python running this build (ImportError: "
            "not in this environment). Build with\n  pip install --no-build-isolation .\nin the environment that has "
            "ortcustom (pip's isolated build environment has none).") in r.stdout


def test_the_readme_and_the_scaffold_pin_one_torch():
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    scaffold = (pathlib.Path(ortcustom.__file__).parent / "template" / "README.md").read_text()
    pins = [set(re.findall(r"\btorch==([0-9.]+)", text)) for text in (readme, scaffold)]
    assert pins[0] == pins[1] and len(pins[0]) == 1, pins


def test_the_readme_adds_the_test_extra_without_a_rebuild():
    import re

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = pathlib.Path(__file__).resolve().parents[1]
    with open(root / "pyproject.toml", "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["test"]
    (line,) = re.findall(r"`pip install (pytest [^`]*)`", (root / "README.md").read_text())
    assert sorted(re.split(r"[=<>]", p)[0] for p in line.split()) == sorted(re.split(r"[=<>]", p)[0] for p in extra)
