package results

import (
	"errors"
	"testing"
	"time"

	"tltune/internal/speak"
)

// shapes lists the shapes of measurements, for messages and comparisons.
func shapes(ms []Measurement) []speak.Problem {
	out := make([]speak.Problem, len(ms))
	for i, m := range ms {
		out[i] = m.Config.Problem
	}
	return out
}

func TestMatchRuns(t *testing.T) {
	s := openTemp(t)
	old, cur := begin(t, s, h200, "nightly"), begin(t, s, h200, "nightly")
	wrong := ok(gemm(32, 32, 32, 16), 5)
	wrong.Outcome = WrongResult
	grouped := gemm(64, 64, 32, 16)
	grouped.Layout = "group"
	for _, m := range []Measurement{
		ok(gemm(64, 64, 32, 16), 300), ok(gemm(64, 64, 32, 32), 200), // best: sg32
		ok(gemm(128, 128, 128, 16), 900),
		wrong,                        // 32x32x32: no ok measurement, so not measured
		ok(gemm(16, 16, 16, 16), 40), // gone
	} {
		record(t, s, old.ID, m)
	}
	for _, m := range []Measurement{
		ok(gemm(128, 128, 128, 16), 950),
		ok(gemm(64, 64, 32, 32), 260), ok(gemm(64, 64, 32, 16), 250), // best: sg16
		ok(gemm(32, 32, 32, 16), 70), // new: ok only now
		ok(grouped, 310),             // new: another layout is another shape
	} {
		record(t, s, cur.ID, m)
	}
	rm, err := s.MatchRuns(ctx, old.ID, cur.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Matched) != 2 {
		t.Fatalf("matched %d shapes, want 2: %+v", len(rm.Matched), rm.Matched)
	}
	m := rm.Matched[0] // in shape order: 64x64x32, then 128x128x128
	if m.Problem != gemm(64, 64, 32, 0).Problem || m.Baseline.MedianNS != 200 || m.Current.MedianNS != 250 ||
		m.Baseline.RunID != old.ID || m.Current.RunID != cur.ID {
		t.Errorf("64x64x32 matched as %+v", m)
	}
	if got := shapes(rm.Gone); len(got) != 1 || got[0] != gemm(16, 16, 16, 0).Problem {
		t.Errorf("gone = %+v, want 16x16x16", got)
	}
	if got := shapes(rm.New); len(got) != 2 || got[0] != gemm(32, 32, 32, 0).Problem || got[1] != grouped.Problem {
		t.Errorf("new = %+v, want 32x32x32 and the group layout of 64x64x32", got)
	}
	if _, err := s.MatchRuns(ctx, old.ID, 99); !errors.Is(err, ErrNoRun) {
		t.Errorf("MatchRuns with a missing run: %v, want ErrNoRun", err)
	}
}

func TestRunBefore(t *testing.T) {
	s := openTemp(t)
	pvc := h200
	pvc.Device = "Intel(R) Data Center GPU Max 1550"
	first := begin(t, s, h200, "")
	begin(t, s, pvc, "")
	newDriver := h200
	newDriver.Driver = "590.1" // another environment on the same device
	third := begin(t, s, newDriver, "")
	prev, err := s.RunBefore(ctx, third)
	if err != nil || prev.ID != first.ID {
		t.Errorf("RunBefore(run %d) = run %d, %v; want run %d (the PVC run is another device)", third.ID, prev.ID, err, first.ID)
	}
	if _, err := s.RunBefore(ctx, first); !errors.Is(err, ErrNoRun) {
		t.Errorf("RunBefore(first run): %v, want ErrNoRun", err)
	}
}

func TestResolveBaseline(t *testing.T) {
	s := openTemp(t)
	first, second, third := begin(t, s, h200, "nightly"), begin(t, s, h200, "nightly"), begin(t, s, h200, "weekly")
	broken := begin(t, s, h200, "nightly")
	if err := s.FinishRun(ctx, broken.ID, Failed, time.Time{}); err != nil {
		t.Fatal(err)
	}
	pvc := h200
	pvc.Device = "Intel(R) Data Center GPU Max 1550"
	begin(t, s, pvc, "nightly")
	for _, tc := range []struct {
		ref  string
		cur  Run
		want int64
	}{
		{"nightly", third, second.ID}, // the tag's latest run on the device that did not fail
		{"nightly", second, first.ID}, // not the current run itself
		{"last", third, second.ID},    // the run before
		{"1", third, first.ID},        // an id
		{"3", third, third.ID},        // an id, even the current one: the caller refuses it
	} {
		got, err := s.ResolveBaseline(ctx, tc.ref, tc.cur)
		if err != nil || got.ID != tc.want {
			t.Errorf("ResolveBaseline(%q, run %d) = run %d, %v; want run %d", tc.ref, tc.cur.ID, got.ID, err, tc.want)
		}
	}
	for _, ref := range []string{"weekly", "monthly", "9"} {
		if _, err := s.ResolveBaseline(ctx, ref, third); !errors.Is(err, ErrNoRun) {
			t.Errorf("ResolveBaseline(%q, run 3): %v, want ErrNoRun", ref, err)
		}
	}
}
