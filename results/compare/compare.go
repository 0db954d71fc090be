// Package compare decides, shape by shape, whether a run got slower or
// faster than a baseline run, and renders that decision as a plain table,
// Markdown or JUnit XML.
//
// It owns the statistics of `tltune regress` and nothing else: the caller
// (the command line, over the results store) pairs the raw samples of the two
// runs by problem (speak.Problem) and hands them in; Compare returns one Result per pair and
// Report.Regressed is the exit-status rule.
//
// Everything is distribution-free. Each side is summarised by its median
// with a confidence interval from order statistics, and the two sides are
// tested with the Mann–Whitney U test, both from golang.org/x/perf/benchmath
// (the statistics of benchstat). Timings are skewed and heavy-tailed, so
// nothing here assumes normality.
package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"tltune/internal/speak"
	"tltune/internal/stats"
)

// A Side is one run's measurement of a shape.
type Side struct {
	Samples []float64 // raw kernel times in nanoseconds, one per repeat
	Env     Env       // where they were measured
}

// A Pair is a shape measured in both the baseline and the current run.
type Pair struct {
	Problem  speak.Problem
	Baseline Side
	Current  Side
}

// Options are the decision parameters of Compare.
type Options struct {
	// Threshold is the smallest relative change that matters: 0.05 means
	// a slowdown or speed-up of 5 % of the baseline median.
	Threshold float64
	// Alpha is the significance level of the U test; the ratio's
	// confidence interval is computed at confidence 1-Alpha.
	Alpha float64
}

// DefaultOptions are the defaults of `tltune regress`.
var DefaultOptions = Options{Threshold: 0.05, Alpha: 0.05}

func (o Options) validate() error {
	if !(o.Threshold > 0 && o.Threshold < 1) {
		return fmt.Errorf("threshold %g out of range: give a fraction between 0 and 1, e.g. 0.05 for 5%%", o.Threshold)
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return fmt.Errorf("alpha %g out of range: give a significance level between 0 and 0.5, e.g. 0.05", o.Alpha)
	}
	return nil
}

// A Verdict is the outcome of comparing one shape.
type Verdict int

const (
	// Same: the ratio's confidence interval lies inside
	// [1-Threshold, 1+Threshold], so no change that matters happened.
	Same Verdict = iota
	// Faster: a confirmed speed-up (the mirror image of Slower).
	Faster
	// Slower: a confirmed regression; see Compare for the exact rule.
	Slower
	// Noisy: neither a confirmed change nor ruled out; the repeats are too
	// few or too spread to decide.
	Noisy
)

var verdictNames = [...]string{Same: "same", Faster: "faster", Slower: "slower", Noisy: "noisy"}

func (v Verdict) String() string { return verdictNames[v] }

// A Summary is the median of one side with its confidence interval, in ns.
type Summary struct {
	Median, Lo, Hi float64
	N              int // number of samples
}

// A Result is the comparison of one shape.
type Result struct {
	Problem           speak.Problem
	Baseline, Current Summary
	// Ratio is the current median over the baseline median: above 1 means
	// slower. [RatioLo, RatioHi] is its confidence interval at confidence
	// at least 1-Alpha; RatioHi is +Inf when the samples are too few.
	Ratio, RatioLo, RatioHi float64
	// P is the p-value of the Mann–Whitney U test of "both runs come from
	// the same distribution".
	P float64
	// NoiseFloor is the larger relative spread (IQR/median) of the two
	// sides: a change smaller than this is never called slower or faster.
	NoiseFloor float64
	Verdict    Verdict
	EnvChanges []EnvChange // environment fields that differ, in Env field order
	Warnings   []string    // from benchmath, e.g. too few samples for an interval
}

// A Report is the comparison of two runs.
type Report struct {
	Options Options
	Results []Result // in the order of the pairs given to Compare
	// The problems that could not be compared, which the caller fills in
	// and every renderer lists: New are only in the current run, Gone only
	// in the baseline (a shape dropped, or whose configuration no longer
	// runs), Unsampled in both but without raw samples on a side.
	New, Gone, Unsampled []Unmatched
}

// An Unmatched is a problem measured on one side only (or without samples):
// its median where one is known.
type Unmatched struct {
	Problem  speak.Problem
	MedianNS float64
}

// Regressed is the exit-status rule of `tltune regress`: true when at least
// one shape is a confirmed regression (verdict Slower). Noisy shapes do not
// fail the run; they are reported so a person can re-measure them.
func (r *Report) Regressed() bool {
	return slices.ContainsFunc(r.Results, func(res Result) bool { return res.Verdict == Slower })
}

