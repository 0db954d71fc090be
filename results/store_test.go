package results

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

var ctx = context.Background()

var h200 = Environment{Device: "NVIDIA H200", Vendor: "NVIDIA", Driver: "580.159.04", Runtime: "opencl",
	Host: "gpu1", Version: "v0.1.0", Commit: "abc123", CompilerVersion: "tltune-cc 0.1", CoreClockMHz: 1980}

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "sub", "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func begin(t *testing.T, s *Store, env Environment, tag string) Run {
	t.Helper()
	r, err := s.BeginRun(ctx, env, Run{CommandLine: "tltune gemm --m 64", Tag: tag, Op: "gemm", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func gemm(m, n, k, sg int) Config {
	return Config{Problem: speak.Problem{Op: "gemm", M: m, N: n, K: k, Dtype: "f16", Acc: "f32", Trans: "nn",
		Alpha: "1", Beta: "0", Layout: "strided"},
		Params:     tuning.Params{SubgroupSize: sg, WorkGroupSize: [2]int{sg, 1}, Tile: [2]int{16, 16}, Unroll: 1, BatchPerGroup: 1},
		SourceHash: "h" + tuning.Params{SubgroupSize: sg}.String()}
}

func ok(c Config, median float64) Measurement {
	return Measurement{Config: c, Outcome: OK, SamplesNS: []float64{median, median + 1, median - 1},
		MedianNS: median, MinNS: median - 1, MaxNS: median + 1, IQRNS: 1, CILowNS: median - 0.5, CIHighNS: median + 0.5,
		GFLOPS: 1e6 / median, GBS: 2e6 / median, Verified: true, VerifyError: 1e-4, Seed: 42, MeasuredAt: t0}
}

func record(t *testing.T, s *Store, runID int64, m Measurement) int64 {
	t.Helper()
	id, err := s.Record(ctx, runID, m)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func schemaRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrateFromEmptyAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil { // an empty file is an empty database
		t.Fatal(err)
	}
	for range 2 {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := schemaRows(t, s); got != SchemaVersion() {
			t.Errorf("schema_version has %d rows, want %d", got, SchemaVersion())
		}
		var mode string
		s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
		if mode != "wal" {
			t.Errorf("journal mode %q, want wal", mode)
		}
		s.Close()
	}
}

func TestOpenExistingNeedsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := OpenExisting(path)
	if !errors.Is(err, ErrNoDatabase) || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenExisting(missing) = %v", err)
	}
	if _, statErr := os.Stat(path); !errors.Is(statErr, os.ErrNotExist) {
		t.Error("OpenExisting created the file")
	}
	dir := t.TempDir()
	if _, err := Open(dir); !errors.Is(err, ErrNotDatabase) || !strings.Contains(err.Error(), dir+" is a folder") {
		t.Errorf("Open(folder) = %v", err)
	}
	// An empty file is a new database to Open, and no database to read.
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenExisting(empty); !errors.Is(err, ErrNotDatabase) || !strings.HasPrefix(err.Error(), empty+" is empty, not a tltune results database; ") {
		t.Errorf("OpenExisting(empty) = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("OpenExisting(empty) left %d files", len(entries))
	} else if info, _ := os.Stat(empty); info.Size() != 0 {
		t.Errorf("OpenExisting(empty) wrote %d bytes into it", info.Size())
	}
}

// TestRefusedFilesUntouched: files that are not results databases, or are
// from a newer tltune, are refused with one line naming the file, and their
// bytes do not change; no journal files are left beside them.
func TestRefusedFilesUntouched(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want error
	}{
		{"text file", writeBytes([]byte("name,median\ngemm,12\n")), ErrNotDatabase},
		{"sqlite header then garbage", writeBytes(append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xa5}, 4096)...)), ErrNotDatabase},
		{"truncated database", truncatedDatabase, ErrNotDatabase},
		{"foreign sqlite database", foreignDatabase, ErrNotDatabase},
		{"newer schema", newerDatabase, ErrNewerSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "results.db")
			tc.make(t, path)
			before, _ := os.ReadFile(path)
			_, err := Open(path)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open = %v, want %v", err, tc.want)
			}
			t.Log(err)
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, "--db") {
				t.Errorf("error is not one line naming the file and the fix: %q", msg)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("the refused file was modified")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("files left beside the database: %v", entries)
			}
		})
	}
}

func writeBytes(data []byte) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// truncatedDatabase is a real results database cut after its first page:
// the header is valid, the schema pages are missing.
func truncatedDatabase(t *testing.T, path string) {
	whole := filepath.Join(t.TempDir(), "whole.db")
	s, err := Open(whole)
	if err != nil {
		t.Fatal(err)
	}
	s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	s.Close()
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	writeBytes(data[:4096+100])(t, path)
}

