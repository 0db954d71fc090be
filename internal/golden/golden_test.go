package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, got string
		fails           bool
	}{
		{"equal", path, "same\n", false},
		{"differs", path, "other\n", true},
		{"missing file", path + ".none", "same\n", true},
	} {
		r := &recorder{TB: t}
		Check(r, c.path, []byte(c.got))
		if failed := len(r.failures) > 0; failed != c.fails {
			t.Errorf("%s: failures %q, want failing %v", c.name, r.failures, c.fails)
		}
	}
}
