#!/usr/bin/env bash
# ortcustom next to an ONNX Runtime the machine already has, with real pip installs (slow: CI runs it).
#
#   tests/ort_install.sh [ortcustom wheel]   # default: builds one from this checkout (CUDA off)
#
# In one venv without torch:
#   1. plain `onnxruntime` installed first, then ortcustom as README.md says for that case
#      (`pip install onnx && pip install --no-deps ...`): onnxruntime stays the only ONNX Runtime,
#      and `python -m ortcustom demo` runs (its ONNX part: no torch here);
#   2. then a plain `pip install <ortcustom>`, which on Linux x86-64 adds onnxruntime-gpu over it:
#      `import ortcustom` fails, naming the fix;
#   3. the fix the message names (uninstall both, install onnxruntime-gpu): ortcustom imports again,
#      with the CUDA provider available.
# Environment: PYTHON (default python3), KEEP=1 keeps the venv.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ortcustom-ort-install.XXXXXX")
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT

fail() { echo "ort_install: FAILED: $*" >&2; exit 1; }
step() { echo "=== ort_install: $* ==="; }

wheel=${1:-}
if [[ -z $wheel ]]; then
  step "building the ortcustom wheel"
  "$PYTHON" -m pip wheel --quiet --no-deps -w "$work/wheels" -Csetup-args=-Dcuda=disabled "$REPO"
  wheel=$(ls "$work"/wheels/ortcustom-*.whl)
fi

"$PYTHON" -m venv "$work/venv"
py="$work/venv/bin/python"
pip=("$py" -m pip --disable-pip-version-check)
# the ONNX Runtime distributions installed, as "name version" lines
ort_dists() { "$py" -c "import importlib.metadata as m
print('\n'.join(sorted(f'{d.metadata[\"Name\"]} {d.version}' for d in m.distributions()
                       if d.metadata['Name'].lower().startswith('onnxruntime'))))"; }
# run from $work, so that the checkout's src/ is not on the path
in_work() { (cd "$work" && "$@"); }

step "1. onnxruntime first, then ortcustom with --no-deps"
"${pip[@]}" install --quiet onnxruntime
"${pip[@]}" install --quiet onnx
"${pip[@]}" install --quiet --no-deps "$wheel"
dists=$(ort_dists)
[[ $dists == "onnxruntime "* && $(wc -l <<< "$dists") == 1 ]] || fail "expected onnxruntime alone, got: $dists"
# the whole output first: `grep -q` on a pipe closes it at the first match, and the lines info
# prints after that would die of SIGPIPE (a failure under pipefail)
info=$(in_work "$py" -m ortcustom info) || fail "info failed"
grep -q "installed by onnxruntime " <<< "$info" || fail "info does not name onnxruntime"
in_work "$py" -m ortcustom demo | tee "$work/demo.txt"
grep -q "no PyTorch here" "$work/demo.txt" && tail -n1 "$work/demo.txt" | grep -qx OK || fail "demo"
# pip check's only complaint: the marker-selected ORT that --no-deps left out (README says so)
check=$("${pip[@]}" check 2>&1 || true)
if [[ $(uname -sm) == "Linux x86_64" ]]; then
  [[ $check == "ortcustom "*" requires onnxruntime-gpu, which is not installed." ]] || fail "pip check: $check"
fi

step "2. a plain pip install of ortcustom over it adds a second ONNX Runtime: import refuses"
if [[ $(uname -sm) != "Linux x86_64" ]]; then
  echo "(not Linux x86-64: ortcustom depends on onnxruntime itself here; nothing more to check)"
  exit 0
fi
"${pip[@]}" install --quiet "$wheel"
dists=$(ort_dists)
[[ $(wc -l <<< "$dists") == 2 ]] || fail "expected pip to add onnxruntime-gpu, got: $dists"
if in_work "$py" -c "import ortcustom" 2> "$work/err.txt"; then fail "import ortcustom succeeded over two ORTs"; fi
cat "$work/err.txt"
grep -q "OnnxRuntimeInstallError: ONNX Runtime is installed 2 times" "$work/err.txt" || fail "no clear message"
fix=$(grep -m1 "^    pip uninstall -y " "$work/err.txt") || fail "the message names no fix"

step "3. the fix the message names"
# shellcheck disable=SC2086  # the message's command, word-split as a shell would
"${pip[@]}" ${fix#    pip} --quiet
"${pip[@]}" install --quiet onnxruntime-gpu
[[ $(ort_dists) == "onnxruntime-gpu "* && $(ort_dists | wc -l) == 1 ]] || fail "after the fix: $(ort_dists)"
in_work "$py" -c "import ortcustom, onnxruntime as o
assert 'CUDAExecutionProvider' in o.get_available_providers(), o.get_available_providers()
print('ortcustom', ortcustom.__version__, 'imports with onnxruntime-gpu', o.__version__)"
step "passed"
