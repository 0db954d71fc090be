package main

import (
	stdctx "context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tltune/device"
	"tltune/results"
)

func TestPeakUsage(t *testing.T) {
	for _, args := range [][]string{
		{"peak", "--device", "ref"},
		{"peak", "--repeats", "0"},
		{"peak", "--copy-mib", "-1"},
		{"peak", "extra"},
	} {
		status, _, stderr := tltune(args...)
		if status != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("tltune %v: status %d, stderr %q; want one usage line", args, status, stderr)
		}
	}
	status, _, stderr := tltune("peak", "--device", "no-such-device")
	if status != exitUsage || !strings.Contains(stderr, "tltune devices") {
		t.Errorf("unknown device: status %d, stderr %q", status, stderr)
	}
}

// TestPeakOnPoCL measures small ceilings on the PoCL CPU device.
func TestPeakOnPoCL(t *testing.T) {
	spec := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	status, stdout, stderr := tltune("peak", "--device", spec, "--json", "--copy-mib", "1", "--repeats", "2", "--db", db)
	if status != exitOK {
		t.Fatalf("peak: status %d, stderr %q", status, stderr)
	}
	checkCeilingsRecorded(t, db, spec)
	var p device.Peak
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("peak --json: %v\n%s", err, stdout)
	}
	if len(p.Ceilings) < 2 || p.Ceilings[0].Name != "copy" || p.Ceilings[0].Work != 2<<20 {
		t.Errorf("peak --json: %+v", p)
	}
	var text strings.Builder
	if err := writePeakTable(&text, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GB/s", "GFLOP/s", "fma_f32", p.Device} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("peak table lacks %q:\n%s", want, text.String())
		}
	}
}

// checkCeilingsRecorded checks that peak stored the ceilings of the device
// spec names in the database, where the roofline chart finds them.
func checkCeilingsRecorded(t *testing.T, db, spec string) {
	t.Helper()
	info, err := device.Select(device.Enumerate(), spec)
	if err != nil {
		t.Fatal(err)
	}
	st, err := results.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Ceilings(stdctx.Background(), environment(*info))
	if err != nil {
		t.Fatalf("ceilings of %s not recorded: %v", info.Name, err)
	}
	if c.CopyGBS <= 0 || c.F32GFLOPS <= 0 {
		t.Errorf("recorded ceilings %+v: want copy and f32 measured", c)
	}
}
