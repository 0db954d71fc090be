package measure

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// noisy returns a sampler of 1000 ns × (1 + spread·N(0,1)), seeded.
func noisy(seed uint64, spread float64) Sampler {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(context.Context) (float64, error) {
		return 1000 * math.Max(0.1, 1+spread*r.NormFloat64()), nil
	}
}

func TestSummarize(t *testing.T) {
	samples := []float64{5, 1, 4, 2, 3, 9, 8, 7, 6, 10}
	before := slices.Clone(samples)
	s := Summarize(samples, 0.95)
	if !slices.Equal(samples, before) {
		t.Error("Summarize reordered the raw samples")
	}
	if s.N != 10 || s.Median != 5.5 || s.Min != 1 || s.Max != 10 || s.Q1 != 3.25 || s.Q3 != 7.75 || s.IQR != 4.5 {
		t.Errorf("summary %+v", s)
	}
	if !(s.Lo <= s.Median && s.Median <= s.Hi) || s.Confidence < 0.95 {
		t.Errorf("interval [%v, %v] at %v does not hold the median", s.Lo, s.Hi, s.Confidence)
	}
	if few := Summarize([]float64{1, 2}, 0.95); !math.IsInf(few.RelativeHalfWidth, 1) {
		t.Errorf("two samples gave a finite interval: %+v", few)
	}
	if none := Summarize(nil, 0.95); none.N != 0 || !math.IsInf(none.RelativeHalfWidth, 1) {
		t.Errorf("empty summary %+v", none)
	}
}

// TestIntervalShrinks: more samples of the same distribution, tighter
// interval.
func TestIntervalShrinks(t *testing.T) {
	sample := noisy(1, 0.05)
	var xs []float64
	var widths []float64
	for _, n := range []int{20, 80, 320, 1280} {
		for len(xs) < n {
			x, _ := sample(context.Background())
			xs = append(xs, x)
		}
		widths = append(widths, Summarize(xs, 0.95).RelativeHalfWidth)
	}
	for i := 1; i < len(widths); i++ {
		if widths[i] >= widths[i-1] {
			t.Errorf("half-widths %v do not shrink", widths)
		}
	}
}

func TestRunStopsAtTarget(t *testing.T) {
	var counts []int
	for _, spread := range []float64{0.01, 0.05, 0.10} {
		p := Protocol{Target: 0.01, MaxSamples: 100000, MaxTime: time.Hour}
		r, err := p.Run(context.Background(), noisy(7, spread))
		if err != nil {
			t.Fatal(err)
		}
		if r.Stop != StopTarget || r.Summary.RelativeHalfWidth > 0.01 {
			t.Errorf("spread %v: stop %s at half-width %v", spread, r.Stop, r.Summary.RelativeHalfWidth)
		}
		if len(r.Warmup) != 3 || r.Summary.N != len(r.Samples) {
			t.Errorf("warm-up %d, summary of %d of %d samples", len(r.Warmup), r.Summary.N, len(r.Samples))
		}
		counts = append(counts, len(r.Samples))
	}
	if !(counts[0] < counts[1] && counts[1] < counts[2]) {
		t.Errorf("samples taken %v: noisier should need more", counts)
	}
	t.Logf("samples to reach ±1%% at 1%%, 5%%, 10%% noise: %v", counts)
}

