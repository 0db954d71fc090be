package main

import (
	"bytes"
	stdcontext "context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tltune/results"
)

// chartSignatures are the first bytes of each chart format.
var chartSignatures = map[string]string{".svg": "<?xml", ".png": "\x89PNG\r\n\x1a\n", ".pdf": "%PDF-"}

// checkChart runs a chart command that must succeed silently and checks
// that the file it wrote starts with its format's signature.
func checkChart(t *testing.T, path string, args ...string) []byte {
	t.Helper()
	status, out, errOut := tltune(append(args, "-o", path)...)
	if status != exitOK || out != "" || errOut != "" {
		t.Fatalf("%s: status %d, stdout %q, stderr %q", strings.Join(args, " "), status, out, errOut)
	}
	data := readFile(t, path)
	if sig := chartSignatures[strings.ToLower(filepath.Ext(path))]; !bytes.HasPrefix(data, []byte(sig)) {
		t.Errorf("%s does not start with %q", path, sig)
	}
	return data
}

// TestRooflineGolden: run 1 of the nightly store against its ceilings,
// byte for byte (gonum's SVG is deterministic).
func TestRooflineGolden(t *testing.T) {
	db := nightlyDB(t)
	svg := checkChart(t, filepath.Join(t.TempDir(), "roofline.svg"), "roofline", "--db", db, "--run", "1")
	checkGolden(t, "roofline-run1.svg", svg)
	for _, want := range []string{"Roofline — NVIDIA H200, run 1", "memory 4.02 TB/s", "f16 FMA 122 TFLOP/s", "gemm f16", "64×64×32", "ger f32", "512×512"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("roofline lacks %q", want)
		}
	}
}

func TestRooflineFormats(t *testing.T) {
	db := nightlyDB(t)
	dir := t.TempDir()
	for _, name := range []string{"gemm.png", "gemm.PDF"} {
		checkChart(t, filepath.Join(dir, name), "roofline", "--db", db, "--run", "1", "--op", "gemm")
	}
}

func TestRooflineErrors(t *testing.T) {
	db := nightlyDB(t)
	addRooflineTraps(t, db)
	dir := t.TempDir()
	svg := filepath.Join(dir, "r.svg")
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{nil, exitUsage, "-o FILE.svg|png|pdf is required"},
		{[]string{"-o", filepath.Join(dir, "r.jpg")}, exitUsage, `chart format "jpg" not supported: name the file .svg, .png or .pdf`},
		{[]string{"-o", svg, "--op", "syrk"}, exitUsage, `--op "syrk": want one of gemm, gemv, ger`},
		{[]string{"-o", svg, "run1"}, exitUsage, `unexpected argument "run1"`},
		{[]string{"-o", svg, "--run", "9"}, exitUsage, "no such run 9"},
		// Ceilings were measured with the old driver only.
		{[]string{"-o", svg, "--run", "2"}, exitUsage,
			`no measured ceilings for NVIDIA H200 (opencl, driver 590.48.01, host gpu-box), the device of run 2; run 'tltune peak --device "NVIDIA H200" --db "` + db + `"' there first`},
		{[]string{"-o", svg, "--run", "4", "--op", "gemv"}, exitUsage, "run 4: no shape has an ok measurement to chart"},
		{[]string{"-o", svg, "--run", "5"}, exitUsage, "run 5: gemm.nn f16/f32 64x64x32 has no GFLOP/s or GB/s recorded"},
		{[]string{"-o", filepath.Join(dir, "missing", "r.svg"), "--run", "1"}, exitUsage, "missing"},
	}
	for _, tc := range tests {
		status, out, errOut := tltune(append([]string{"roofline", "--db", db}, tc.args...)...)
		checkOneLine(t, status, tc.status, out, errOut, tc.want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed rooflines left %d files in %s", len(entries), dir)
	}
}

// addRooflineTraps adds ceilings for the CPU of run 4 (which measured
// gemm only) and a run 5 whose one measurement has no rates.
func addRooflineTraps(t *testing.T, db string) {
	t.Helper()
	s, err := results.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := stdcontext.Background()
	if err := s.RecordCeilings(ctx, nightlyCPU, results.Ceilings{CopyGBS: 40, F32GFLOPS: 900}); err != nil {
		t.Fatal(err)
	}
	run, err := s.BeginRun(ctx, nightlyOld, results.Run{Op: "gemm"})
	if err != nil {
		t.Fatal(err)
	}
	m := results.Measurement{Config: gemmF16.config(16), Outcome: results.OK, MedianNS: 4000}
	if _, err := s.Record(ctx, run.ID, m); err != nil {
		t.Fatal(err)
	}
}

// TestPointLabels: within a group (operation and element type) a label
// carries what tells its points apart, and nothing more.
func TestPointLabels(t *testing.T) {
	best := func(trans, layout string, s synthShape) results.Best {
		c := s.config(16)
		c.Trans, c.Layout = trans, layout
		return results.Best{Measurement: results.Measurement{Config: c}}
	}
	got := pointLabels([]results.Best{
		best("nn", "strided", gemmF16), best("tn", "strided", gemmF16), best("tn", "group", gemmF16),
		best("nn", "strided", gemmF32), best("n", "strided", gemv256),
	})
	want := []string{"64×64×32 nn strided", "64×64×32 tn strided", "64×64×32 tn group", "128×128×128", "256×256"}
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
