// Package fuzzseed fills fuzz targets' seed corpora from files: the
// project's fuzz targets start from the programs of its test suites.
package fuzzseed

import (
	"os"
	"path/filepath"
	"testing"
)

// Add adds the files the patterns match to f's seed corpus; a pattern
// that matches nothing fails (a seed corpus must not vanish silently).
func Add(f *testing.F, patterns ...string) {
	for _, pattern := range patterns {
		names, _ := filepath.Glob(pattern)
		if len(names) == 0 {
			f.Fatalf("no seed files match %s", pattern)
		}
		for _, name := range names {
			src, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
}
