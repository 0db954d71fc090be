package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the golden-file flag of every test in this package.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// checkGolden compares got with testdata/NAME, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if intended):\n%s", path, got)
	}
}
