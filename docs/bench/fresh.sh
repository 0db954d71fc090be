# Sourced by the bench scripts that need runs independent of each other.
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
