package tuner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"tltune/compiler/tuning"
	"tltune/tuner/measure"
	"tltune/tuner/space"
)

// raceSpace has one configuration per work-group width; the race device
// gives each its own speed.
const raceSpace = `
subgroup_size = [1]
unroll = [1]
batch_per_group = [1]
[work_group_size]
x = [1, 2, 4, 8, 16]
y = [1]
[tile]
m = [1]
n = [1]
[coopmatrix]
m = [1]
n = [1]
k = [1]
`

// raceDevice times configurations with the real protocol over samples
// whose median it controls: 1 % noise around median[wx], times slowdown
// for a configuration's second timing (the device drifting before the
// final re-timing). It keeps every timing it did.
type raceDevice struct {
	median   map[int]float64
	slowdown float64 // of second timings; 0: none

	mu      sync.Mutex
	timings map[int][]timing // by wx
}

type timing struct {
	race   measure.Race
	result measure.Result
}

// raceProtocol is the full protocol of the tests: 1 % target, no caps.
var raceProtocol = measure.Protocol{Target: 0.01, MaxSamples: 100000, MaxTime: time.Hour}

func (d *raceDevice) Measure(ctx context.Context, a Artifact, p tuning.Params) (Measurement, error) {
	wx := p.WorkGroupSize[0]
	d.mu.Lock()
	if d.timings == nil {
		d.timings = map[int][]timing{}
	}
	median := d.median[wx]
	if len(d.timings[wx]) > 0 && d.slowdown > 0 {
		median *= d.slowdown
	}
	d.mu.Unlock()
	noise := rand.New(rand.NewPCG(uint64(wx), 7))
	sample := func(context.Context) (float64, error) { return median * (1 + 0.01*noise.NormFloat64()), nil }
	prot := raceProtocol
	prot.Race = RaceOf(ctx)
	res, err := prot.Run(ctx, sample)
	d.mu.Lock()
	d.timings[wx] = append(d.timings[wx], timing{prot.Race, res})
	d.mu.Unlock()
	return Measurement{Verify: Verification{RelErr: 1e-7, Tolerance: 1e-5}, Result: res}, err
}

// sourceCompiler compiles instantly; the artifact is the source.
type sourceCompiler struct{}

func (sourceCompiler) Compile(_ context.Context, src string) (Artifact, error) { return src, nil }

func raceParams(wx int) tuning.Params {
	return tuning.Params{SubgroupSize: 1, WorkGroupSize: [2]int{wx, 1}, Tile: [2]int{1, 1}, Coopmatrix: [3]int{1, 1, 1},
		Unroll: 1, BatchPerGroup: 1}
}

