#!/bin/bash
# One tuned GEMM kernel under Nsight Compute (issue 17). ncu does not see
# launches through NVIDIA's OpenCL, so the script has tltune build the
# configuration (one exhaustive evaluation with an empty binary cache),
# takes the PTX NVIDIA's OpenCL made of it from the cache, and launches
# that through the CUDA driver API (ptxrun.cu, built with nvcc) on the
# batch and work-group grid tltune timed, first on its own (a mean of
# back-to-back launches) and then once under ncu.
#
#   docs/bench/ncu_gemm.sh M N K DTYPE CONFIG_FLAGS...    (from the repository root, after make build)
#
# CONFIG_FLAGS are tltune gemm's space flags naming one configuration, e.g.
#   docs/bench/ncu_gemm.sh 256 256 256 f16 --wx 128 --wy 1 --tm 32 --tn 64 --cm 32 --cn 16 --ck 16 \
#     --unroll 1 --batch-per-group 1 --stage on --stages 4 --local-pad 8 --local-epilogue on --split 8
# (a flag left out lets tltune try several values, and the script stops
# after building two).
#
# NVIDIA's OpenCL PTX reads the launch from environment registers that a
# CUDA launch leaves zero. Its code for get_group_id adds %envreg0-2 (the
# work-group offsets, zero without a global offset) to %ctaid, and its code
# for get_num_groups reads %envreg6-8; the script rewrites them to 0 and
# %nctaid.x/y/z. Any other
# environment register stops the script rather than run a kernel that reads
# garbage. Only the strided layout with β = 0 is supported (ptxrun.cu).
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default NVIDIA), NVCC
# (default nvcc, else /usr/local/cuda/bin/nvcc), NCU (likewise ncu),
# NCU_FLAGS (default: the speed-of-light, memory, occupancy, warp-state,
# scheduler and launch sections), OUT (default ncu_gemm: the report, PTX,
# ptxrun and ncu's output).
set -euo pipefail

if [ $# -lt 5 ]; then
	echo "usage: docs/bench/ncu_gemm.sh M N K DTYPE CONFIG_FLAGS..." >&2
	exit 2
fi
m=$1 n=$2 k=$3 dtype=$4
shift 4
tltune=${TLTUNE:-bin/tltune}
device=${DEVICE:-NVIDIA}
tool() { command -v "$1" 2>/dev/null || echo "/usr/local/cuda/bin/$1"; }
nvcc=${NVCC:-$(tool nvcc)}
ncu=${NCU:-$(tool ncu)}
read -r -a ncu_flags <<<"${NCU_FLAGS:---section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats}"
out=${OUT:-ncu_gemm}
here=$(dirname "$0")
rm -rf "$out/cache"
mkdir -p "$out"

XDG_CACHE_HOME=$out/cache "$tltune" gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --device "$device" \
	--strategy exhaustive --budget 2 --no-race --quiet --json --db "$out/ncu.db" "$@" >"$out/report.json"
# One program a configuration: a second one means the flags left a choice
# (the budget of 2 stops a search of the whole space there).
mapfile -t bins < <(find "$out/cache/tltune/binaries" -type f 2>/dev/null)
case ${#bins[@]} in
1) ;;
0)
	echo "ncu_gemm.sh: the configuration was pruned or did not build; see $out/report.json" >&2
	exit 2
	;;
*)
	echo "ncu_gemm.sh: the flags name more than one configuration; give every space flag one value" >&2
	exit 2
	;;
esac

# The binary is the PTX, NUL-terminated, followed by the cache's 32-byte checksum.
head -c -32 "${bins[0]}" | tr -d '\000' | sed -E \
	-e 's/mov\.b32([[:space:]]+%r[0-9]+), %envreg[012];/mov.u32\1, 0;/' \
	-e 's/mov\.b32([[:space:]]+%r[0-9]+), %envreg6;/mov.u32\1, %nctaid.x;/' \
	-e 's/mov\.b32([[:space:]]+%r[0-9]+), %envreg7;/mov.u32\1, %nctaid.y;/' \
	-e 's/mov\.b32([[:space:]]+%r[0-9]+), %envreg8;/mov.u32\1, %nctaid.z;/' >"$out/kernel.ptx"
if grep -q '%envreg' "$out/kernel.ptx"; then
	echo "ncu_gemm.sh: the PTX reads environment registers this script does not know: $(grep -o '%envreg[0-9]*' "$out/kernel.ptx" | sort -u | tr '\n' ' ')" >&2
	exit 3
fi
if [ "$(grep -c '^[[:space:]]*\.param' "$out/kernel.ptx")" -ne 6 ]; then
	echo "ncu_gemm.sh: the kernel does not take the strided layout's six arguments" >&2
	exit 3
fi

# The launch tltune timed: grid, work-group, buffers (ncu_launch.py).
python3 "$here/ncu_launch.py" "$out/report.json" >"$out/launch.txt"
read -r gx gy bx by bytes_a bytes_b bytes_c batch elem <"$out/launch.txt"

"$nvcc" -O2 -o "$out/ptxrun" "$here/ptxrun.cu" -lcuda
run=("$out/ptxrun" "$out/kernel.ptx" "$gx" "$gy" "$bx" "$by" "$bytes_a" "$bytes_b" "$bytes_c" "$batch" "$elem")
echo "gemm $dtype ${m}x${n}x${k}, batch $batch, grid ${gx}x${gy} of ${bx}x${by}; $(tail -1 "$out/launch.txt")"
"${run[@]}"
"$ncu" --launch-skip 3 --launch-count 1 "${ncu_flags[@]}" "${run[@]}" 1 | tee "$out/ncu.txt"
