package results

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestThroughputAddsUp: the shapes of a sweep and the processes of a
// resumed run add their evaluations and seconds to the run's.
func TestThroughputAddsUp(t *testing.T) {
	s := openTemp(t)
	r := begin(t, s, h200, "")
	other := begin(t, s, h200, "")
	if got, err := s.Throughput(ctx, r.ID); err != nil || got.Evaluations != 0 || len(got.Phases) != 0 || got.EvaluationsPerSecond() != 0 {
		t.Fatalf("before anything was added: %+v, %v; want zero", got, err)
	}
	for _, add := range []Throughput{
		{Evaluations: 10, WallSeconds: 4, Phases: map[string]float64{"build": 1, "time": 3}},
		{Evaluations: 6, WallSeconds: 4, Phases: map[string]float64{"time": 2, "setup": 2}},
	} {
		if err := s.AddThroughput(ctx, r.ID, add); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddThroughput(ctx, other.ID, Throughput{Evaluations: 99, WallSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Throughput(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"build": 1, "time": 5, "setup": 2}
	if got.Evaluations != 16 || got.WallSeconds != 8 || math.Abs(got.EvaluationsPerSecond()-2) > 1e-12 || len(got.Phases) != len(want) {
		t.Fatalf("throughput %+v; want 16 evaluations in 8 s, phases %v", got, want)
	}
	for phase, sec := range want {
		if got.Phases[phase] != sec {
			t.Errorf("%s: %g s, want %g", phase, got.Phases[phase], sec)
		}
	}
}

// TestCrashOutcomeMigration: a database written before the crash outcome
// existed keeps its measurements when it is migrated, and then accepts
// crashes.
func TestCrashOutcomeMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	crashStep := slices.IndexFunc(migrations, func(m migration) bool { return strings.Contains(m.sql, "measurements_crash") })
	db := schemaAt(t, path, crashStep) // as a tltune from before the crash outcome left it
	insertMeasurement := func(outcome string, median any) error {
		_, err := db.Exec(`INSERT INTO measurements (run_id, config_id, outcome, message, median_ns, verified, seed, measured_at, environment_id)
			VALUES (1, 1, ?, '', ?, 0, 1, '2026-11-24T01:00:00Z', 1)`, outcome, median)
		return err
	}
	oldRun(t, db, "running")
	if _, err := db.Exec(`INSERT INTO configs VALUES (1, 'gemm', 'nn', 'f16', 'f32', 64, 64, 32, '1', '0', 0, 'strided', '{"subgroup_size":16}', 'h')`); err != nil {
		t.Fatal(err)
	}
	if err := insertMeasurement("ok", 1000); err != nil {
		t.Fatal(err)
	}
	err := insertMeasurement("crash", nil)
	db.Close()
	if err == nil {
		t.Fatal("the schema before the crash step accepted a crash")
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	record(t, s, 1, Measurement{Config: gemm(64, 64, 32, 32), Outcome: Crash, Message: "SIGSEGV"})
	ms, err := s.Measurements(ctx, 1)
	if err != nil || len(ms) != 2 || ms[0].Outcome != OK || ms[0].MedianNS != 1000 || ms[1].Outcome != Crash {
		t.Fatalf("after the migration: %+v, %v; want the ok measurement kept and the crash recorded", ms, err)
	}
	if ms[0].Raced || ms[0].Retimed {
		t.Errorf("a measurement from before racing reads raced %v, retimed %v; want timed in full", ms[0].Raced, ms[0].Retimed)
	}
}