// Compare compares every pair under opt and returns the report.
//
// Let r be the ratio of medians (current/baseline), [lo, hi] its confidence
// interval, p the U-test p-value, f the noise floor and t the threshold.
// A regression is CONFIRMED (verdict Slower) when all of
//
//  1. p < Alpha: the U test rejects "same distribution";
//  2. lo > 1: the whole interval says slower, so the direction is known
//     (the U test alone also rejects on a change of spread);
//  3. r-1 > f: the slowdown exceeds the runs' own repeat spread. Within-run
//     intervals shrink with more samples but say nothing about drift
//     between runs (clocks, thermals, a neighbour on the machine); the
//     spread of single repeats is a conservative stand-in for that drift;
//  4. hi >= 1+t: a slowdown of the threshold's size is not ruled out.
//
// Faster mirrors the rule. Same is an interval inside [1-t, 1+t]: any
// change is too small to matter (this includes small, significant ones).
// Everything else is Noisy.
//
// Why rule 4 and not "lo > 1+t" or "r > 1+t": a gate should catch a
// regression of exactly the threshold's size. With "lo > 1+t" a true
// slowdown of t is almost never confirmed (the interval must clear t
// entirely), and with "r > 1+t" it is confirmed half of the time whatever
// the sample size, since r scatters around the true ratio. Rule 4 flags it
// as soon as rules 1–3 prove a real slowdown the data cannot distinguish
// from t. On identical distributions rule 2 alone fires with probability at
// most 1-sqrt(1-Alpha) (one side of two independent median intervals, about
// Alpha/2), and rules 1 and 3 only lower that: the false-alarm rate is
// bounded by about Alpha/2 (measured: 0 in 2000 seeded trials).
func Compare(pairs []Pair, opt Options) (*Report, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	rep := &Report{Options: opt, Results: make([]Result, 0, len(pairs))}
	for _, p := range pairs {
		res, err := comparePair(p, opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Problem, err)
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

var errNoSamples = errors.New("no samples")

func comparePair(p Pair, opt Options) (Result, error) {
	old, err := newSample(p.Baseline.Samples, opt, "baseline")
	if err != nil {
		return Result{}, err
	}
	cur, err := newSample(p.Current.Samples, opt, "current run")
	if err != nil {
		return Result{}, err
	}
	// Each median interval at confidence sqrt(1-Alpha): the samples are
	// independent, so both cover their medians with probability at least
	// 1-Alpha, and then the ratio interval below covers the true ratio.
	conf := math.Sqrt(1 - opt.Alpha)
	so := benchmath.AssumeNothing.Summary(old, conf)
	sc := benchmath.AssumeNothing.Summary(cur, conf)
	cmp := benchmath.AssumeNothing.Compare(old, cur)

	res := Result{
		Problem:    p.Problem,
		Baseline:   Summary{so.Center, so.Lo, so.Hi, len(old.Values)},
		Current:    Summary{sc.Center, sc.Lo, sc.Hi, len(cur.Values)},
		Ratio:      sc.Center / so.Center,
		P:          cmp.P,
		NoiseFloor: max(relativeIQR(old.Values), relativeIQR(cur.Values)),
		EnvChanges: p.Baseline.Env.Diff(p.Current.Env),
		Warnings:   warnings(so.Warnings, sc.Warnings, cmp.Warnings),
	}
	res.RatioLo, res.RatioHi = ratioInterval(so, sc)
	res.Verdict = decide(res, opt)
	return res, nil
}

// newSample checks one side's samples and wraps a sorted copy (benchmath
// sorts in place; the caller's slice is left alone).
func newSample(ns []float64, opt Options, side string) (*benchmath.Sample, error) {
	if len(ns) == 0 {
		return nil, fmt.Errorf("%s: %w", side, errNoSamples)
	}
	for _, v := range ns {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: sample %g ns is not a positive time", side, v)
		}
	}
	th := benchmath.Thresholds{CompareAlpha: opt.Alpha}
	return benchmath.NewSample(slices.Clone(ns), &th), nil
}

// ratioInterval bounds new/old by the extreme ratios of the two median
// intervals. Times are positive, so lo/hi and hi/lo are the extremes; an
// infinite bound (too few samples) makes the interval [0, +Inf).
func ratioInterval(old, cur benchmath.Summary) (lo, hi float64) {
	if anyInf(old.Lo, old.Hi, cur.Lo, cur.Hi) || old.Lo <= 0 {
		return 0, math.Inf(1)
	}
	return cur.Lo / old.Hi, cur.Hi / old.Lo
}

func anyInf(xs ...float64) bool {
	return slices.ContainsFunc(xs, func(x float64) bool { return math.IsInf(x, 0) })
}

// decide applies the rule documented on Compare.
func decide(r Result, opt Options) Verdict {
	t := opt.Threshold
	significant := r.P < opt.Alpha
	switch {
	case significant && r.RatioLo > 1 && r.Ratio-1 > r.NoiseFloor && r.RatioHi >= 1+t:
		return Slower
	case significant && r.RatioHi < 1 && 1-r.Ratio > r.NoiseFloor && r.RatioLo <= 1-t:
		return Faster
	case r.RatioLo >= 1-t && r.RatioHi <= 1+t:
		return Same
	}
	return Noisy
}

// relativeIQR is the interquartile range over the median of sorted xs.
func relativeIQR(sorted []float64) float64 {
	return (stats.Quantile(sorted, 0.75) - stats.Quantile(sorted, 0.25)) / stats.Quantile(sorted, 0.5)
}

func warnings(lists ...[]error) []string {
	var out []string
	for _, l := range lists {
		for _, e := range l {
			if msg := e.Error(); !slices.Contains(out, msg) {
				out = append(out, msg)
			}
		}
	}
	return out
}

// ParseThreshold reads a threshold as the command line gives it: a percent
// ("5%") or a fraction ("0.05").
func ParseThreshold(s string) (float64, error) {
	v, ok := percentOrFraction(s)
	if !ok {
		return 0, fmt.Errorf("threshold %q is not a number: give a percent like 5%% or a fraction like 0.05", s)
	}
	if err := (Options{Threshold: v, Alpha: DefaultOptions.Alpha}).validate(); err != nil {
		return 0, err
	}
	return v, nil
}

// ParseFraction reads a fraction of (0, 1) given as a percent ("5%") or as
// a fraction ("0.05"), as tolerances on the command line are.
func ParseFraction(s string) (float64, error) {
	v, ok := percentOrFraction(s)
	if !ok || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("%q is not a fraction between 0 and 1: give a percent like 5%% or a fraction like 0.05", s)
	}
	return v, nil
}

// percentOrFraction reads "5%" or "0.05" as 0.05.
func percentOrFraction(s string) (float64, bool) {
	num, percent := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	if percent {
		v /= 100
	}
	return v, true
}
