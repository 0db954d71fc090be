package check_test

import (
	"os"
	"path/filepath"
	"testing"

	"tltune/compiler/check"
	"tltune/compiler/syntax"
)

// BenchmarkParseVerify measures the front end on a 200-line kernel; MB/s
// is source bytes per second (target: at least 50 MB/s).
func BenchmarkParseVerify(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "bench", "kernel200.tl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		prog, errs := syntax.Parse(src)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		if errs := check.Program(prog, nil); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
