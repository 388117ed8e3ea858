"""The dynamic symbols each extension module of the installed package exports (linker version
scripts, src/ortcustom/*.map): `_customop` exactly its Python entry point and RegisterCustomOps
(what ONNX Runtime looks up); any other module its Python entry point plus `ortcustom_kernel_*`
(the kernel ABI, found by dlsym)."""
import importlib.machinery
import pathlib
import shutil
import subprocess
import sys

import pytest

from ortcustom import _customop

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF modules and GNU version scripts"),
    pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)"),
]

KERNEL_PREFIX = "ortcustom_kernel_"


def extension_modules() -> list[pathlib.Path]:
    """Every extension module next to _customop (the installed package's, or an editable build's)."""
    folder = pathlib.Path(_customop.__file__).parent
    return sorted({p for suffix in importlib.machinery.EXTENSION_SUFFIXES for p in folder.glob("*" + suffix)})


def exported(path: pathlib.Path) -> set[str]:
    """Names of the symbols `path` defines in its dynamic symbol table (its exports)."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True)
    # "<address> <type> <name>[@version]"
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def unexpected_exports(module: str, names: set[str]) -> set[str]:
    if module == "_customop":
        return names - {"PyInit__customop", "RegisterCustomOps"}
    return {n for n in names if n != f"PyInit_{module}" and not n.startswith(KERNEL_PREFIX)}


def test_customop_is_found():
    assert pathlib.Path(_customop.__file__) in extension_modules()


@pytest.mark.parametrize("path", extension_modules(), ids=lambda p: p.name.split(".")[0])
def test_exports_only_entry_points(path):
    module = path.name.split(".")[0]
    names = exported(path)
    assert f"PyInit_{module}" in names
    if module == "_customop":
        assert "RegisterCustomOps" in names
    extra = unexpected_exports(module, names)
    assert not extra, f"{path.name} exports more than its version script allows: {sorted(extra)[:20]}"


def test_rule_catches_leaks():
    # the check itself: what a module without a version script leaks is reported
    assert unexpected_exports("_customop", {"PyInit__customop", "RegisterCustomOps", "oc_inverse_f32"}) == {
        "oc_inverse_f32"}
    assert unexpected_exports("_kernels", {"PyInit__kernels", "ortcustom_kernel_inverse", "RegisterCustomOps"}) == {
        "RegisterCustomOps"}
