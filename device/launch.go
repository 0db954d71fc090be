package device

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// checkRange validates a launch the same way for every runtime, so that a
// configuration fails alike on OpenCL and Level Zero: 1 to 3 dimensions,
// positive sizes, and a global size that is a multiple of the local size
// (Level Zero launches whole groups only; OpenCL 1.2 requires it too).
func checkRange(global, local []int) error {
	if len(global) < 1 || len(global) > 3 {
		return fmt.Errorf("launch: %d dimensions, want 1 to 3", len(global))
	}
	for _, g := range global {
		if g <= 0 {
			return fmt.Errorf("launch: global size %v has a non-positive entry", global)
		}
	}
	if local == nil {
		return nil
	}
	if len(local) != len(global) {
		return fmt.Errorf("launch: local size %v and global size %v differ in dimensions: %w", local, global, ErrWorkGroupSize)
	}
	for i := range local {
		if local[i] <= 0 || global[i]%local[i] != 0 {
			return fmt.Errorf("launch: global size %v is not a multiple of local size %v: %w", global, local, ErrWorkGroupSize)
		}
	}
	return nil
}

// checkFits rejects a host copy larger than its buffer before the runtime
// sees it, with a message that names both sizes.
func checkFits(n int, size int64) error {
	if int64(n) > size {
		return fmt.Errorf("copy of %d bytes into a buffer of %d bytes", n, size)
	}
	return nil
}

func isBuild(err error) bool { return errors.Is(err, ErrBuild) }

// envOr returns the environment variable's value, or def when it is unset.
// TLTUNE_OPENCL_LOADER and TLTUNE_ZE_LOADER name loaders installed under
// other names; tests point them at libraries that do not exist.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// vendorLibraries returns the OpenCL vendor libraries to open directly:
// TLTUNE_OPENCL_VENDORS (colon-separated; set and empty means none) or the
// known ones.
func vendorLibraries() []string {
	v, ok := os.LookupEnv("TLTUNE_OPENCL_VENDORS")
	if !ok {
		return openCLVendors
	}
	return strings.FieldsFunc(v, func(r rune) bool { return r == ':' })
}
