// Package golden compares test output with golden files, the house style of
// the project's tests: `go test -update` rewrites the files from the current
// output instead, to be reviewed in the diff before they are committed.
//
// It registers the -update flag once for every test binary that imports it,
// so the packages' tests share one flag and one comparison.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// Update reports whether the test run rewrites golden files (-update): for
// a test whose comparison is its own.
func Update() bool { return *update }

// Check compares got with the golden file at path, or with -update writes
// got to path.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it; review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
