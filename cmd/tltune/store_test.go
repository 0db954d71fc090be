package main

import (
	"bytes"
	stdcontext "context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/results"
)

// tltune runs the command line in process and returns its status and
// output streams.
func tltune(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

// fixtureDB builds a results database with two devices and two runs, the
// first with every kind of outcome, and returns its path.
func fixtureDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := stdcontext.Background()
	at := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	h200 := results.Environment{Device: "NVIDIA H200", Vendor: "NVIDIA Corporation", Driver: "580.159.04",
		Runtime: "opencl", Host: "gpu-box", Version: "v0.1.0", Commit: "0123456789ab", CompilerVersion: "tltune v0.1.0"}
	pocl := results.Environment{Device: "cpu-haswell-Intel(R) Xeon(R)", Vendor: "GenuineIntel", Driver: "3.1",
		Runtime: "opencl", Host: "ci", Version: "v0.1.0", Commit: "0123456789ab", CompilerVersion: "tltune v0.1.0"}

	first := begin(t, s, h200, "nightly", at)
	for _, m := range []results.Measurement{
		timed(gemmConfig(16, 32), 2400, at),
		timed(gemmConfig(32, 32), 1800, at),
		{Config: gemmConfig(32, 64), Outcome: results.WrongResult, Message: "relative error 0.31 exceeds 0.002",
			Verified: true, VerifyError: 0.31, Seed: 11, MeasuredAt: at},
		{Config: gemmConfig(32, 48), Outcome: results.Pruned, Message: "recipe: work-group width 48 is not a multiple of the subgroup size 32", MeasuredAt: at},
		{Config: gemmConfig(32, 128), Outcome: results.CompileError, Message: "ptxas: too many resources requested", Seed: 11, MeasuredAt: at},
		timed(gemvConfig(), 950, at),
	} {
		if _, err := s.Record(ctx, first.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	pruned := results.PrunedCount{Problem: gemmConfig(0, 0).Problem, Rule: "work-group", Count: 12, Example: "work-group: 1024 exceeds the device maximum 512"}
	if err := s.RecordPruned(ctx, first.ID, []results.PrunedCount{pruned}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, first.ID, results.Done, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := begin(t, s, pocl, "", at.Add(time.Hour))
	if _, err := s.Record(ctx, second.ID, timed(gemmConfig(1, 1), 91000, at.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	return path
}

func begin(t *testing.T, s *results.Store, env results.Environment, tag string, at time.Time) results.Run {
	t.Helper()
	r, err := s.BeginRun(stdcontext.Background(), env, results.Run{UUID: results.NameUUID(env.Device + tag + at.String()),
		CommandLine: "tltune gemm --m 64 --n 64 --k 32 --dtype f16", Tag: tag, Op: "gemm", StartedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func gemmConfig(sg, wx int) results.Config {
	return results.Config{Problem: speak.Problem{Op: "gemm", M: 64, N: 64, K: 32, Dtype: "f16", Acc: "f32", Trans: "nn",
		Alpha: "1", Beta: "0", Layout: "strided"},
		Params: tuning.Params{SubgroupSize: sg, WorkGroupSize: [2]int{wx, 2}, Tile: [2]int{32, 32},
			Coopmatrix: [3]int{16, 8, 16}, Unroll: 2, BatchPerGroup: 1},
		SourceHash: fmt.Sprintf("sha256:%04x%04x", sg, wx)}
}

func gemvConfig() results.Config {
	return results.Config{Problem: speak.Problem{Op: "gemv", M: 64, N: 64, Dtype: "f32", Acc: "f32", Trans: "n",
		Alpha: "1", Beta: "0", Layout: "strided"},
		Params:     tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 1}, Tile: [2]int{2, 1}, BatchPerGroup: 4},
		SourceHash: "sha256:cdcdcdcd"}
}

// timed is an ok measurement with three samples around median.
func timed(c results.Config, median float64, at time.Time) results.Measurement {
	return results.Measurement{Config: c, Outcome: results.OK,
		SamplesNS: []float64{median - 10, median, median + 25}, MedianNS: median, MinNS: median - 10,
		MaxNS: median + 25, IQRNS: 17.5, CILowNS: median - 10, CIHighNS: median + 25,
		GFLOPS: math.Round(262144e3/median) / 1e3, GBS: math.Round(24576e3/median) / 1e3,
		Verified: true, VerifyError: 3.2e-4, Seed: 11, MeasuredAt: at}
}

// checkOneLine checks a failure: the status, one line on stderr holding
// want, nothing on stdout.
func checkOneLine(t *testing.T, status, wantStatus int, stdout, stderr, want string) {
	t.Helper()
	if status != wantStatus || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("status %d (want %d), stdout %q, stderr %q (want one line with %q)", status, wantStatus, stdout, stderr, want)
	}
}

// TestStoreErrors: a missing database is not created by a reading command,
// and a damaged one is left byte for byte as it was.
func TestStoreErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	broken := filepath.Join(dir, "broken.db")
	content := []byte("SQLite format 3\x00" + strings.Repeat("\x07", 3000))
	if err := os.WriteFile(broken, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"table"}, {"export", "--format", "json"}} {
		status, out, errOut := tltune(append(cmd, "--db", missing)...)
		checkOneLine(t, status, exitUsage, out, errOut, "no results database at "+missing)
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("%s created %s", cmd[0], missing)
		}
		status, out, errOut = tltune(append(cmd, "--db", broken)...)
		checkOneLine(t, status, exitUsage, out, errOut, broken+" is not a usable tltune results database")
		if after, _ := os.ReadFile(broken); !bytes.Equal(after, content) {
			t.Fatalf("%s modified the broken database", cmd[0])
		}
	}
}

// TestEmptyStoreIsRead: an empty file given to a reading command as --db
// is refused in one line, and stays empty: opened, SQLite would have made
// it a database.
func TestEmptyStoreIsRead(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	for _, args := range [][]string{
		{"export"}, {"table"}, {"regress", "--baseline", "1"}, {"roofline", "-o", filepath.Join(dir, "r.svg")},
		{"replay", "--run", "1"}, append(slices.Clone(gemmHistoryArgs), "--device", "h200"),
	} {
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		status, out, errOut := tltune(append(args, "--db", empty)...)
		checkOneLine(t, status, exitUsage, out, errOut, empty+" is empty, not a tltune results database; pass --db with a results store")
		if entries, _ := os.ReadDir(dir); len(entries) != 1 || len(readFile(t, empty)) != 0 {
			t.Errorf("tltune %s wrote %d files in %s, %d bytes into the empty one", args[0], len(entries), dir, len(readFile(t, empty)))
		}
	}
}

// TestOutputNeverReplacesAStore: an output path naming a results store
// (the one read, or another) is refused in one line with exit 2, and the
// store is left byte for byte as it was.
func TestOutputNeverReplacesAStore(t *testing.T) {
	db := nightlyDB(t)
	content := readFile(t, db)
	for _, args := range [][]string{
		{"export", "--db", db, "-o", db},
		{"table", "--db", db, "-o", db},
		{"regress", "--db", db, "--baseline", "1", "--run", "3", "--md", db},
		{"regress", "--db", db, "--baseline", "1", "--run", "3", "--junit", db},
		{"slurm", "nightly", "--array", "2", "-o", db},
	} {
		status, out, errOut := tltune(args...)
		checkOneLine(t, status, exitUsage, out, errOut, db+" is an SQLite database (a results store?), which writing it would destroy; name another file")
		if !bytes.Equal(readFile(t, db), content) {
			t.Fatalf("tltune %v changed the store", args)
		}
	}
}

// TestFolderForAFile: a folder where a command wants a file, or a file
// where it wants a folder, is bad input: one line and exit 2, not a
// runtime failure.
func TestFolderForAFile(t *testing.T) {
	db, folder := nightlyDB(t), t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--db", folder}, folder + " is a folder, not a usable tltune results database; pass --db with a file path"},
		{[]string{"merge", folder, db}, folder + " is a folder, not a usable tltune results database"},
		{[]string{"export", "--db", db, "-o", folder}, folder + " is a folder; name a file to write"},
		{[]string{"table", "--db", db, "-o", folder}, folder + " is a folder; name a file to write"},
		{[]string{"compile", "testdata/compile/gemm.tl", "-o", folder}, folder + " is a folder; name a file to write"},
		{[]string{"check", folder}, "is a directory"},
		{[]string{"fmt", folder}, "is a directory"},
		{[]string{"compile", folder}, "is a directory"},
		{[]string{"export", "--db", filepath.Join(db, "x.db")}, "not a directory"},
		{[]string{"run", "testdata/run/fib.ir", "--arg", "F=zeros", "--shape", "F=32x3", "--save", db}, "not a directory"},
	} {
		status, out, errOut := tltune(tc.args...)
		checkOneLine(t, status, exitUsage, out, errOut, tc.want)
	}
}

// TestDefaultDatabase: without --db the commands read
// $XDG_DATA_HOME/tltune/results.db.
func TestDefaultDatabase(t *testing.T) {
	db := fixtureDB(t)
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "tltune"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "tltune", "results.db"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_DATA_HOME", xdg)
	if status, out, errOut := tltune("export", "--run", "2"); status != exitOK || !strings.Contains(out, "91000") {
		t.Errorf("export from the default database: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}
