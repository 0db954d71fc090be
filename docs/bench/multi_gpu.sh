#!/bin/bash
# A suite on every GPU of this machine against the same suite on one of
# them (issue 15): the wall time of each, then the two runs merged into one
# store and compared shape by shape. Then each run's best configurations
# re-timed on all GPUs and on one, compared again, and re-timed on each GPU
# alone, side by side: the spread between GPUs of one model, which a
# multi-GPU nightly job sees as noise.
#
#   docs/bench/multi_gpu.sh [OUT_DIR]        (from the repository root, after make build)
#
# Environment: TLTUNE (default bin/tltune), SUITE (default
# configs/suites/nightly.toml), ONE (the one GPU, default NVIDIA: the first
# device whose name has it), ALL (default all:gpu), FLAGS (more sweep flags,
# e.g. "--budget 12" to halve the tuning time).
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
suite=${SUITE:-configs/suites/nightly.toml}
one=${ONE:-NVIDIA}
all=${ALL:-all:gpu}
out=${1:-multi-gpu}
read -r -a flags <<<"${FLAGS:-}"
mkdir -p "$out"

"$tltune" devices | tee "$out/devices.txt"

# Every sweep gets an empty binary cache (XDG_CACHE_HOME, and NVIDIA's
# kernel cache under it), so that none builds less for another having run.
caches=$(mktemp -d)
trap 'rm -rf "$caches"' EXIT
fresh_cache() {
	local dir
	dir=$(mktemp -d -p "$caches")
	XDG_CACHE_HOME=$dir CUDA_CACHE_PATH=$dir/nv "$@"
}
# Tuning: one store per sweep, as two machines would make them.
fresh_cache "$tltune" sweep "$suite" --device "$all" --db "$out/all.db" --tag all-gpus --quiet "${flags[@]}" | tee "$out/sweep-all.txt"
fresh_cache "$tltune" sweep "$suite" --device "$one" --db "$out/one.db" --tag one-gpu --quiet "${flags[@]}" | tee "$out/sweep-one.txt"
"$tltune" merge "$out/both.db" "$out/one.db" "$out/all.db" | tee "$out/merge.txt"

# The searches' best configurations: the same up to timing noise and the
# search's luck.
"$tltune" regress --db "$out/both.db" --baseline one-gpu --run all-gpus --md "$out/regress-tuned.md" |
	tee "$out/regress-tuned.txt" || true

# The stored bests re-timed on all GPUs and on one: the same configurations
# on different GPUs of one model.
fresh_cache "$tltune" sweep "$suite" --remeasure --device "$all" --db "$out/both.db" --tag remeasure-all --quiet "${flags[@]}" | tee "$out/remeasure-all.txt"
fresh_cache "$tltune" sweep "$suite" --remeasure --device "$one" --db "$out/both.db" --tag remeasure-one --quiet "${flags[@]}" | tee "$out/remeasure-one.txt"
"$tltune" regress --db "$out/both.db" --baseline remeasure-one --run remeasure-all --md "$out/regress-remeasured.md" |
	tee "$out/regress-remeasured.txt" || true

# Side by side: every stored best re-timed on each GPU alone, the first GPU's
# run the baseline of every other's, so each shape's winner has a median on
# each GPU.
mapfile -t gpus < <("$tltune" devices --json | "${PYTHON:-python3}" -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    if d["type"] == "gpu":
        print(d["id"])')
for gpu in "${gpus[@]}"; do
	fresh_cache "$tltune" sweep "$suite" --remeasure --device "$gpu" --db "$out/both.db" --tag "on-$gpu" --quiet "${flags[@]}" |
		tee "$out/remeasure-$gpu.txt"
done
for gpu in "${gpus[@]:1}"; do
	"$tltune" regress --db "$out/both.db" --baseline "on-${gpus[0]}" --run "on-$gpu" --md "$out/regress-$gpu.md" |
		tee "$out/regress-$gpu.txt" || true
done

echo
grep -h "shape(s) in" "$out"/sweep-*.txt "$out"/remeasure-*.txt
