package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/tuning"
)

func TestTableGolden(t *testing.T) {
	db := fixtureDB(t)
	tests := []struct {
		name string
		args []string
	}{
		{"table.stdout", nil},
		{"table-h200-gemm.stdout", []string{"--device", "h200", "--op", "gemm"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errOut := tltune(append([]string{"table", "--db", db}, tc.args...)...)
			if status != exitOK || errOut != "" {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			checkGolden(t, tc.name, []byte(out))
		})
	}
}

// TestTableFile writes the table with -o and checks that the compiler's
// reader accepts it and finds the measured best configuration.
func TestTableFile(t *testing.T) {
	db := fixtureDB(t)
	path := filepath.Join(t.TempDir(), "tuning.json")
	status, out, errOut := tltune("table", "--db", db, "-o", path, "--op", "gemm")
	if status != exitOK || out != path+": 2 entries\n" || errOut != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	table, err := tuning.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := table.Lookup(tuning.Key{Device: "NVIDIA H200", Problem: gemmConfig(0, 0).Problem})
	if got.How != tuning.Exact || got.Entry.Params.WorkGroupSize != [2]int{32, 2} || got.Entry.MedianNS != 1800 {
		t.Errorf("lookup in the written table: %v", got)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("table file mode: %v, %v", info, err)
	}
}

func TestTableErrors(t *testing.T) {
	db := fixtureDB(t)
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"--op", "conv"}, exitUsage, `--op "conv": want one of gemm, gemv, ger`},
		{[]string{"extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"--device", "MI300"}, exitUsage, `matches --device "MI300"; nothing written`},
		{[]string{"-o", filepath.Join(t.TempDir(), "no", "such", "dir", "t.json")}, exitUsage, "no such file or directory"},
	}
	for _, tc := range tests {
		status, out, errOut := tltune(append([]string{"table", "--db", db}, tc.args...)...)
		checkOneLine(t, status, tc.status, out, errOut, tc.want)
	}
}

// TestStoredDeviceSyntax: table and history take --device as every command
// does. An index or opencl:N names this machine's device exactly; a
// substring matches stored devices of any machine; ref is refused.
func TestStoredDeviceSyntax(t *testing.T) {
	withInventory(t, fixedInventory()) // opencl:0 is the NVIDIA H200
	db := fixtureDB(t)
	for _, spec := range []string{"0", "opencl:0", "h200"} {
		status, out, errOut := tltune("table", "--db", db, "--device", spec)
		if status != exitOK || !strings.Contains(out, `"device":"NVIDIA H200"`) || strings.Contains(out, "cpu-haswell") {
			t.Errorf("table --device %s: status %d, stderr %q\n%s", spec, status, errOut, out)
		}
	}
	// opencl:1 is a CPU this machine has and the store has no results of.
	status, out, errOut := tltune("table", "--db", db, "--device", "opencl:1")
	checkOneLine(t, status, exitUsage, out, errOut, `matches --device "pthread-haswell"`)
	status, out, errOut = tltune("table", "--db", db, "--device", "ze:3")
	checkOneLine(t, status, exitUsage, out, errOut, `--device ze:3: no device matches "ze:3"`)
	status, out, errOut = tltune("history", "--db", db, "--op", "gemm", "--m", "64", "--n", "64", "--k", "32", "--device", "ref")
	checkOneLine(t, status, exitUsage, out, errOut, "--device ref: the reference interpreter has no stored results")
}
