package results

import (
	"sync"
	"testing"
)

// TestConcurrentRecords: goroutines recording into one run wait for each
// other (immediate transactions, busy timeout) instead of failing.
func TestConcurrentRecords(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Record(ctx, run.ID, ok(gemm(64, 64, 32+w, 1+i), 100)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ms, err := s.Measurements(ctx, run.ID); err != nil || len(ms) != workers*each {
		t.Errorf("%d measurements, %v; want %d", len(ms), err, workers*each)
	}
}

// BenchmarkRecord is the store's share of the tuner's per-evaluation
// overhead: one committed transaction holding a configuration and a
// measurement with 100 samples.
func BenchmarkRecord(b *testing.B) {
	s, err := Open(b.TempDir() + "/results.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	run, err := s.BeginRun(ctx, h200, Run{Op: "gemm"})
	if err != nil {
		b.Fatal(err)
	}
	m := ok(gemm(64, 64, 32, 16), 1000)
	m.SamplesNS = make([]float64, 100)
	b.ResetTimer()
	for i := range b.N {
		m.Config.Params.Unroll = i + 1 // a new configuration each time
		if _, err := s.Record(ctx, run.ID, m); err != nil {
			b.Fatal(err)
		}
	}
}
