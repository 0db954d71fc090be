#!/bin/bash
# A correctness sweep: tuning runs of random problems on one device, every
# configuration verified against the float64 host reference, for a while.
# Each run draws an op (gemm, gemv, ger), a dtype, sizes from 1 to 64
# (ragged ones included), transposes, the batch layout, α, β and a batch,
# and tunes BUDGET random configurations of the shipped space with its own
# seed (the seed of the inputs too). A run with an outcome other than ok or
# pruned names a problem: a wrong kernel, a wrong tolerance, a device bug.
#
#   docs/bench/correctness.sh [OUT_DIR]     (from the repository root, after make build)
#
# Prints each run with such outcomes (its report's path, the problem and
# the outcomes), then the totals; exits 1 if there was one. OUT_DIR
# (default correctness) keeps each run's --json report as run-SEED.json;
# rerun one with its problem and --seed SEED --strategy random.
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default: tltune's
# default device), TARGET (tltune's --target, default: from the device),
# FLAGS (more tuning flags, e.g. "--config-timeout 60s"), SECONDS_TOTAL
# (default 600), SEED (of the draws, default 1), BUDGET (configurations per
# run, default 6), DTYPES (default "f32 f64 c32 c64"; add f16 and bf16
# where the device has them), PYTHON (default python3).
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
python=${PYTHON:-python3}
budget=${BUDGET:-6}
read -r -a dtypes <<< "${DTYPES:-f32 f64 c32 c64}"
read -r -a flags <<< "${FLAGS:-}"
out=${1:-correctness}
mkdir -p "$out"
device=()
[[ -n "${DEVICE:-}" ]] && device=(--device "$DEVICE")
[[ -n "${TARGET:-}" ]] && device+=(--target "$TARGET")
RANDOM=${SEED:-1}
end=$(( $(date +%s) + ${SECONDS_TOTAL:-600} ))
sizes=(1 3 7 16 17 33 64)
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
n=0
while (( $(date +%s) < end )); do
  n=$((n + 1))
  op=$(pick gemm gemv ger)
  args=(--m "$(pick "${sizes[@]}")" --n "$(pick "${sizes[@]}")" --dtype "$(pick "${dtypes[@]}")"
    --layout "$(pick strided group)" --alpha "$(pick 1 0.5 -2)" --beta "$(pick 0 1 0.25)"
    --batch $((1 + RANDOM % 40)))
  case $op in
    gemm) args+=(--k "$(pick "${sizes[@]}")" --trans "$(pick nn nt tn tt)") ;;
    gemv) args+=(--trans "$(pick n t)") ;;
  esac
  db="$out/run-$n.db"
  "$tltune" "$op" "${args[@]}" "${device[@]}" "${flags[@]}" --db "$db" --strategy random --budget "$budget" \
    --seed "$n" --quiet --json > "$out/run-$n.json" 2> "$out/run-$n.err" ||
    echo "run-$n: tltune $op ${args[*]} --seed $n exited $?: $(head -c 300 "$out/run-$n.err")"
  rm -f "$db"
done
"$python" "$(dirname "$0")/correctness_report.py" "$out"/run-*.json
