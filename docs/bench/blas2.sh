#!/bin/bash
# GEMV (both transposes) and GER tuned by tltune and compared with the copy
# ceiling and with PyTorch on the same problems and batches (issue 17, item
# 5: the goal is at least 90 % of `tltune peak`'s copy bandwidth for every
# dtype from 64² up).
#
#   docs/bench/blas2.sh [OUT_DIR]        (from the repository root, after make build)
#
# It measures the ceilings once (tltune peak), then tunes every
# (op, dtype, size) with tltune's default search into OUT_DIR/blas2.db, one
# JSON report each in OUT_DIR/reports, and ends with the table of
# docs/bench/blas2_report.py (PyTorch timed in the same script run where it
# is importable with CUDA), also written to OUT_DIR/table.md. A report that
# exists is not tuned again, so a run cut short (a time limit) continues
# where it stopped when started again with the same OUT_DIR.
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default NVIDIA: the first
# device whose name has it), DTYPES (default "f16 f32 bf16 f64 c32 c64"),
# OPS (default "gemv.n gemv.t ger"), SIZES (default "64 256 1024"), FLAGS
# (more tuning flags, e.g. "--budget 96"), PYTHON (default python3).
#
# NVIDIA's OpenCL: where the ICD loader lists no NVIDIA platform (no
# nvidia.icd in the image), tltune opens libnvidia-opencl.so.1 itself; or set
# OCL_ICD_VENDORS to a folder holding a file that names that library.
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
device=${DEVICE:-NVIDIA}
dtypes=${DTYPES:-f16 f32 bf16 f64 c32 c64}
ops=${OPS:-gemv.n gemv.t ger}
sizes=${SIZES:-64 256 1024}
python=${PYTHON:-python3}
out=${1:-blas2}
read -r -a flags <<<"${FLAGS:-}"
here=$(dirname "$0")
mkdir -p "$out/reports"
db=$out/blas2.db

"$tltune" version | tee "$out/version.txt"
"$tltune" devices | tee "$out/devices.txt"
[ -s "$out/peak.json" ] || "$tltune" peak --device "$device" --db "$db" --json >"$out/peak.json"

reports=()
for dtype in $dtypes; do
	for op in $ops; do
		for size in $sizes; do
			report=$out/reports/$op-$dtype-$size.json
			reports+=("$report")
			[ -s "$report" ] && continue
			case $op in
			gemv.n) cmd=(gemv --trans n) ;;
			gemv.t) cmd=(gemv --trans t) ;;
			ger) cmd=(ger) ;;
			*) echo "unknown op $op (want gemv.n, gemv.t or ger)" >&2 && exit 2 ;;
			esac
			echo "== $op $dtype ${size}x$size" >&2
			if "$tltune" "${cmd[@]}" --m "$size" --n "$size" --dtype "$dtype" --device "$device" \
				--db "$db" --tag blas2 --quiet --json "${flags[@]}" >"$report.tmp"; then
				mv "$report.tmp" "$report"
			else
				echo "tltune failed on $op $dtype ${size}x$size (report kept in $report.tmp)" >&2
			fi
		done
	done
done

present=()
for r in "${reports[@]}"; do
	[ -s "$r" ] && present+=("$r")
done
"$python" "$here/blas2_report.py" --json "$out/table.json" "${present[@]}" | tee "$out/table.md"
