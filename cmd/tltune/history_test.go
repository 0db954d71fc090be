package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var gemmHistoryArgs = []string{"history", "--op", "gemm", "--m", "64", "--n", "64", "--k", "32"}

// TestHistoryGolden: the H200's three nightly runs of gemm f16 64×64×32,
// as a table and as a chart; the chart changes nothing on stdout.
func TestHistoryGolden(t *testing.T) {
	db := nightlyDB(t)
	args := append(slices.Clone(gemmHistoryArgs), "--db", db, "--device", "h200")
	status, out, errOut := tltune(args...)
	if status != exitOK || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	checkGolden(t, "history-gemm.stdout", []byte(out))

	svg := filepath.Join(t.TempDir(), "history.svg")
	status, chartOut, errOut := tltune(append(args, "-o", svg)...)
	if status != exitOK || errOut != "" || chartOut != out {
		t.Fatalf("with -o: status %d, stderr %q, stdout differs: %v", status, errOut, chartOut != out)
	}
	data := readFile(t, svg)
	if !bytes.HasPrefix(data, []byte(chartSignatures[".svg"])) {
		t.Errorf("%s is not an SVG file", svg)
	}
	checkGolden(t, "history-gemm.svg", data)
}

func TestHistoryFormats(t *testing.T) {
	db := nightlyDB(t)
	dir := t.TempDir()
	for _, name := range []string{"h.png", "h.pdf"} {
		path := filepath.Join(dir, name)
		args := append(slices.Clone(gemmHistoryArgs), "--db", db, "--dtype", "f16", "--precision", "exact", "--device", "xeon", "-o", path)
		if status, out, errOut := tltune(args...); status != exitOK || errOut != "" || !strings.Contains(out, "cpu-haswell") {
			t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
		}
		if sig := chartSignatures[filepath.Ext(name)]; !bytes.HasPrefix(readFile(t, path), []byte(sig)) {
			t.Errorf("%s does not start with %q", name, sig)
		}
	}
}

func TestHistoryErrors(t *testing.T) {
	db := nightlyDB(t)
	dir := t.TempDir()
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"history"}, exitUsage, "--op is required: one of gemm, gemv, ger"},
		{[]string{"history", "--op", "syrk", "--m", "8", "--n", "8"}, exitUsage, `--op "syrk": want one of gemm, gemv, ger`},
		{[]string{"history", "--op", "gemv", "--m", "256"}, exitUsage, "--m and --n are required and must be positive"},
		{[]string{"history", "--op", "gemm", "--m", "64", "--n", "64"}, exitUsage, "--k is required for gemm"},
		{[]string{"history", "--op", "ger", "--m", "32", "--n", "32", "--k", "1"}, exitUsage, "--k does not apply to ger"},
		{append(slices.Clone(gemmHistoryArgs), "-o", filepath.Join(dir, "h.gif")), exitUsage, `chart format "gif" not supported`},
		{append(slices.Clone(gemmHistoryArgs), "extra"), exitUsage, `unexpected argument "extra"`},
		{append(slices.Clone(gemmHistoryArgs), "--precision", "fp8"), exitUsage, `--precision: "fp8": want exact or tf32`},
		// A value gemm would refuse names the flag, not an empty history.
		{append(slices.Clone(gemmHistoryArgs), "--dtype", "f128"), exitUsage, `--dtype: unknown type "f128" (want one of f16, bf16, f32, f64, c32, c64)`},
		{append(slices.Clone(gemmHistoryArgs), "--acc", "f8"), exitUsage, `--acc: unknown type "f8"`},
		{append(slices.Clone(gemmHistoryArgs), "--dtype", "f32", "--acc", "f16"), exitUsage, "--acc f16 is narrower than --dtype f32"},
		{append(slices.Clone(gemmHistoryArgs), "--trans", "xx"), exitUsage, `--trans "xx": gemm takes nn, nt, tn or tt`},
		{[]string{"history", "--op", "gemv", "--m", "256", "--n", "256", "--trans", "nn"}, exitUsage, `--trans "nn": gemv takes n or t`},
		{append(slices.Clone(gemmHistoryArgs), "--layout", "foo"), exitUsage, `--layout: unknown layout "foo" (want strided or group)`},
		// Every stored run was exact: tf32 is another problem.
		{append(slices.Clone(gemmHistoryArgs), "--device", "h200", "--precision", "tf32"), exitUsage, `ok measurement of gemm 64x64x32 tf32 on "h200"`},
		// Runs 1–3 on the H200 and run 4 on the CPU measured it.
		{gemmHistoryArgs, exitUsage, `gemm 64x64x32 matches several shapes or devices: pick one with --device "NVIDIA H200"|"cpu-haswell-Intel(R) Xeon(R)"`},
		{[]string{"history", "--op", "gemv", "--m", "256", "--n", "256", "--dtype", "f64"}, exitUsage,
			"has an ok measurement of gemv f64 256x256; check the shape with 'tltune export'"},
		{append(slices.Clone(gemmHistoryArgs), "--device", "MI300"), exitUsage, `ok measurement of gemm 64x64x32 on "MI300"`},
		{append(slices.Clone(gemmHistoryArgs), "--device", "h200", "-o", filepath.Join(dir, "no", "h.svg")), exitUsage, "no"},
	}
	for _, tc := range tests {
		status, out, errOut := tltune(append(tc.args, "--db", db)...)
		checkOneLine(t, status, tc.status, out, errOut, tc.want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed histories left %d files in %s", len(entries), dir)
	}
}

// TestChartAndRegressStoreErrors: the reading commands of this file and
// its neighbours neither create a missing database nor touch a damaged one.
func TestChartAndRegressStoreErrors(t *testing.T) {
	dir := t.TempDir()
	missing, broken := filepath.Join(dir, "missing.db"), filepath.Join(dir, "broken.db")
	content := []byte("SQLite format 3\x00" + strings.Repeat("\x2a", 4096))
	if err := os.WriteFile(broken, content, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "chart.svg")
	want := map[string]string{
		missing: "no results database at " + missing,
		broken:  broken + " is not a usable tltune results database",
	}
	for _, cmd := range [][]string{
		{"regress", "--baseline", "last"},
		{"roofline", "-o", svg},
		append(slices.Clone(gemmHistoryArgs), "-o", svg),
	} {
		for db, line := range want {
			status, out, errOut := tltune(append(cmd, "--db", db)...)
			checkOneLine(t, status, exitUsage, out, errOut, line)
		}
	}
	if after := readFile(t, broken); !bytes.Equal(after, content) {
		t.Error("the broken database was modified")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want the broken database alone (no new database, no chart)", dir, len(entries))
	}
}
