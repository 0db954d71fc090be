#!/bin/bash
# The default search's spread on one problem: tltune's tuning command run
# once per seed, each run on its own, so that what the runs find tells how
# reliably the default search finds a fast configuration, not how lucky
# one run was (issue 17's goals are met by every run, or not met). Each run
# has fresh XDG directories (an empty binary cache and empty driver kernel
# caches: a warm cache steers the GP toward what was built before) and a
# store of its own (no warm start from another run's best) holding the
# device's ceilings, measured once before the runs.
#
#   docs/bench/seeds.sh [OUT_DIR] -- COMMAND FLAGS...    (from the repository root, after make build)
#   docs/bench/seeds.sh seeds -- gemv --trans n --m 1024 --n 1024 --dtype bf16
#
# Prints one line per seed (the best configuration, its median, GB/s and
# share of the copy ceiling, evaluations per second, builds from the
# binary cache) and the spread of the share of copy over the seeds, with
# how many runs reached GOAL percent. OUT_DIR (default seeds) keeps each
# run's --json report, stderr and store.
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default NVIDIA: the
# first device whose name has it), SEEDS (default "1 2 3 4 5 6"), GOAL
# (default 90), PYTHON (default python3).
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
device=${DEVICE:-NVIDIA}
python=${PYTHON:-python3}
here=$(dirname "$0")
out=seeds
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	out=$1
	shift
fi
if [ "${1:-}" != -- ] || [ $# -lt 2 ]; then
	echo "usage: docs/bench/seeds.sh [OUT_DIR] -- COMMAND FLAGS... (e.g. -- gemm --m 64 --n 64 --k 32 --dtype f16)" >&2
	exit 2
fi
shift
mkdir -p "$out"
rm -f "$out"/ceilings.* "$out"/seed-*.{db,json,stderr}
xdg=$(mktemp -d)
trap 'rm -rf "$xdg"' EXIT
tag_prefix=
# shellcheck source=fresh.sh
. "$here/fresh.sh"

echo "$("$tltune" version) on $device: $*, seeds ${SEEDS:-1 2 3 4 5 6}"
measure_ceilings
reports=()
for seed in ${SEEDS:-1 2 3 4 5 6}; do
	tune_run "seed-$seed" "$xdg/seed-$seed" "$@" --seed "$seed"
	reports+=("$out/seed-$seed.json")
done
"$python" "$here/seeds_report.py" --goal "${GOAL:-90}" "${reports[@]}"