// raceRun tunes the race space exhaustively on dev, wx 1 first.
func raceRun(t *testing.T, dev *raceDevice, rec *memRecorder, race bool) *Report {
	t.Helper()
	sp, err := space.Parse("race.toml", "gemm", "generic", []byte(raceSpace))
	if err != nil {
		t.Fatal(err)
	}
	tu := &Tuner{Problem: testProblem, Device: testDevice, Space: sp, Generate: generate,
		Compiler: sourceCompiler{}, Measurer: dev, Recorder: rec,
		Options: Options{Strategy: "exhaustive", Race: race, WarmStart: []tuning.Params{raceParams(1)}}}
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// outcomeOfWX finds the outcome of a configuration in a report.
func outcomeOfWX(t *testing.T, rep *Report, wx int) Outcome {
	t.Helper()
	i := slices.IndexFunc(rep.Outcomes, func(o Outcome) bool { return o.Params == raceParams(wx) })
	if i < 0 {
		t.Fatalf("wx %d: not evaluated", wx)
	}
	return rep.Outcomes[i]
}

// TestRacing: after the first configuration (1000 ns), one twice as slow
// stops early and is recorded OK with its partial samples; one 3 % slower
// (inside the margin) is timed in full, as is a faster one; the three
// fastest are re-timed at the end with the full protocol, the winner among
// them; nothing else is timed twice. Without racing every configuration is
// timed in full, once, and the same one wins.
func TestRacing(t *testing.T) {
	median := map[int]float64{1: 1000, 2: 1030, 4: 2000, 8: 990, 16: 5000}
	dev := &raceDevice{median: median}
	rec := &memRecorder{}
	rep := raceRun(t, dev, rec, true)

	for wx, raced := range map[int]bool{1: false, 2: false, 4: true, 8: false, 16: true} {
		o := outcomeOfWX(t, rep, wx)
		first := dev.timings[wx][0].result
		if o.Kind != OK {
			t.Errorf("wx %d: %s %s, want ok", wx, o.Kind, o.Message)
		}
		if got := first.Stop == measure.StopRaced; got != raced {
			t.Errorf("wx %d (%g ns): first timing stopped by %s after %d samples; want raced %v", wx, median[wx], first.Stop, len(first.Samples), raced)
		}
		if raced && (!o.Raced() || o.Retimed || len(o.Result.Samples) != 6 || len(dev.timings[wx]) != 1) {
			t.Errorf("wx %d: raced %v, retimed %v, %d samples, timed %d times; want its 6 partial samples, once",
				wx, o.Raced(), o.Retimed, len(o.Result.Samples), len(dev.timings[wx]))
		}
	}
	if first := dev.timings[1][0]; first.race != (measure.Race{}) {
		t.Errorf("the first configuration raced against %+v, with nothing timed before it", first.race)
	}
	// The top three, re-timed in full without a race; recorded so.
	for _, wx := range []int{8, 1, 2} {
		o := outcomeOfWX(t, rep, wx)
		ts := dev.timings[wx]
		if len(ts) != 2 || ts[1].race != (measure.Race{}) || ts[1].result.Stop != measure.StopTarget {
			t.Fatalf("wx %d: timed %d times, last %+v; want a second, full timing", wx, len(ts), ts[len(ts)-1])
		}
		if !o.Retimed || o.Raced() || !slices.Equal(o.Result.Samples, ts[1].result.Samples) {
			t.Errorf("wx %d: retimed %v, raced %v: want the re-timing's samples", wx, o.Retimed, o.Raced())
		}
		stored := rec.outcomes[slices.IndexFunc(rec.outcomes, func(s Outcome) bool { return s.Params == o.Params })]
		if !stored.Retimed || stored.Median() != o.Median() {
			t.Errorf("wx %d: recorder holds retimed %v median %g, report %g", wx, stored.Retimed, stored.Median(), o.Median())
		}
	}
	if b := rep.Best(); b == nil || b.Params != raceParams(8) || !b.Retimed {
		t.Errorf("best %+v, want wx 8, re-timed", b)
	}
	if rep.Raced != 2 || rep.Retimed != 3 || rep.Counts[OK] != 5 || rep.Evaluations != 5 {
		t.Errorf("raced %d, retimed %d, ok %d of %d; want 2, 3, 5 of 5", rep.Raced, rep.Retimed, rep.Counts[OK], rep.Evaluations)
	}
	if rep.Split.Phases[PhaseRetime] <= 0 {
		t.Errorf("the re-timing took no time in the split %v", rep.Split.Seconds())
	}

	plain := &raceDevice{median: median}
	rep = raceRun(t, plain, &memRecorder{}, false)
	for wx, ts := range plain.timings {
		if len(ts) != 1 || ts[0].result.Stop != measure.StopTarget || ts[0].race != (measure.Race{}) {
			t.Errorf("without racing, wx %d timed %d times, first stopped by %s", wx, len(ts), ts[0].result.Stop)
		}
	}
	if b := rep.Best(); b == nil || b.Params != raceParams(8) || rep.Raced != 0 || rep.Retimed != 0 {
		t.Errorf("without racing: best %v, %d raced, %d re-timed", b, rep.Raced, rep.Retimed)
	}
}

// TestRacedNeverWinsUnfairly: the device slows down by 60 % before the
// re-timing, so the re-timed top three come out slower than the partial
// median of the configuration raced in the search. The ranking must not
// put that partial timing first: it moves into the top and is re-timed in
// turn, and every configuration of the final top is re-timed in full.
func TestRacedNeverWinsUnfairly(t *testing.T) {
	dev := &raceDevice{median: map[int]float64{1: 1000, 2: 1010, 4: 1500, 8: 1020, 16: 5000}, slowdown: 1.6}
	rep := raceRun(t, dev, &memRecorder{}, true)
	if first := dev.timings[4][0].result; first.Stop != measure.StopRaced {
		t.Fatalf("wx 4 (1500 ns) was not raced: %s after %d samples", first.Stop, len(first.Samples))
	}
	for i, o := range rep.Top(3) {
		if !o.Retimed || o.Raced() || o.Result.Stop != measure.StopTarget {
			t.Errorf("#%d %v: retimed %v, raced %v, stop %s; want a full re-timing", i+1, o.Params, o.Retimed, o.Raced(), o.Result.Stop)
		}
	}
	if len(dev.timings[4]) != 2 || rep.Retimed != 4 {
		t.Errorf("wx 4 timed %d times, %d re-timed; want it re-timed once it ranked in the top", len(dev.timings[4]), rep.Retimed)
	}
	if b := rep.Best(); b == nil || b.Params != raceParams(1) {
		t.Errorf("best %v, want wx 1", b)
	}
	if len(dev.timings[16]) != 1 {
		t.Errorf("wx 16 (5000 ns) timed %d times: only the top is re-timed", len(dev.timings[16]))
	}
}

// TestRetimeResumed: a run resumed after its search re-times only what its
// predecessor had not, from sources the recipe makes again (a store keeps
// none).
func TestRetimeResumed(t *testing.T) {
	dev := &raceDevice{median: map[int]float64{1: 1000, 2: 1030, 4: 2000, 8: 990, 16: 5000}}
	rec := &memRecorder{}
	raceRun(t, dev, rec, true)
	// As a store gives them back: no sources; the search's timing of wx 2
	// (not re-timed yet when the first process was killed, say).
	for i := range rec.outcomes {
		rec.outcomes[i].Source = ""
		if rec.outcomes[i].Params == raceParams(2) {
			rec.outcomes[i].Retimed = false
		}
	}
	again := &raceDevice{median: dev.median}
	rep := raceRun(t, again, rec, true)
	if rep.Resumed != 5 || len(again.timings) != 1 || len(again.timings[2]) != 1 {
		t.Errorf("resumed %d; timed %v; want only wx 2 re-timed", rep.Resumed, fmt.Sprint(again.timings))
	}
	if o := outcomeOfWX(t, rep, 2); !o.Retimed || rep.Retimed != 3 {
		t.Errorf("wx 2 retimed %v, %d re-timed in all", o.Retimed, rep.Retimed)
	}
}
