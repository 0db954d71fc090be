# Sourced by the bench scripts whose tuning runs must not steer each other:
# each runs in fresh XDG directories and a store of its own that starts
# with the device's ceilings, measured once. The script sets tltune,
# device, out (the output folder), xdg (a scratch folder) and tag_prefix
# (prepended to each run's name to tag it) before calling these.
#
# in_fresh DIR CMD...: runs CMD with the XDG directories and the drivers'
# kernel caches under DIR: an empty binary cache, and empty kernel caches
# of the drivers (PoCL's lives under XDG_CACHE_HOME, NVIDIA's under
# CUDA_CACHE_PATH, which is pointed there too). Two commands in one DIR
# share them.
in_fresh() {
	local dir=$1
	shift
	mkdir -p "$dir/cache" "$dir/data" "$dir/config"
	XDG_CACHE_HOME=$dir/cache XDG_DATA_HOME=$dir/data XDG_CONFIG_HOME=$dir/config CUDA_CACHE_PATH=$dir/cache/nv "$@"
}

unset POCL_CACHE_DIR # PoCL's kernel cache then goes under the fresh XDG_CACHE_HOME

# measure_ceilings: tltune peak into OUT/ceilings.db, which every run's
# store starts from.
measure_ceilings() {
	in_fresh "$xdg/peak" "$tltune" peak --device "$device" --db "$out/ceilings.db" >"$out/ceilings.stderr" 2>&1 ||
		{ tail -n 5 "$out/ceilings.stderr" >&2; exit 1; }
}

# tune_run NAME DIR TUNING-COMMAND...: one run, in the XDG directories
# under DIR, into the store OUT/NAME.db (a copy of the ceilings) with its
# --json report in OUT/NAME.json and the whole command's wall time, in
# seconds, in OUT/NAME.wall (the report's wall time is the tuning's: it
# leaves out starting the worker and opening the device); the script stops
# where the run fails.
tune_run() {
	local name=$1 dir=$2 start=$EPOCHREALTIME
	shift 2
	cp "$out/ceilings.db" "$out/$name.db"
	if ! in_fresh "$dir" "$tltune" "$@" --device "$device" --db "$out/$name.db" --tag "$tag_prefix$name" --quiet --json \
		>"$out/$name.json" 2>"$out/$name.stderr"; then
		echo "$(basename "$0"): the $name run failed:" >&2
		tail -n 5 "$out/$name.stderr" >&2
		exit 1
	fi
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }' >"$out/$name.wall"
}
