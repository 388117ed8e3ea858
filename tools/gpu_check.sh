#!/usr/bin/env bash
# The GPU checks in as little device time as a lent machine allows (15 minutes a session: see
# ../shared/device/README.md, whose gpu-check.sh runs the whole suite). Two halves:
#
#   here:   bash tools/gpu_check.sh prepare
#           onnxruntime-gpu's wheel, repacked as an xz tarball without the TensorRT provider (~204 MB,
#           4 pieces of 52 MB in .devwheels/: one device call each, `cp .devwheels/xz-a /tmp/dw/`
#           carrying that piece), and this script and meson-python in .devwheels/small
#   there:  bash .devwheels/small/gpu_check.sh test|sanitize|bench   (carry [".devwheels/small"])
#           first call: joins the pieces into /tmp/site, builds for the GPU's arch (~100 s fresh on
#           16 cores, seconds after); logs under $OUT, each test's result as it ends (-v: a run
#           cut off still names its failures)
#
# Measured on an H200 (2026-11-28, two leases): build 81-127 s fresh; tests/test_cuda.py 118-125 s on
# 8 workers (all passed); memcheck on the subset below 55 s (46 cases); bench 36 s. The 4 piece calls
# and the test step, back to back, took ~260 s of lease. Make the calls back to back: an idle machine
# goes back after 30 s.
set -uo pipefail
step=${1:?prepare, test, sanitize or bench}
if [ "$step" = prepare ]; then
  self=$(readlink -f "$0")  # (before the cd below: $0 may be relative)
  root=$(git rev-parse --show-toplevel) && cd "$root" || exit 1
  grep -qxF "/.devwheels/" .git/info/exclude || echo "/.devwheels/" >> .git/info/exclude
  rm -rf .devwheels && mkdir -p .devwheels/small .devwheels/unpack || exit 1
  plat=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
        --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
  python3 -m pip download -q --no-deps "${plat[@]}" -d .devwheels/unpack "onnxruntime-gpu==${ORT_VERSION:-1.31.1}" &&
  python3 -m pip download -q --no-deps "${plat[@]}" -d .devwheels/small meson-python pyproject-metadata || exit 1
  (cd .devwheels/unpack && python3 -m zipfile -e onnxruntime_gpu-*.whl . && rm -f ./*.whl \
     onnxruntime/capi/libonnxruntime_providers_tensorrt.so && tar -cf - . | xz -T0 -6 > ../ort.tar.xz) || exit 1
  (cd .devwheels && split -b 52000000 -a 1 ort.tar.xz xz- && rm -rf ort.tar.xz unpack)
  cp "$self" .devwheels/small/gpu_check.sh
  ls -la .devwheels; exit 0
fi
OUT=${OUT:-/tmp/gpu-check-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
py=python3 site=/tmp/site root=$(pwd)
t0=$(date +%s); at() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
if [ ! -f $site/.ok ]; then
  mkdir -p $site && $py -m pip install -q --no-index --no-deps --target $site .devwheels/small/*.whl || exit 1
  if ls /tmp/dw/xz-* >/dev/null 2>&1; then
    cat /tmp/dw/xz-* | $py -c "import sys, tarfile; tarfile.open(fileobj=sys.stdin.buffer, mode='r|xz').extractall('$site')" || exit 1
  fi
  touch $site/.ok; at "onnxruntime-gpu in $site"
fi
export PYTHONPATH=$site
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
$py -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=/tmp/oc-build -Csetup-args=-Dcuda=enabled \
  "-Csetup-args=-Dgpu_archs=$arch" . > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
at "built for sm_$arch"
cd /tmp || exit 1  # the installed copy, not the source tree
$py -c "import onnxruntime as o, ortcustom; print('onnxruntime', o.__version__, o.get_available_providers(), ortcustom.build_info())"
T=$root/tests
case $step in
  test)
    timeout 300 $py -m pytest -v --tb=short --durations=20 -p no:cacheprovider --timeout 120 -n 8 $T/test_cuda.py \
      > "$OUT/test.log" 2>&1
    echo "rc $?"; grep -E "FAILED|ERROR" "$OUT/test.log" | head -40; tail -25 "$OUT/test.log"
    # the GPU cases of other files: device arrays in direct calls, CuPy Python ops, the providers'
    # fallbacks, the fused UNet block (names with cuda, cupy, gpu, device or unet)
    timeout 150 $py -m pytest -v --tb=short -p no:cacheprovider --timeout 60 -n 8 -k "cuda or cupy or gpu or device or unet" \
      $T/test_kernels_direct.py $T/test_python_ops.py $T/test_contrib_group_norm.py $T/test_string_tensors.py \
      $T/test_torch_ops.py > "$OUT/test-more.log" 2>&1
    echo "rc $?"; grep -E "FAILED|ERROR" "$OUT/test-more.log" | head -20; tail -3 "$OUT/test-more.log" ;;
  sanitize)  # every kernel once in float32, the solves' paths, the error cases (55 s before the two
             # small inverse / group norm cases were added)
    timeout -s INT 400 compute-sanitizer --tool memcheck --error-exitcode 99 --log-file "$OUT/memcheck.log" \
      $py -m pytest -v --tb=short -p no:cacheprovider -k "(solve and float32) or slogdet or bad_input or singular \
      or sorter or (svd and float32 and shape0) or (qr and float32 and shape3) or (eigh and float32 and shape3) \
      or (cholesky and float32 and shape2) or (inverse_on_gpu and shape0 and float32) \
      or (group_norm and shape0 and float32)" \
      $T/test_cuda.py > "$OUT/memcheck-tests.log" 2>&1
    echo "rc $?"; grep -E "ERROR SUMMARY|Invalid" "$OUT/memcheck.log" | sort | uniq -c | head; tail -3 "$OUT/memcheck-tests.log" ;;
  bench)
    (cd "$root" && timeout 200 $py -m benchmarks --cuda --only cuda_inverse,cuda_group_norm --reps 5 \
      --results "$OUT/bench.md" --plot /tmp/bench.png) > "$OUT/bench.log" 2>&1
    echo "rc $?"; tail -30 "$OUT/bench.log" ;;
  *) echo "unknown step $step"; exit 2 ;;
esac
at done