func foreignDatabase(t *testing.T, path string) {
	execRaw(t, path, `CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)`)
}

func newerDatabase(t *testing.T, path string) {
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	execRaw(t, path, `INSERT INTO schema_version VALUES (99, 'future')`)
}

// execRaw runs SQL on path in rollback-journal mode, so that no WAL files
// stay beside it.
func execRaw(t *testing.T, path, query string) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query); err != nil {
		t.Fatal(err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "nightly")
	good := ok(gemm(64, 64, 32, 32), 1000)
	wrong := Measurement{Config: gemm(64, 64, 32, 16), Outcome: WrongResult, Message: "output has NaN",
		Verified: true, VerifyError: math.NaN(), Seed: -7, MeasuredAt: t0}
	pruned := Measurement{Config: gemm(64, 64, 32, 64), Outcome: Pruned, Message: "local memory", MeasuredAt: t0}
	for _, m := range []Measurement{good, wrong, pruned} {
		record(t, s, run.ID, m)
	}
	got, err := s.Measurements(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d measurements, want 3", len(got))
	}
	g := got[0]
	if g.Config != good.Config || g.MedianNS != 1000 || g.CIHighNS != 1000.5 || g.VerifyError != 1e-4 ||
		!g.MeasuredAt.Equal(t0) || len(g.SamplesNS) != 3 || g.SamplesNS[1] != 1001 || g.RunID != run.ID {
		t.Errorf("ok measurement came back as %+v", g)
	}
	if w := got[1]; !w.Verified || !math.IsNaN(w.VerifyError) || w.Seed != -7 || w.MedianNS != 0 || w.SamplesNS != nil {
		t.Errorf("wrong result came back as %+v", w)
	}
	if p := got[2]; p.Verified || p.Outcome != Pruned || p.Message != "local memory" {
		t.Errorf("pruned came back as %+v", p)
	}
}

func TestRecordRefuses(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	c := gemm(8, 8, 8, 16)
	tests := []struct {
		name  string
		runID int64
		m     Measurement
		want  string
	}{
		{"ok without median", run.ID, Measurement{Config: c, Outcome: OK}, "positive median"},
		{"unknown outcome", run.ID, Measurement{Config: c, Outcome: "slow"}, `outcome "slow"`},
		{"no such run", 999, ok(c, 5), "no such run 999"},
	}
	for _, tc := range tests {
		if _, err := s.Record(ctx, tc.runID, tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Record = %v, want %q", tc.name, err, tc.want)
		}
	}
	record(t, s, run.ID, ok(c, 5))
	if _, err := s.Record(ctx, run.ID, ok(c, 4)); !errors.Is(err, ErrAlreadyMeasured) {
		t.Errorf("second measurement of a config: %v", err)
	}
	if err := s.FinishRun(ctx, run.ID, Done, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, run.ID, ok(gemm(8, 8, 8, 32), 5)); err == nil || !strings.Contains(err.Error(), "is done") {
		t.Errorf("record into a finished run: %v", err)
	}
}

