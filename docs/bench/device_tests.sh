#!/bin/bash
# The compiler's execution tests on the GPU machine's devices: every test
# that runs kernels (the recipes, staged and pipelined GEMMs, GEMV splits,
# tf32, the differential kernels, the dialects, the drop-in ABI), compiled
# for the target the device's properties choose (nvidia on NVIDIA's OpenCL,
# intel on PoCL 5) and compared with the host references and the reference
# interpreter. Run it first after a change of the code tltune generates.
#
#   go test -c -o bin/compiler.test ./compiler     (where Go is; carry bin/)
#   go test -c -o bin/ptx.test ./compiler/emit/ptx (optional: tltune's PTX)
#   docs/bench/device_tests.sh                     (from the repository root)
#
# Where bin/ptx.test exists (PTX_TEST), its TestPTXOnDevice runs on each
# device too: GEMV and GER built from the PTX tltune writes, against the
# interpreter (it skips on devices other than NVIDIA's).
#
# Environment: TEST (default bin/compiler.test), PTX_TEST (default
# bin/ptx.test), DEVICES (default "NVIDIA":
# one --device spec each, a name substring or opencl:N; see `bin/tltune
# devices`), RUN (a -test.run pattern; default every test), SKIP (a
# -test.skip pattern; default TestDPASOnDevice, whose emulated DPAS cases
# take minutes each in PoCL 5's compiler: docs/bench/dpas_pocl.sh runs them
# one process each). Exits non-zero when a test fails on any device.
set -euo pipefail

test=$(realpath "${TEST:-bin/compiler.test}")
ptx=$(realpath -m "${PTX_TEST:-bin/ptx.test}")
cd "$(dirname "$0")/../../compiler"
status=0
for device in ${DEVICES:-NVIDIA}; do
	echo "== $device" >&2
	TLTUNE_TEST_DEVICE=$device TLTUNE_TEST_TARGET=device \
		"$test" -test.run "${RUN:-.}" -test.skip "${SKIP-TestDPASOnDevice}" || status=1
	if [ -x "$ptx" ]; then
		TLTUNE_TEST_DEVICE=$device "$ptx" -test.run TestPTXOnDevice || status=1
	fi
done
exit $status
