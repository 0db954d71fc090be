package results

import (
	"math"
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
