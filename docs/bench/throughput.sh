#!/bin/bash
# Tuning throughput (issue 16, item 4) in one call: GEMM 64×64×32 f16 tuned
# three times on one device, with the same seed and budget:
#
#   today  --kernels-per-program 1 --no-cache --no-race --build-procs 0
#          --ptx=false: the protocol before issue 16 (a program per
#          configuration, every one built by the driver in the worker from
#          OpenCL C, every configuration timed in full once);
#   cold   the defaults (builder processes, the binary cache, racing and the
#          final re-timing of the fastest) with an empty cache;
#   warm   the same command again: every program comes from the cache.
#
# Each run has fresh XDG directories (so an empty binary cache, and empty
# kernel caches of the drivers: PoCL's lives under XDG_CACHE_HOME, NVIDIA's
# under CUDA_CACHE_PATH, which is pointed there too) and a store of its own
# (so no run warm-starts from another's best), holding the device's
# ceilings, measured once before the runs. warm shares cold's directories.
#
#   docs/bench/throughput.sh [OUT_DIR]      (from the repository root, after make build)
#
# Prints one line per run (evaluations per second, wall time, driver builds
# and how many came from the binary cache, raced and re-timed
# configurations, the winner with its median and 95 % interval), the wall
# time split of each, whether the winners of cold and warm agree with
# today's within the measurement noise, and issue 16's goals (cold ≥ 50,
# warm ≥ 200 evaluations per second). OUT_DIR (default throughput) keeps
# each run's --json report, stderr and store.
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default NVIDIA: the
# first device whose name has it), BUDGET (evaluations per run, default 48
# as tltune's), FLAGS (more tuning flags for all three runs), PYTHON
# (default python3). NVIDIA's OpenCL: where the ICD loader lists no NVIDIA
# platform, tltune opens libnvidia-opencl.so.1 itself.
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
device=${DEVICE:-NVIDIA}
budget=${BUDGET:-48}
python=${PYTHON:-python3}
out=${1:-throughput}
read -r -a flags <<<"${FLAGS:-}"
here=$(dirname "$0")
mkdir -p "$out"
rm -f "$out"/{ceilings,today,cold,warm}.{db,json,stderr}
xdg=$(mktemp -d)
trap 'rm -rf "$xdg"' EXIT
tag_prefix=throughput-
# shellcheck source=fresh.sh
. "$here/fresh.sh"

# tune NAME DIR [FLAG...]: one tuning run into OUT_DIR/NAME.json.
tune() {
	local name=$1 dir=$2
	shift 2
	tune_run "$name" "$dir" gemm --m 64 --n 64 --k 32 --dtype f16 --budget "$budget" ${flags[@]+"${flags[@]}"} "$@"
}

echo "$("$tltune" version) on $device: gemm 64x64x32 f16, budget $budget${FLAGS:+, $FLAGS}"
measure_ceilings
tune today "$xdg/today" --kernels-per-program 1 --no-cache --no-race --build-procs 0 --ptx=false
tune cold "$xdg/new"
tune warm "$xdg/new"
"$python" "$here/throughput_report.py" "$out/today.json" "$out/cold.json" "$out/warm.json"