func TestRunCaps(t *testing.T) {
	r, err := Protocol{Target: 1e-6, MaxSamples: 50, MaxTime: time.Hour}.Run(context.Background(), noisy(3, 0.2))
	if err != nil || r.Stop != StopCount || len(r.Samples) != 50 {
		t.Errorf("count cap: stop %s after %d, err %v", r.Stop, len(r.Samples), err)
	}
	jitter := noisy(5, 0.2)
	slow := func(ctx context.Context) (float64, error) { time.Sleep(time.Millisecond); return jitter(ctx) }
	r, err = Protocol{Target: 1e-6, MaxSamples: 1 << 20, MaxTime: 30 * time.Millisecond}.Run(context.Background(), slow)
	if err != nil || r.Stop != StopTime || len(r.Samples) >= 1<<20 {
		t.Errorf("time cap: stop %s after %d, err %v", r.Stop, len(r.Samples), err)
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("device lost")
	n := 0
	failing := func(context.Context) (float64, error) {
		if n++; n > 5 {
			return 0, boom
		}
		return 1, nil
	}
	r, err := Protocol{}.Run(context.Background(), failing)
	if !errors.Is(err, boom) || len(r.Samples) != 2 || len(r.Warmup) != 3 {
		t.Errorf("err %v with %d samples, %d warm-up", err, len(r.Samples), len(r.Warmup))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Protocol{}).Run(ctx, noisy(1, 0.1)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	nan := func(context.Context) (float64, error) { return math.NaN(), nil }
	if _, err := (Protocol{}).Run(context.Background(), nan); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN sample: %v", err)
	}
}

func TestPlanBatch(t *testing.T) {
	const mib = 1 << 20
	entry := int64(16 << 10) // gemm 64x64x32 f16: A, B 4 KiB each, C 8 KiB
	cases := []struct {
		name  string
		goal  BatchGoal
		batch int
		sets  int
		limit string
	}{
		// 4 × 50 MiB / 16 KiB = 12800 entries; then the launch alone
		// streams the goal, one set.
		{"cold, cache bound", BatchGoal{EntryBytes: entry, CacheBytes: 50 * mib, MinBatch: 1}, 12800, 1, ""},
		// 100 × 10µs / 10ns = 100000 entries.
		{"cold, time bound", BatchGoal{EntryBytes: entry, CacheBytes: 50 * mib, EntryTime: 10}, 100000, 1, ""},
		{"hot", BatchGoal{EntryBytes: entry, CacheBytes: 50 * mib, Hot: true, MinBatch: 64}, 64, 1, ""},
		// MaxBatch 1000 launches move 16000 KiB: 13 sets reach 200 MiB.
		{"rotate", BatchGoal{EntryBytes: entry, CacheBytes: 50 * mib, MaxBatch: 1000}, 1000, 13, "batch capped at 1000"},
		{"memory", BatchGoal{EntryBytes: entry, CacheBytes: 50 * mib, MaxBatch: 1000, MemoryBytes: 64 * mib}, 1000, 4, "repeats may hit the cache"},
		{"problem batch wins", BatchGoal{EntryBytes: entry, MinBatch: 5000}, 5000, 1, ""},
		// 200 MiB in launches of 8 entries (128 KiB) would take 1600 sets;
		// at 16 bytes an entry, 1.6 million: capped.
		{"tiny launches", BatchGoal{EntryBytes: entry, CacheBytes: 50 * mib, MaxBatch: 8}, 8, 1600, "batch capped at 8"},
	}
	for _, c := range cases {
		p, err := PlanBatch(c.goal)
		if err != nil {
			t.Fatal(err)
		}
		if p.Batch != c.batch || p.Sets != c.sets || !strings.Contains(p.Limited, c.limit) || (c.limit == "" && p.Limited != "") {
			t.Errorf("%s: %+v, want batch %d sets %d limited %q", c.name, p, c.batch, c.sets, c.limit)
		}
		if p.LaunchBytes != int64(p.Batch)*entry || p.FootprintBytes != int64(p.Sets)*p.LaunchBytes {
			t.Errorf("%s: byte counts %+v", c.name, p)
		}
	}
	if _, err := PlanBatch(BatchGoal{}); err == nil {
		t.Error("no error for zero entry bytes")
	}
}

// scaled is a sampler of median ns with 1 % noise, seeded.
func scaled(median float64, seed uint64) Sampler {
	base := noisy(seed, 0.01)
	return func(ctx context.Context) (float64, error) {
		ns, err := base(ctx)
		return ns * median / 1000, err
	}
}

// TestRace: against a best whose interval ends at 1000 ns, a configuration
// 50 % slower stops at the first look with its partial samples; one 3 %
// slower (inside the margin) and one without a best to race are timed in
// full, as one faster is.
func TestRace(t *testing.T) {
	full := Protocol{Target: 0.01, MaxSamples: 100000, MaxTime: time.Hour}
	cases := []struct {
		name    string
		median  float64
		race    Race
		raced   bool
		samples int // 0: any
	}{
		{"clearly slower", 1500, Race{Above: 1000}, true, 6},
		{"clearly slower, later look", 1500, Race{Above: 1000, After: 8}, true, 8},
		{"within the margin", 1030, Race{Above: 1000}, false, 0},
		{"faster", 900, Race{Above: 1000}, false, 0},
		{"no best yet", 1500, Race{}, false, 0},
		{"unbounded best", 1500, Race{Above: math.Inf(1)}, false, 0},
	}
	for i, c := range cases {
		p := full
		p.Race = c.race
		r, err := p.Run(context.Background(), scaled(c.median, uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		if raced := r.Stop == StopRaced; raced != c.raced || (c.samples > 0 && len(r.Samples) != c.samples) {
			t.Errorf("%s: stop %s after %d samples; want raced %v after %d", c.name, r.Stop, len(r.Samples), c.raced, c.samples)
		}
		if !c.raced && (r.Stop != StopTarget || len(r.Samples) < 10) {
			t.Errorf("%s: stop %s after %d samples; want the full protocol", c.name, r.Stop, len(r.Samples))
		}
		if r.Summary.N != len(r.Samples) || !(r.Summary.Median > 0) {
			t.Errorf("%s: summary %+v of %d samples", c.name, r.Summary, len(r.Samples))
		}
	}
}

func TestPlanBatchBoundsTheSets(t *testing.T) {
	p, err := PlanBatch(BatchGoal{EntryBytes: 16, CacheBytes: 32 << 20, MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if p.Sets != MaxBufferSets || !strings.Contains(p.Limited, "repeats may hit the cache") {
		t.Errorf("gemv 1×1 in launches of 8: %+v, want %d sets and a limit said", p, MaxBufferSets)
	}
}
