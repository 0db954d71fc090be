#!/bin/bash
# Batched GEMM tuned by tltune next to cuBLAS (through PyTorch) on the same
# problems and batches (issue 17, item 2): the twelve rows 16³, 32³,
# 64×64×32, 64³, 128³ and 256³ in f16 (into f32) and f32, each tuned with
# tltune's default command, then cuBLAS timed in the same script run on the
# batch and buffer sets tltune's report gives, and the ratio table printed.
#
#   docs/bench/gemm.sh [OUT_DIR]        (from the repository root, after make build)
#
# Every tuning writes OUT_DIR/reports/SHAPE-DTYPE.json (tltune gemm --json)
# into OUT_DIR/gemm.db; a report that exists is not tuned again, so a run cut
# short by a time limit continues when started again with the same OUT_DIR.
# The table (docs/bench/gemm_report.py) goes to stdout and OUT_DIR/table.md.
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default NVIDIA), SHAPES
# (default "16x16x16 32x32x32 64x64x32 64x64x64 128x128x128 256x256x256"),
# DTYPES (default "f16 f32"), FLAGS (more tuning flags, e.g. "--budget 96"),
# PYTHON (default python3), PRECISION (default exact; tf32 tunes the f32 rows
# with --precision tf32, reports SHAPE-f32-tf32.json, and the table times
# cuBLAS on them with TF32 allowed; f16 rows stay exact).
#
# NVIDIA's OpenCL: where the ICD loader lists no NVIDIA platform (no
# nvidia.icd in the image), tltune opens libnvidia-opencl.so.1 itself; or set
# OCL_ICD_VENDORS to a folder holding a file that names that library.
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
device=${DEVICE:-NVIDIA}
shapes=${SHAPES:-16x16x16 32x32x32 64x64x32 64x64x64 128x128x128 256x256x256}
dtypes=${DTYPES:-f16 f32}
python=${PYTHON:-python3}
precision=${PRECISION:-exact}
out=${1:-gemm}
read -r -a flags <<<"${FLAGS:-}"
here=$(dirname "$0")
mkdir -p "$out/reports"
db=$out/gemm.db

"$tltune" version | tee "$out/version.txt"

reports=()
for dtype in $dtypes; do
	for shape in $shapes; do
		IFS=x read -r m n k <<<"$shape"
		p=exact suffix=
		if [ "$dtype" = f32 ] && [ "$precision" != exact ]; then
			p=$precision suffix=-$precision
		fi
		report=$out/reports/$shape-$dtype$suffix.json
		reports+=("$report")
		[ -s "$report" ] && continue
		echo "== gemm $dtype $shape ($p)" >&2
		if "$tltune" gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --precision "$p" --device "$device" \
			--db "$db" --tag gemm-bench --quiet --json "${flags[@]}" >"$report.tmp"; then
			mv "$report.tmp" "$report"
		else
			echo "tltune failed on gemm $dtype $shape $p (report kept in $report.tmp)" >&2
		fi
	done
done

present=()
for r in "${reports[@]}"; do
	[ -s "$r" ] && present+=("$r")
done
"$python" "$here/gemm_report.py" --json "$out/table.json" "${present[@]}" | tee "$out/table.md"
