#!/bin/bash
# The intel target's SPIR-V on PoCL 5 (the GPU machine's CPU device, which
# has cl_intel_subgroups and takes SPIR bitcode): TestIntelGemmOnDevice and
# TestIntelDifferentialOnDevice in one process, then TestIntelDPASOnDevice
# one case a process, side by side (its modules call the DPAS built-ins,
# linked in from the test-only emulation). That machine has neither
# clang-15, llvm-spirv-15 nor SPIRV-Tools, so the bitcode is made where Go
# and those tools are (and the modules validated there):
#
#   go test -c -o bin/spirv.test ./compiler/emit/spirv
#   (cd compiler/emit/spirv && TLTUNE_SPIR_DIR=$(realpath ../../../bin)/spir \
#     TLTUNE_SPIR_NO_BLOCK_IO=1 ../../../bin/spirv.test -test.run Intel)
#   docs/bench/spirv_pocl.sh [OUT_DIR]      (there, from the repository root)
#
# (mkdir bin/spir first.) Environment: TEST (default bin/spirv.test), SPIR
# (default bin/spir), CASE_S (seconds a DPAS case may take, default 300),
# JOBS (cases side by side, default the number of processors). OUT_DIR
# (default spirv) gets one log per process and cases.txt: a line per DPAS
# case, its state (PASS, FAIL, SKIP or TIMEOUT) and seconds. Exits 1 when a
# test fails, 2 when the binary or the bitcode is missing.
set -euo pipefail

test=$(realpath "${TEST:-bin/spirv.test}")
spir=$(realpath "${SPIR:-bin/spir}")
if [ ! -x "$test" ] || [ ! -d "$spir" ]; then
	echo "need $test and the bitcode folder $spir; see the top of $0" >&2
	exit 2
fi
mkdir -p "${1:-spirv}"
out=$(realpath "${1:-spirv}")
cd "$(dirname "$0")/../../compiler/emit/spirv"
export TLTUNE_SPIR_DIR=$spir TLTUNE_SPIR_NO_BLOCK_IO=1

status=0
"$test" -test.run '^TestIntel(GemmOnDevice|DifferentialOnDevice)$' -test.v >"$out/intel.txt" 2>&1 || status=1
grep -- '^--- ' "$out/intel.txt" >&2 || true

# The number of DPAS cases, from the test's answer to an index past the end.
count=$(TLTUNE_TEST_DPAS_CASE=999999 "$test" -test.run '^TestIntelDPASOnDevice$' -test.v 2>&1 |
	sed -n 's/.*no such case; there are \([0-9]*\) .*/\1/p')
if [ -z "$count" ]; then
	echo "$test did not say how many DPAS cases it has; rebuild it from this tree" >&2
	exit 2
fi

one() {
	local start rc=0 state
	start=$(date +%s)
	TLTUNE_TEST_DPAS_CASE=$1 timeout "${CASE_S:-300}" "$test" -test.run '^TestIntelDPASOnDevice$' -test.v \
		>"$out/dpas$1.txt" 2>&1 || rc=$?
	case $rc in
	0) state=$(grep -q -- '--- SKIP: TestIntelDPASOnDevice/' "$out/dpas$1.txt" && echo SKIP || echo PASS) ;;
	124) state=TIMEOUT ;;
	*) state=FAIL ;;
	esac
	echo "$1 $state $(($(date +%s) - start))s $(sed -n 's/^=== RUN   TestIntelDPASOnDevice\///p' "$out/dpas$1.txt" | head -1)"
}
export -f one
export test out
seq 0 $((count - 1)) | xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'one {}' | sort -n >"$out/cases.txt"
cat "$out/cases.txt"
if grep -q ' FAIL ' "$out/cases.txt"; then
	status=1
fi
exit $status
