package compare

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"tltune/internal/speak"
)

// lognormal draws n kernel times around median with coefficient of
// variation cv: timings are positive and right-skewed, as measured ones are.
func lognormal(rng *rand.Rand, n int, median, cv float64) []float64 {
	sigma := math.Sqrt(math.Log1p(cv * cv))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = median * math.Exp(sigma*rng.NormFloat64())
	}
	return xs
}

// trial compares two synthetic runs of n samples whose true medians differ
// by the factor ratio.
func trial(t *testing.T, seed uint64, n int, cv, ratio float64, opt Options) Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x746c74756e65))
	pair := Pair{
		Problem:  speak.Problem{Alpha: "1", Beta: "0", Op: "gemm", Trans: "nn", Dtype: "f32", M: 64, N: 64, K: 64},
		Baseline: Side{Samples: lognormal(rng, n, 20000, cv)},
		Current:  Side{Samples: lognormal(rng, n, 20000*ratio, cv)},
	}
	rep, err := Compare([]Pair{pair}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Results[0]
}

// rates runs trials seeded 1..trials and returns the share of Slower
// verdicts and the share of U tests rejecting at alpha.
func rates(t *testing.T, trials, n int, cv, ratio float64) (slower, rejected float64) {
	t.Helper()
	var ns, nr int
	for seed := range uint64(trials) {
		r := trial(t, seed+1, n, cv, ratio, DefaultOptions)
		if r.Verdict == Slower {
			ns++
		}
		if r.P < DefaultOptions.Alpha {
			nr++
		}
	}
	return float64(ns) / float64(trials), float64(nr) / float64(trials)
}

// TestFalsePositiveRate compares identical distributions over many seeded
// trials. The U test alone must reject at about Alpha (it is calibrated);
// the verdict Slower, which also needs a one-sided interval above 1 and a
// change beyond the noise floor, must fire at most Alpha/2 of the time.
// Bounds allow three binomial standard errors of Monte Carlo noise.
func TestFalsePositiveRate(t *testing.T) {
	const trials = 1000
	alpha := DefaultOptions.Alpha
	se := 3 * math.Sqrt(alpha*(1-alpha)/trials)
	for _, cv := range []float64{0.01, 0.02} {
		slower, rejected := rates(t, trials, 30, cv, 1)
		t.Logf("identical runs, cv %.0f%%, 30 samples, %d trials: false regressions %.3f, U-test rejections %.3f",
			100*cv, trials, slower, rejected)
		if slower > alpha/2+se {
			t.Errorf("cv %g: false regression rate %.3f above %.3f", cv, slower, alpha/2+se)
		}
		if math.Abs(rejected-alpha) > se {
			t.Errorf("cv %g: U test rejects %.3f of identical runs, want %.3f ± %.3f", cv, rejected, alpha, se)
		}
	}
}

// TestPower measures how often a real slowdown is confirmed. A slowdown of
// the threshold's size (5 %) at realistic noise must be caught nearly
// always; 1–2 % slowdowns, below threshold and noise floor, almost never.
func TestPower(t *testing.T) {
	const trials = 1000
	tests := []struct {
		ratio, cv float64
		min, max  float64 // bounds on the share of Slower verdicts
	}{
		{ratio: 1.05, cv: 0.01, min: 0.95, max: 1},
		{ratio: 1.05, cv: 0.02, min: 0.95, max: 1},
		{ratio: 1.02, cv: 0.01, min: 0, max: 0.01},
		{ratio: 1.01, cv: 0.02, min: 0, max: 0.01},
	}
	for _, tt := range tests {
		slower, _ := rates(t, trials, 30, tt.cv, tt.ratio)
		t.Logf("slowdown %.0f%%, cv %.0f%%, 30 samples, %d trials: confirmed %.3f",
			100*(tt.ratio-1), 100*tt.cv, trials, slower)
		if slower < tt.min || slower > tt.max {
			t.Errorf("slowdown %g at cv %g: confirmed %.3f, want in [%g, %g]", tt.ratio, tt.cv, slower, tt.min, tt.max)
		}
	}
}

func TestVerdicts(t *testing.T) {
	tests := []struct {
		name         string
		n            int
		cv, ratio    float64
		want         Verdict
		wantWarnings bool
	}{
		{name: "5% slower", n: 30, cv: 0.02, ratio: 1.05, want: Slower},
		{name: "5% faster", n: 30, cv: 0.02, ratio: 1 / 1.05, want: Faster},
		{name: "identical", n: 30, cv: 0.02, ratio: 1, want: Same},
		// Significant but immaterial: the interval excludes 1 and stays
		// inside the threshold band.
		{name: "1% slower, tight", n: 200, cv: 0.005, ratio: 1.01, want: Same},
		// A real shift the interval cannot separate from 5 % but the
		// repeat spread (IQR/median ≈ 13 %) dwarfs: never Slower.
		{name: "below noise floor", n: 2000, cv: 0.10, ratio: 1.08, want: Noisy},
		{name: "too few samples", n: 4, cv: 0.02, ratio: 1.2, want: Noisy, wantWarnings: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trial(t, 7, tt.n, tt.cv, tt.ratio, DefaultOptions)
			if r.Verdict != tt.want {
				t.Errorf("verdict %v, want %v (ratio %.4f [%.4f, %.4f], p %.3g, noise %.4f)",
					r.Verdict, tt.want, r.Ratio, r.RatioLo, r.RatioHi, r.P, r.NoiseFloor)
			}
			if got := len(r.Warnings) > 0; got != tt.wantWarnings {
				t.Errorf("warnings %q, want some: %v", r.Warnings, tt.wantWarnings)
			}
		})
	}
}

