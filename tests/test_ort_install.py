"""The import-time check of ONNX Runtime's installation (ortcustom._ort_install), on fake site
folders. tests/ort_install.sh checks the same with real distributions installed by pip (slow; CI)."""
import pytest

from helpers import run_python
from ortcustom._ort_install import OnnxRuntimeInstallError, onnxruntime_site, owners, problem


def add_dist(site, name, version, files):
    """A .dist-info as pip writes it: METADATA and RECORD (one `path,hash,size` line per file)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = list(files) + [f"{info.name}/METADATA", f"{info.name}/RECORD"]
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in record))
    for f in files:
        (site / f).parent.mkdir(parents=True, exist_ok=True)
        (site / f).write_text("")


ORT_FILES = ["onnxruntime/__init__.py", "onnxruntime/capi/__init__.py"]


@pytest.fixture
def site(tmp_path):
    s = tmp_path / "site-packages"
    s.mkdir()
    add_dist(s, "onnxruntime-extensions", "0.14.0", ["onnxruntime_extensions/__init__.py"])
    add_dist(s, "numpy", "2.3.0", ["numpy/__init__.py"])
    return s


def test_one_distribution_is_fine(site):
    add_dist(site, "onnxruntime-directml", "1.22.0", ORT_FILES)
    assert [d.metadata["Name"] for d in owners(site)] == ["onnxruntime-directml"]
    assert problem(site) is None


def test_no_onnxruntime_is_not_this_checks_business(site):
    assert owners(site) == []
    assert problem(site) is None
    assert problem(None) is None


def test_two_distributions_name_the_fix(site):
    add_dist(site, "onnxruntime", "1.32.0", ORT_FILES)
    add_dist(site, "onnxruntime-gpu", "1.31.1", ORT_FILES)
    msg = problem(site)
    assert "installed 2 times" in msg
    assert "onnxruntime 1.32.0 and onnxruntime-gpu 1.31.1" in msg
    assert str(site / "onnxruntime") in msg
    assert "pip uninstall -y onnxruntime onnxruntime-gpu\n" in msg
    assert "pip install onnxruntime " in msg and "--no-deps" in msg


def test_files_deleted_by_the_other_uninstall(site):
    add_dist(site, "onnxruntime-gpu", "1.31.1", ORT_FILES)
    (site / "onnxruntime" / "__init__.py").unlink()  # what `pip uninstall onnxruntime` did to it
    msg = problem(site)
    assert "missing" in msg and "pip install --force-reinstall --no-deps onnxruntime-gpu==1.31.1" in msg


def test_the_real_install_passes():
    # the environment running the tests has one ONNX Runtime
    assert onnxruntime_site() is not None
    assert len(owners(onnxruntime_site())) == 1
    assert problem(onnxruntime_site()) is None


def test_import_fails_with_the_message(site):
    add_dist(site, "onnxruntime", "1.32.0", ORT_FILES)
    add_dist(site, "onnxruntime-openvino", "1.23.0", ORT_FILES)
    r = run_python(f"import sys; sys.path.insert(0, {str(site)!r}); import ortcustom")
    assert r.returncode != 0
    assert "ortcustom._ort_install.OnnxRuntimeInstallError: ONNX Runtime is installed 2 times" in r.stderr
    assert "pip uninstall -y onnxruntime onnxruntime-openvino" in r.stderr
    assert issubclass(OnnxRuntimeInstallError, ImportError)