func TestBestPerShapeNeverPicksWrongResults(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	wrongFast := ok(gemm(64, 64, 32, 8), 1) // fastest, but wrong
	wrongFast.Outcome = WrongResult
	timeout := ok(gemm(64, 64, 32, 64), 2)
	timeout.Outcome = Timeout
	onlyWrong := ok(gemm(32, 32, 32, 8), 1) // a shape with no correct config
	onlyWrong.Outcome = WrongResult
	for _, m := range []Measurement{wrongFast, ok(gemm(64, 64, 32, 16), 100), ok(gemm(64, 64, 32, 32), 50), timeout, onlyWrong} {
		record(t, s, run.ID, m)
	}
	best, err := s.BestPerShape(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(best) != 1 {
		t.Fatalf("%d best rows, want 1 (the all-wrong shape has no best): %+v", len(best), best)
	}
	if b := best[0]; b.MedianNS != 50 || b.Config.Params.SubgroupSize != 32 || b.Env.Device != "NVIDIA H200" {
		t.Errorf("best = %+v", b)
	}
}

func TestBestPerShapeFilters(t *testing.T) {
	s := openTemp(t)
	pvc := h200
	pvc.Device, pvc.Vendor = "Intel(R) Data Center GPU Max 1550", "Intel"
	r1, r2 := begin(t, s, h200, ""), begin(t, s, pvc, "")
	record(t, s, r1.ID, ok(gemm(64, 64, 32, 32), 10))
	gemv := Config{Problem: speak.Problem{Op: "gemv", M: 64, N: 64, Dtype: "f32", Acc: "f32", Trans: "n", Alpha: "1", Beta: "0", Layout: "strided"}}
	record(t, s, r1.ID, ok(gemv, 10))
	record(t, s, r2.ID, ok(gemm(64, 64, 32, 16), 20))
	count := func(f Filter) int {
		best, err := s.BestPerShape(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return len(best)
	}
	for f, want := range map[Filter]int{
		{}: 3, {Device: DeviceMatch{Name: "h200"}}: 2, {Device: DeviceMatch{Name: "max 1550"}}: 1, {Op: "gemm"}: 2,
		{Op: "gemv", Device: DeviceMatch{Name: "H200"}}: 1, {RunID: r2.ID}: 1, {Device: DeviceMatch{Name: "MI300"}}: 0,
		{Device: ThisDevice("NVIDIA H200")}: 2, {Device: ThisDevice("H200")}: 0,
	} {
		if got := count(f); got != want {
			t.Errorf("BestPerShape(%+v): %d rows, want %d", f, got, want)
		}
	}
}

// TestTuningTableRoundTrip exports the best configurations, writes the
// table, reads it back and looks up an exact and a nearest shape.
func TestTuningTableRoundTrip(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	record(t, s, run.ID, ok(gemm(64, 64, 32, 16), 300))
	record(t, s, run.ID, ok(gemm(64, 64, 32, 32), 200))
	grouped := gemm(64, 64, 32, 32)
	grouped.Layout = "group" // the same shape in the other batch layout, slower
	record(t, s, run.ID, ok(grouped, 250))
	record(t, s, run.ID, ok(gemm(256, 256, 256, 16), 900))

	table, err := s.TuningTable(ctx, Filter{Op: "gemm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Entries) != 3 {
		t.Fatalf("%d entries, want one per problem (the group layout is a problem of its own): %+v", len(table.Entries), table.Entries)
	}
	var buf bytes.Buffer
	if err := table.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := tuning.Parse("tuning.json", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	key := tuning.Key{Device: "NVIDIA H200", Problem: gemm(64, 64, 32, 0).Problem}
	exact := back.Lookup(key)
	if exact.How != tuning.Exact || exact.Entry.Params.SubgroupSize != 32 || exact.Entry.MedianNS != 200 ||
		exact.Entry.Run != run.ID || exact.Entry.Driver != h200.Driver {
		t.Errorf("exact lookup: %v / %+v", exact, exact.Entry)
	}
	key.M, key.N, key.K = 200, 200, 300
	if near := back.Lookup(key); near.How != tuning.Nearest || near.Entry.M != 256 {
		t.Errorf("nearest lookup: %v", near)
	}
}

func TestResolveRun(t *testing.T) {
	s := openTemp(t)
	if _, err := s.ResolveRun(ctx, "last"); !errors.Is(err, ErrNoRun) {
		t.Errorf("last of an empty store: %v", err)
	}
	a, b, c := begin(t, s, h200, "nightly"), begin(t, s, h200, "nightly"), begin(t, s, h200, "")
	for ref, want := range map[string]int64{"last": c.ID, "1": a.ID, "nightly": b.ID} {
		r, err := s.ResolveRun(ctx, ref)
		if err != nil || r.ID != want {
			t.Errorf("ResolveRun(%q) = run %d, %v; want run %d", ref, r.ID, err, want)
		}
	}
	for _, ref := range []string{"42", "weekly"} {
		if _, err := s.ResolveRun(ctx, ref); !errors.Is(err, ErrNoRun) {
			t.Errorf("ResolveRun(%q) = %v, want ErrNoRun", ref, err)
		}
	}
	r, err := s.Run(ctx, a.ID)
	if err != nil || r.Env != h200 || r.Tag != "nightly" || !r.StartedAt.Equal(t0) || r.Status != Running {
		t.Errorf("Run(%d) = %+v, %v", a.ID, r, err)
	}
	if runs, _ := s.Runs(ctx, ""); len(runs) != 3 || runs[0].ID != c.ID {
		t.Errorf("Runs(\"\") = %+v", runs)
	}
}

func TestEnvironmentsShared(t *testing.T) {
	s := openTemp(t)
	other := h200
	other.Driver = "590.1"
	begin(t, s, h200, "")
	begin(t, s, h200, "")
	begin(t, s, other, "")
	var n int
	s.db.QueryRow(`SELECT count(*) FROM environments`).Scan(&n)
	if n != 2 {
		t.Errorf("%d environment rows, want 2", n)
	}
}

func TestCeilings(t *testing.T) {
	s := openTemp(t)
	if err := s.RecordCeilings(ctx, h200, Ceilings{CopyGBS: 4000, F32GFLOPS: 60000, MeasuredAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordCeilings(ctx, h200, Ceilings{CopyGBS: 4100, F32GFLOPS: 61000, MeasuredAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	newBuild := h200
	newBuild.Version, newBuild.Commit = "v0.2.0", "def456"
	c, err := s.Ceilings(ctx, newBuild)
	if err != nil || c.CopyGBS != 4100 || c.F16GFLOPS != 0 {
		t.Errorf("Ceilings for a new build on the same device = %+v, %v", c, err)
	}
	otherDevice := h200
	otherDevice.Device = "NVIDIA H100"
	if _, err := s.Ceilings(ctx, otherDevice); !errors.Is(err, ErrNoCeilings) {
		t.Errorf("Ceilings of an unmeasured device: %v", err)
	}
}

// TestCancelledQueryKeepsTheCause checks that a query stopped by a
// cancelled context still says so to errors.Is, so a command interrupted
// while it reads the store records the run as interrupted, not failed.
func TestCancelledQueryKeepsTheCause(t *testing.T) {
	s := openTemp(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Runs(cancelled, "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Runs with a cancelled context: %v; want an error wrapping context.Canceled", err)
	}
}

func TestAboveRoof(t *testing.T) {
	c := Ceilings{CopyGBS: 20, F32GFLOPS: 40, F64GFLOPS: 30, MMAGFLOPS: 600}
	f32 := gemm(32, 32, 32, 0).Problem
	f32.Dtype, f32.Acc = "f32", "f32"
	if got := c.AboveRoof(f32, 39, 19); got != "" {
		t.Errorf("below both roofs: %q", got)
	}
	got := c.AboveRoof(f32, 95.6, 20.8)
	for _, want := range []string{"warning: gemm.nn f32 32x32x32: 95.6 GFLOP/s is above the f32 FMA ceiling 40 GFLOP/s",
		"20.8 GB/s is 104.0% of the copy bandwidth 20 GB/s", "tltune peak"} {
		if !strings.Contains(got, want) {
			t.Errorf("AboveRoof = %q, want it to contain %q", got, want)
		}
	}
	// An f16 GEMM on a matrix engine runs under the matrix roof, and so
	// does a tf32 one, which the f16 rate bounds.
	for _, tc := range []struct {
		dtype, precision, name string
		roof                   float64
	}{{"f16", "", "f16 matrix", 600}, {"c64", "", "f64 FMA", 30}, {"f32", "", "f32 FMA", 40}, {"f32", speak.TF32, "f16 matrix", 600}} {
		p := f32
		p.Dtype, p.Precision = tc.dtype, tc.precision
		if name, roof := c.ComputeRoof(p); name != tc.name || roof != tc.roof {
			t.Errorf("%s roof %s %g, want %s %g", p, name, roof, tc.name, tc.roof)
		}
	}
}

// TestRetime: a raced measurement keeps its partial samples and says so;
// its final re-timing replaces outcome, samples and timing in place and
// says so; a configuration the run never measured, or a finished run,
// cannot be re-timed.
func TestRetime(t *testing.T) {
	s := openTemp(t)
	r := begin(t, s, h200, "")
	raced := ok(gemm(64, 64, 32, 16), 2000)
	raced.Raced = true
	id := record(t, s, r.ID, raced)
	full := ok(gemm(64, 64, 32, 16), 1900)
	full.SamplesNS = []float64{1900, 1899, 1901, 1900, 1900, 1902}
	full.Retimed = true
	if err := s.Retime(ctx, r.ID, full); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Measurements(ctx, r.ID)
	if err != nil || len(ms) != 1 {
		t.Fatalf("%+v, %v: want one measurement", ms, err)
	}
	if m := ms[0]; m.ID != id || m.Raced || !m.Retimed || m.MedianNS != 1900 || !slices.Equal(m.SamplesNS, full.SamplesNS) || m.Env != h200 {
		t.Errorf("after the re-timing: %+v", m)
	}
	if err := s.Retime(ctx, r.ID, ok(gemm(64, 64, 32, 32), 1000)); !errors.Is(err, ErrNotMeasured) {
		t.Errorf("re-timing a configuration never measured: %v", err)
	}
	if err := s.FinishRun(ctx, r.ID, Done, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Retime(ctx, r.ID, full); err == nil {
		t.Error("a finished run accepted a re-timing")
	}
}