// TestNoiseFloorBlocksSlower checks rule 3 on its own: the same data that
// are Slower at their own noise are not once the spread is larger than the
// shift.
func TestNoiseFloorBlocksSlower(t *testing.T) {
	r := trial(t, 7, 2000, 0.10, 1.08, DefaultOptions)
	if !(r.P < DefaultOptions.Alpha && r.RatioLo > 1 && r.RatioHi >= 1.05) {
		t.Fatalf("setup: want rules 1, 2 and 4 met, got ratio %.4f [%.4f, %.4f] p %.3g", r.Ratio, r.RatioLo, r.RatioHi, r.P)
	}
	if r.Ratio-1 >= r.NoiseFloor {
		t.Fatalf("setup: shift %.4f not below noise floor %.4f", r.Ratio-1, r.NoiseFloor)
	}
	if r.Verdict == Slower {
		t.Errorf("a shift below the noise floor was called slower")
	}
}

func TestRatioIntervalCoversRatio(t *testing.T) {
	r := trial(t, 3, 30, 0.02, 1.05, DefaultOptions)
	if !(r.RatioLo < r.Ratio && r.Ratio < r.RatioHi) {
		t.Errorf("ratio %.4f outside its interval [%.4f, %.4f]", r.Ratio, r.RatioLo, r.RatioHi)
	}
	if want := r.Current.Median / r.Baseline.Median; r.Ratio != want {
		t.Errorf("ratio %v, want current/baseline median %v", r.Ratio, want)
	}
}

func TestRegressed(t *testing.T) {
	rep := &Report{Results: []Result{{Verdict: Same}, {Verdict: Noisy}, {Verdict: Faster}}}
	if rep.Regressed() {
		t.Errorf("Regressed() true without a Slower verdict")
	}
	rep.Results = append(rep.Results, Result{Verdict: Slower})
	if !rep.Regressed() {
		t.Errorf("Regressed() false with a Slower verdict")
	}
}

func TestCompareLeavesSamplesAlone(t *testing.T) {
	old := []float64{3, 1, 2, 5, 4, 9, 8, 7, 6, 10}
	cur := []float64{13, 11, 12, 15, 14, 19, 18, 17, 16, 20}
	want := slices.Clone(old)
	if _, err := Compare([]Pair{{Baseline: Side{Samples: old}, Current: Side{Samples: cur}}}, DefaultOptions); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(old, want) {
		t.Errorf("Compare reordered the caller's samples: %v", old)
	}
}

func TestCompareErrors(t *testing.T) {
	good := []float64{1, 2, 3}
	key := speak.Problem{Alpha: "1", Beta: "0", Op: "ger", Dtype: "f32", M: 32, N: 32}
	tests := []struct {
		name string
		pair Pair
		opt  Options
		want string
	}{
		{"empty baseline", Pair{Problem: key, Current: Side{Samples: good}}, DefaultOptions,
			"ger f32 32x32: baseline: no samples"},
		{"negative time", Pair{Problem: key, Baseline: Side{Samples: good}, Current: Side{Samples: []float64{1, -2}}}, DefaultOptions,
			"ger f32 32x32: current run: sample -2 ns is not a positive time"},
		{"NaN time", Pair{Problem: key, Baseline: Side{Samples: []float64{math.NaN()}}, Current: Side{Samples: good}}, DefaultOptions,
			"ger f32 32x32: baseline: sample NaN ns is not a positive time"},
		{"threshold as percent", Pair{}, Options{Threshold: 5, Alpha: 0.05},
			"threshold 5 out of range: give a fraction between 0 and 1, e.g. 0.05 for 5%"},
		{"alpha zero", Pair{}, Options{Threshold: 0.05},
			"alpha 0 out of range: give a significance level between 0 and 0.5, e.g. 0.05"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare([]Pair{tt.pair}, tt.opt)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	_, err := Compare([]Pair{{Problem: key, Current: Side{Samples: good}}}, DefaultOptions)
	if !errors.Is(err, errNoSamples) {
		t.Errorf("error %v does not wrap errNoSamples", err)
	}
}

func TestEnvDiff(t *testing.T) {
	old := Env{Device: "NVIDIA H200", Driver: "580.95.05", Runtime: "opencl", Compiler: "v0.1.0", Version: "v0.1.0"}
	cur := old
	if d := old.Diff(cur); d != nil {
		t.Errorf("equal environments differ: %v", d)
	}
	cur.Driver, cur.Compiler = "580.159.04", "v0.2.0"
	want := []EnvChange{{"driver", "580.95.05", "580.159.04"}, {"compiler", "v0.1.0", "v0.2.0"}}
	if d := old.Diff(cur); !slices.Equal(d, want) {
		t.Errorf("Diff = %v, want %v", d, want)
	}
}

func TestVerdictString(t *testing.T) {
	if s := Slower.String(); !strings.EqualFold(s, "slower") {
		t.Errorf("Slower.String() = %q", s)
	}
}

func TestParseThreshold(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		err  string
	}{
		{in: "5%", want: 0.05},
		{in: " 2.5% ", want: 0.025},
		{in: "0.05", want: 0.05},
		{in: "five", err: `threshold "five" is not a number: give a percent like 5% or a fraction like 0.05`},
		{in: "5", err: "threshold 5 out of range: give a fraction between 0 and 1, e.g. 0.05 for 5%"},
		{in: "0%", err: "threshold 0 out of range: give a fraction between 0 and 1, e.g. 0.05 for 5%"},
	} {
		got, err := ParseThreshold(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseThreshold(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("ParseThreshold(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseFraction(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0.2": 0.2, " 90% ": 0.9} {
		if got, err := ParseFraction(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseFraction(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"150%", "0", "1", "-5%", "five"} {
		if _, err := ParseFraction(in); err == nil {
			t.Errorf("ParseFraction(%q) accepted", in)
		}
	}
}
