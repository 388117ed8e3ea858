"""The dynamic symbols of the installed package's binaries (linker version scripts): `_customop`
exports exactly its Python entry point and RegisterCustomOps (what ONNX Runtime looks up when
ortcustom.register hands it the module); the plain custom-op libraries (ortcustom/_kernels.so,
ortcustom/ops/_contrib.so) export RegisterCustomOps, the kernel entries (`ortcustom_kernel_*`, found
by dlsym) and `ortcustom_info_*`, and need nothing of Python."""
import pathlib
import shutil
import subprocess
import sys

import pytest

import ortcustom
from ortcustom import _customop
from ortcustom.ops import contrib

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF modules and GNU version scripts"),
    pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)"),
]

LIBRARIES = [pathlib.Path(ortcustom.get_library_path()), pathlib.Path(contrib.get_library_path())]


def symbols(path: pathlib.Path, which: str) -> set[str]:
    """Names in `path`'s dynamic symbol table: its exports (defined) or its imports (undefined)."""
    out = subprocess.run(["nm", "-D", f"--{which}-only", str(path)], capture_output=True, text=True, check=True)
    # "<address> <type> <name>[@version]"
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def unexpected_exports(path: pathlib.Path, names: set[str]) -> set[str]:
    if path.name.startswith("_customop"):
        return names - {"PyInit__customop", "RegisterCustomOps"}
    return {n for n in names if n != "RegisterCustomOps" and not n.startswith(("ortcustom_kernel_", "ortcustom_info_"))}


@pytest.mark.parametrize("path", [pathlib.Path(_customop.__file__)] + LIBRARIES, ids=lambda p: p.name.split(".")[0])
def test_exports_only_entry_points(path):
    names = symbols(path, "defined")
    assert "RegisterCustomOps" in names
    extra = unexpected_exports(path, names)
    assert not extra, f"{path.name} exports more than its version script allows: {sorted(extra)[:20]}"


@pytest.mark.parametrize("path", LIBRARIES, ids=lambda p: p.name.split(".")[0])
def test_plain_libraries_need_no_python(path):
    assert "ortcustom_kernel_inverse_cpu" in symbols(LIBRARIES[0], "defined")
    python = {n for n in symbols(path, "undefined") if n.startswith(("Py", "_Py"))}
    assert not python, f"{path.name} needs Python symbols: {sorted(python)[:10]}"


def test_rule_catches_leaks():
    # the check itself: what a binary without a version script leaks is reported
    assert unexpected_exports(pathlib.Path("_customop.so"), {"PyInit__customop", "RegisterCustomOps", "oc_inverse_f32"}) == {
        "oc_inverse_f32"}
    assert unexpected_exports(LIBRARIES[0], {"ortcustom_kernel_inverse_cpu", "RegisterCustomOps", "oc_glue_register"}) == {
        "oc_glue_register"}
