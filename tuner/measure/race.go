package measure

import "math"

// Race lets sampling stop early for a configuration that is clearly slower
// than the best one timed so far (racing, as in irace or F-Race): once it
// has After samples, and at every look after that, sampling stops (Stop
// StopRaced) when the lower end of its median's confidence interval lies
// above Above × (1 + Margin). Its result is a true measurement, only with
// fewer samples; the tuner re-times the fastest configurations with the
// full protocol at the end, so the ranking at the top never rests on a
// raced one.
//
// Why this rule and this margin. Above is the upper end of the best's
// interval, so the two intervals, each holding its median with at least
// the protocol's confidence (95 %), do not overlap: by the intervals alone
// the configuration is slower with far more than 95 % confidence. The
// margin covers what the intervals do not: the looks repeat (one per sample
// from After to MinSamples, then every ~10 %), and each look is another
// chance to stop on an unlucky lower bound; the samples of a device are
// not independent (clocks, temperature and the other tenants of a GPU drift
// by a few percent between the best's measurement and this one, seconds
// later), which a distribution-free interval of one run cannot see. A
// configuration within 5 % of the best is therefore always timed in full:
// anything that could still win once the top is re-timed is, and what
// stops early is in practice 1.5× to 10× slower, which is where most of a
// search space lies and where racing saves its time.
type Race struct {
	// Above is the upper end of the confidence interval of the best
	// median so far, ns; 0 (no best yet) or +Inf: no racing.
	Above float64
	// Margin is how far above Above the lower end of the interval must
	// lie; default 0.05.
	Margin float64
	// After is the number of samples before the first look; default 6,
	// the fewest with a finite 95 % interval of the median (there its
	// lower end is the smallest sample: every sample must be slower).
	After int
}

// DefaultRaceMargin is the margin of a Race that gives none.
const DefaultRaceMargin = 0.05

// on reports whether r can stop anything.
func (r Race) on() bool { return r.Above > 0 && !math.IsInf(r.Above, 1) }

func (r Race) withDefaults() Race {
	if r.Margin <= 0 {
		r.Margin = DefaultRaceMargin
	}
	if r.After <= 0 {
		r.After = 6
	}
	return r
}

// lost reports whether a configuration with summary s is clearly slower
// than the best.
func (r Race) lost(s Summary) bool {
	return r.on() && !math.IsInf(s.Lo, 0) && s.Lo > r.Above*(1+r.Margin)
}
