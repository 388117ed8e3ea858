"""`python -m ortcustom demo`, as a user runs it: with PyTorch (both exporters) and without."""
import re
import subprocess
import sys

import pytest

from helpers import run_python

TIMED = re.compile(r"timed, median run: with ortcustom \d+\.\d+ ms, with ORT's built-in com\.microsoft Inverse "
                   r"\d+\.\d+ ms \(ortcustom: \d+\.\d+x its time\)$")


def test_demo_with_pytorch(tmp_path):
    pytest.importorskip("torch")
    r = subprocess.run([sys.executable, "-m", "ortcustom", "demo"], capture_output=True, text=True, timeout=300,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("ortcustom ") and "x: 64 matrices 16x16 float32" in lines[0]
    assert lines[1].startswith("[1/5] PyTorch ") and lines[1].endswith("y = torch.inverse(x) + x")
    assert re.fullmatch(r"\[2/5\] exported with the TorchScript exporter \(dynamo=False\) in \d+\.\d s: "
                        r"com\.microsoft::Inverse, Add", lines[2])
    assert re.fullmatch(r"\[3/5\] exported with the dynamo exporter \(dynamo=True\) in \d+\.\d s: "
                        r"com\.microsoft::Inverse, Add", lines[3])
    assert lines[4].startswith("[4/5] ran in ORT with ortcustom's Inverse: max |ORT - PyTorch| = ")
    assert "(TorchScript model)" in lines[4] and "(dynamo model)" in lines[4]
    errs = [float(v) for v in re.findall(r"(\d\.\de[-+]\d+) \(", lines[4])]
    assert len(errs) == 2 and max(errs) < 1e-4
    assert lines[5].startswith("[5/5] ") and TIMED.search(lines[5])
    assert lines[6:] == ["OK"]


def test_demo_without_pytorch():
    # None in sys.modules makes `import torch` raise ImportError, as if it were not installed
    r = run_python("import sys; sys.modules['torch'] = None\n"
                   "from ortcustom.__main__ import main; sys.exit(main(['demo']))")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].startswith('[1/3] no PyTorch here (to export from it: pip install torch onnxscript, or in an '
                               'ortcustom checkout pip install ".[torch]"): ')
    assert lines[1].endswith("built with onnx.helper: com.microsoft::Inverse, Add")
    m = re.fullmatch(r"\[2/3\] ran in ORT with ortcustom's Inverse: max \|ORT - NumPy\| = (\S+) \(onnx\.helper model\)",
                     lines[2])
    assert m and float(m.group(1)) < 1e-4
    assert lines[3].startswith("[3/3] ") and TIMED.search(lines[3])
    assert lines[4:] == ["OK"]
