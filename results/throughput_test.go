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
	all := migrations
	crashStep := slices.IndexFunc(all, func(m migration) bool { return strings.Contains(m.sql, "measurements_crash") })
	migrations = all[:crashStep] // a tltune from before the crash outcome
	s, err := Open(path)
	if err != nil {
		migrations = all
		t.Fatal(err)
	}
	r := begin(t, s, h200, "")
	record(t, s, r.ID, ok(gemm(64, 64, 32, 16), 1000))
	_, err = s.Record(ctx, r.ID, Measurement{Config: gemm(64, 64, 32, 32), Outcome: Crash, Message: "SIGSEGV"})
	s.Close()
	migrations = all
	if err == nil {
		t.Fatal("schema 2 accepted a crash")
	}
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	record(t, s, r.ID, Measurement{Config: gemm(64, 64, 32, 32), Outcome: Crash, Message: "SIGSEGV"})
	ms, err := s.Measurements(ctx, r.ID)
	if err != nil || len(ms) != 2 || ms[0].Outcome != OK || ms[0].MedianNS != 1000 || ms[1].Outcome != Crash {
		t.Fatalf("after the migration: %+v, %v; want the ok measurement kept and the crash recorded", ms, err)
	}
}
