#!/bin/bash
# TestDPASOnDevice on PoCL 5 (the GPU machine's CPU device, which has
# cl_intel_subgroups), one case a process: the intel target's GEMMs with
# Intel's DPAS built-ins, supplied by the test-only OpenCL C emulation
# (compiler/testdata/targets/dpas_emulation.h) and compared with the
# reference interpreter. PoCL 5 takes minutes to build some of these
# kernels, so each case runs in a process of its own with a time limit,
# several side by side, and the end tallies what passed, failed and ran
# out of time. Run TestDPASEmulation first: it checks the emulation itself.
#
#   go test -c -o bin/compiler.test ./compiler     (where Go is; carry bin/)
#   docs/bench/dpas_pocl.sh [OUT_DIR]              (from the repository root)
#
# Environment: TEST (default bin/compiler.test), TLTUNE (default
# bin/tltune, to find the device), DEVICE (default: the first CPU device
# 'tltune devices' lists; a name substring or opencl:N), CASE_S (seconds a
# case may take, default 420), JOBS (cases side by side, default the
# number of processors), CASES (the case indices to run, default all:
# shape s of configuration c is case 5c+s at subgroup size 8, 20+5c+s at 16).
# OUT_DIR (default dpas) gets cases.txt: one line a case, its state (PASS,
# FAIL, SKIP or TIMEOUT), seconds and name, and a failure's output (a
# skip's reason) after its line. Exits 1 when a case fails, 2 when none
# ran; cases that ran out of time are counted, not failed.
set -euo pipefail

test=$(realpath "${TEST:-bin/compiler.test}")
tltune=${TLTUNE:-bin/tltune}
mkdir -p "${1:-dpas}"
out=$(realpath "${1:-dpas}")
device=${DEVICE:-$("$tltune" devices | awk -F'│' '$5 ~ /cpu/ {gsub(/ /, "", $3); print $3; exit}')}
if [ -z "$device" ]; then
	echo "no CPU device in 'tltune devices'; name PoCL 5 with DEVICE" >&2
	exit 2
fi
cd "$(dirname "$0")/../../compiler"

# The number of cases, from the test's answer to an index past the end.
count=$(TLTUNE_TEST_DPAS_CASE=999999 "$test" -test.run '^TestDPASOnDevice$' -test.v 2>&1 |
	sed -n 's/.*no such case; there are \([0-9]*\) .*/\1/p')
if [ -z "$count" ]; then
	echo "$test did not say how many DPAS cases it has; rebuild it from this tree" >&2
	exit 2
fi
cases=${CASES:-$(seq 0 $((count - 1)))}
for i in $cases; do
	if ! [[ $i =~ ^[0-9]+$ ]] || [ "$i" -ge "$count" ]; then
		echo "CASES has $i; the cases are 0 to $((count - 1))" >&2
		exit 2
	fi
done
echo "== $(echo $cases | wc -w) of $count cases on $device, ${CASE_S:-420} s each, ${JOBS:-$(nproc)} side by side" >&2

one() {
	local start status name log state
	start=$(date +%s)
	status=0
	log=$(TLTUNE_TEST_DPAS_CASE=$1 TLTUNE_TEST_DEVICE=$device TLTUNE_TEST_TARGET=device \
		timeout "${CASE_S:-420}" "$test" -test.run '^TestDPASOnDevice$' -test.v 2>&1) || status=$?
	name=$(echo "$log" | sed -n 's/^=== RUN   TestDPASOnDevice\///p' | head -1)
	if [ "$status" = 124 ]; then
		state=TIMEOUT
	elif echo "$log" | grep -q -- "--- FAIL"; then
		state=FAIL
	elif echo "$log" | grep -q -- "--- PASS: TestDPASOnDevice/"; then
		state=PASS
	else
		state=SKIP
	fi
	echo "$state $(($(date +%s) - start))s ${name:-case $1}"
	case $state in
	FAIL) echo "$log" | grep -v '^=== ' | head -20 | sed 's/^/    /' ;;
	SKIP) echo "$log" | grep -m1 'dpas_exec_test.go' | sed 's/^ */    /' ;;
	esac
}
export -f one
export test device CASE_S

printf '%s\n' $cases | xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'one {}' | tee "$out/cases.txt"
echo "== $(grep -cE '^PASS ' "$out/cases.txt" || true) passed, $(grep -cE '^FAIL ' "$out/cases.txt" || true) failed," \
	"$(grep -cE '^TIMEOUT ' "$out/cases.txt" || true) ran out of time, $(grep -cE '^SKIP ' "$out/cases.txt" || true) skipped"
if ! grep -qE '^(PASS|FAIL|TIMEOUT) ' "$out/cases.txt"; then
	echo "no case ran on $device: it needs cl_intel_subgroups (PoCL 5); name the device with DEVICE" >&2
	exit 2
fi
! grep -qE '^FAIL ' "$out/cases.txt"
