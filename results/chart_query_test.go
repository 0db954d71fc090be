package results

import (
	"slices"
	"testing"
	"time"
)

func TestShapeHistory(t *testing.T) {
	s := openTemp(t)
	pvc := h200
	pvc.Device = "Intel(R) Data Center GPU Max 1550"
	start := func(env Environment, at time.Time) Run {
		r, err := s.BeginRun(ctx, env, Run{Op: "gemm", StartedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Started out of id order: history is chronological.
	later, earlier, other := start(h200, t0.Add(time.Hour)), start(h200, t0), start(pvc, t0.Add(2*time.Hour))
	f32 := gemm(64, 64, 32, 16)
	f32.Dtype = "f32"
	wrong := ok(gemm(64, 64, 32, 8), 1)
	wrong.Outcome = WrongResult
	for run, ms := range map[int64][]Measurement{
		earlier.ID: {ok(gemm(64, 64, 32, 16), 300), ok(gemm(64, 64, 32, 32), 280), ok(f32, 500)},
		later.ID:   {wrong, ok(gemm(64, 64, 32, 32), 290), ok(gemm(64, 64, 64, 32), 10)},
		other.ID:   {ok(gemm(64, 64, 32, 16), 150)},
	} {
		for _, m := range ms {
			record(t, s, run, m)
		}
	}
	medians := func(q ShapeQuery) []float64 {
		h, err := s.ShapeHistory(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, rb := range h {
			if rb.Run.ID != rb.RunID {
				t.Errorf("entry of run %d carries run %d", rb.RunID, rb.Run.ID)
			}
			out = append(out, rb.MedianNS)
		}
		return out
	}
	q := ShapeQuery{Op: "gemm", M: 64, N: 64, K: 32, Dtype: "f16", Device: DeviceMatch{Name: "h200"}}
	if got := medians(q); !slices.Equal(got, []float64{280, 290}) {
		t.Errorf("f16 on the H200: medians %v, want [280 290] (best ok per run, oldest first)", got)
	}
	q.Dtype = ""
	if got := medians(q); !slices.Equal(got, []float64{280, 500, 290}) {
		t.Errorf("any dtype on the H200: medians %v, want [280 500 290] (within a run, by dtype)", got)
	}
	q.Device, q.Dtype = DeviceMatch{}, "f16"
	if got := medians(q); !slices.Equal(got, []float64{280, 290, 150}) {
		t.Errorf("f16 on any device: medians %v, want [280 290 150]", got)
	}
	q.Layout = "group"
	if got := medians(q); len(got) != 0 {
		t.Errorf("group layout: medians %v, want none", got)
	}
}
