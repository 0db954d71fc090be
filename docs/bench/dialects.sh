#!/bin/bash
# Issue 13 on the GPU machine's devices: kernels named like OpenCL C
# builtins and keywords (clamp, min, dot, kernel, half, main), the drop-in
# ABI (a kernel launched through the device API with only tinytc's
# arguments, one or two batch entries per work-group), and the device runs
# of the released and legacy dialects' kernels, each compared with the
# reference interpreter, on every device of DEVICES with the target the
# device's properties choose (nvidia on NVIDIA OpenCL, intel on PoCL 5).
#
#   go test -c -o bin/compiler.test ./compiler     (where Go is; carry bin/)
#   docs/bench/dialects.sh                         (from the repository root)
#
# Environment: TEST (default bin/compiler.test), DEVICES (default
# "NVIDIA cpu": one --device spec each, a name substring or opencl:N; see
# `bin/tltune devices`). Every test must say ok or PASS; a SKIP whose reason
# is "kernel attributes exceed what TARGET supports" is a kernel written for
# one work-item subgroups; any other SKIP means the device was not found.
set -euo pipefail

test=$(realpath "${TEST:-bin/compiler.test}")
cd "$(dirname "$0")/../../compiler"
status=0
for device in ${DEVICES:-NVIDIA cpu}; do
	echo "== $device" >&2
	export TLTUNE_TEST_DEVICE=$device TLTUNE_TEST_TARGET=device
	"$test" -test.v -test.run '^TestDifferentialOnDevice$/^(names|batched|released|math|tiles|grid)$' || status=1
	"$test" -test.v -test.run '^(TestTinytcABIOnDevice|TestLegacyOnDevice)$' || status=1
done
exit $status
