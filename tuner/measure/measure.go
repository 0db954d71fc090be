// Package measure owns the statistics of the measurement protocol
// (DESIGN.md §5): warm-up, adaptive repetition until the median's
// distribution-free confidence interval is tight enough (or, racing, until
// it lies clearly above the best configuration's), the summary of the
// raw samples, and the sizing of a launch's batch against the device cache.
//
// It knows nothing of devices: a sample is whatever the caller's function
// returns, in nanoseconds, taken from device timers.
package measure

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/perf/benchmath"

	"tltune/internal/stats"
)

// Protocol says how long to sample one configuration.
type Protocol struct {
	Warmup     int           // samples taken and discarded first; default 3
	MinSamples int           // never stop before this many; default 10
	MaxSamples int           // stop at this many; default 1000
	MaxTime    time.Duration // stop when sampling took this long; default 2s
	// Target is the relative half-width of the median's confidence
	// interval at which sampling stops; default 0.01 (1 %).
	Target     float64
	Confidence float64 // confidence level of the interval; default 0.95
	// Race stops sampling a configuration clearly slower than the best
	// so far; the zero Race never does.
	Race Race
}

func (p Protocol) withDefaults() Protocol {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.Warmup, 3)
	def(&p.MinSamples, 10)
	def(&p.MaxSamples, 1000)
	if p.MaxTime <= 0 {
		p.MaxTime = 2 * time.Second
	}
	if p.Target <= 0 {
		p.Target = 0.01
	}
	if p.Confidence <= 0 || p.Confidence >= 1 {
		p.Confidence = 0.95
	}
	// A median CI at 95 % needs at least 6 samples; fewer can never stop
	// on the target.
	p.MinSamples = max(p.MinSamples, 6)
	p.MaxSamples = max(p.MaxSamples, p.MinSamples)
	p.Race = p.Race.withDefaults()
	return p
}

// Stop says why sampling ended.
type Stop string

// The reasons sampling ends.
const (
	StopTarget Stop = "target" // the interval reached the target width
	StopCount  Stop = "count"  // MaxSamples taken
	StopTime   Stop = "time"   // MaxTime spent
	StopRaced  Stop = "raced"  // clearly slower than the best so far (Race): the samples are partial
)

// Result is one configuration's measurement.
type Result struct {
	Samples []float64 // every kept sample, ns, in the order taken
	Warmup  []float64 // the discarded warm-up samples, ns
	Summary Summary
	Stop    Stop
}

// Summary describes a sample.
type Summary struct {
	N                 int
	Median, Min, Max  float64 // ns
	Q1, Q3, IQR       float64 // quartiles and their distance, ns
	Lo, Hi            float64 // confidence interval of the median, ns (±Inf with too few samples)
	Confidence        float64 // actual confidence level of [Lo, Hi]
	RelativeHalfWidth float64 // max(Median-Lo, Hi-Median) / Median
}

// Sampler takes one timed sample and returns its duration in ns.
type Sampler func(ctx context.Context) (float64, error)

// Run warms up, then samples until the median's confidence interval is
// within p.Target of the median, a cap is hit or the configuration loses
// its race. A sampler error stops the run and is returned with the samples
// so far; so is ctx's error.
func (p Protocol) Run(ctx context.Context, sample Sampler) (Result, error) {
	p = p.withDefaults()
	var r Result
	take := func(into *[]float64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ns, err := sample(ctx)
		if err != nil {
			return err
		}
		if math.IsNaN(ns) || ns < 0 {
			return fmt.Errorf("sampler returned %v ns", ns)
		}
		*into = append(*into, ns)
		return nil
	}
	start := time.Now()
	for range p.Warmup {
		if err := take(&r.Warmup); err != nil {
			return r, err
		}
	}
	next := p.MinSamples // when to look at the interval next
	if p.Race.on() {
		next = min(next, p.Race.After)
	}
	for {
		if err := take(&r.Samples); err != nil {
			r.Summary = Summarize(r.Samples, p.Confidence)
			return r, err
		}
		n := len(r.Samples)
		switch {
		case n >= p.MaxSamples:
			r.Stop = StopCount
		case time.Since(start) >= p.MaxTime:
			r.Stop = StopTime
		case n >= next:
			// Looking costs a sort; look at geometrically spaced counts
			// (every ~10 %) so a long run costs O(n log n) in total.
			r.Summary = Summarize(r.Samples, p.Confidence)
			switch {
			case p.Race.lost(r.Summary):
				r.Stop = StopRaced
				return r, nil
			case n >= p.MinSamples && r.Summary.RelativeHalfWidth <= p.Target:
				r.Stop = StopTarget
				return r, nil
			}
			next = n + max(1, n/10)
		}
		if r.Stop != "" {
			r.Summary = Summarize(r.Samples, p.Confidence)
			return r, nil
		}
	}
}

// Summarize computes the summary of samples (ns) without reordering them.
func Summarize(samples []float64, confidence float64) Summary {
	if len(samples) == 0 {
		return Summary{RelativeHalfWidth: math.Inf(1)}
	}
	sorted := slices.Clone(samples) // benchmath sorts in place
	s := benchmath.NewSample(sorted, &benchmath.DefaultThresholds)
	ci := benchmath.AssumeNothing.Summary(s, confidence)
	sum := Summary{
		N:          len(sorted),
		Median:     ci.Center,
		Min:        sorted[0],
		Max:        sorted[len(sorted)-1],
		Q1:         stats.Quantile(sorted, 0.25),
		Q3:         stats.Quantile(sorted, 0.75),
		Lo:         ci.Lo,
		Hi:         ci.Hi,
		Confidence: ci.Confidence,
	}
	sum.IQR = sum.Q3 - sum.Q1
	sum.RelativeHalfWidth = math.Inf(1)
	if sum.Median > 0 {
		sum.RelativeHalfWidth = math.Max(sum.Median-sum.Lo, sum.Hi-sum.Median) / sum.Median
	}
	return sum
}
