package tuner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tltune/compiler/tuning"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/search"
	"tltune/tuner/space"
)

func TestEveryOutcome(t *testing.T) {
	rec := &memRecorder{}
	meas := &fakeMeasurer{}
	tu, comp := newTuner(t, rec, meas, Options{Strategy: "exhaustive", CompileWorkers: 3})
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[Kind]int{OK: 8, Pruned: 128, CompileError: 8, ResourceError: 8, LaunchError: 8, DeviceLost: 8, WrongResult: 16, Timeout: 8}
	for _, k := range Kinds {
		if rep.Counts[k] != want[k] {
			t.Errorf("%s: %d, want %d", k, rep.Counts[k], want[k])
		}
	}
	if rep.Evaluations != 64 || rep.Candidates != 96 || rep.Stop != StopExhausted {
		t.Errorf("evaluations %d, candidates %d, stop %s", rep.Evaluations, rep.Candidates, rep.Stop)
	}
	if rep.PrunedByRule["work-group"] != 96 || rep.PrunedByRule["recipe"] != 32 {
		t.Errorf("pruned by rule %v", rep.PrunedByRule)
	}
	// Compilation: one per distinct source, the rest cache hits.
	if n := comp.compilations(); n != 32 || rep.CacheHits != 32 {
		t.Errorf("%d compilations, %d cache hits; want 32 and 32", n, rep.CacheHits)
	}
	for src, n := range comp.count {
		if n != 1 {
			t.Errorf("%q compiled %d times", src, n)
		}
	}
	// Every outcome recorded once, with a message when it failed; the
	// configurations the rules pruned counted per rule, the recipe's
	// refusals (proposed by the search) recorded one by one.
	if len(rec.outcomes) != 64+32 {
		t.Errorf("%d outcomes recorded, want 96", len(rec.outcomes))
	}
	if len(rec.pruned) != 1 || rec.pruned[0].Rule != "work-group" || rec.pruned[0].Count != 96 ||
		!strings.HasPrefix(rec.pruned[0].Example, "work-group: ") {
		t.Errorf("pruned counts %+v, want 96 by work-group with an example", rec.pruned)
	}
	seen := map[tuning.Params]bool{}
	for _, o := range rec.outcomes {
		if seen[o.Params] {
			t.Errorf("%v recorded twice", o.Params)
		}
		seen[o.Params] = true
		if (o.Kind == OK) == (o.Message != "") {
			t.Errorf("%v: kind %s with message %q", o.Params, o.Kind, o.Message)
		}
		if o.Kind != Pruned && (o.Seq == 0 || o.SourceHash == "" || o.Source == "") {
			t.Errorf("%v: evaluation without seq, source or hash", o.Params)
		}
	}
	for _, o := range rep.Outcomes {
		msg := map[Kind]string{CompileError: "error", ResourceError: "registers", LaunchError: "WORK_GROUP",
			DeviceLost: "reset", WrongResult: "exceeds tolerance", Timeout: "deadline"}[o.Kind]
		if !strings.Contains(o.Message, msg) {
			t.Errorf("%s outcome %v: message %q lacks %q", o.Kind, o.Params, o.Message, msg)
		}
	}
	// The best is the fastest OK; the fast wrong results never appear.
	best := rep.Best()
	if best == nil || best.Params.WorkGroupSize[0] != 1 || best.Params.Tile[0] != 1 || best.Params.BatchPerGroup != 1 {
		t.Fatalf("best %v", best)
	}
	for _, o := range rep.Top(100) {
		if o.Kind != OK {
			t.Errorf("top holds a %s outcome", o.Kind)
		}
	}
	if len(rep.Top(100)) != 8 {
		t.Errorf("top has %d outcomes, want the 8 OK", len(rep.Top(100)))
	}
}

func TestBudget(t *testing.T) {
	for _, name := range search.Names {
		rec := &memRecorder{}
		tu, _ := newTuner(t, rec, &fakeMeasurer{}, Options{Strategy: name, Budget: 10, Seed: 1})
		rep, err := tu.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Evaluations != 10 || rep.Stop != StopBudget || rec.evaluated() != 10 {
			t.Errorf("%s: %d evaluations (%d recorded), stop %s", name, rep.Evaluations, rec.evaluated(), rep.Stop)
		}
	}
}

func TestTimeLimit(t *testing.T) {
	for _, name := range search.Names {
		tu, _ := newTuner(t, &memRecorder{}, &fakeMeasurer{delay: 5 * time.Millisecond},
			Options{Strategy: name, Time: 300 * time.Millisecond, ConfigTimeout: time.Second, Seed: 1})
		// Only successful configurations: 200 evaluations of 5 ms.
		if err := tu.Space.Override("wx", "1"); err != nil {
			t.Fatal(err)
		}
		if err := tu.Space.Override("tm", "1..50"); err != nil {
			t.Fatal(err)
		}
		rep, err := tu.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Stop != StopTime || rep.Evaluations == 0 || rep.Evaluations >= rep.Candidates-4 {
			t.Errorf("%s: stop %s after %d of %d", name, rep.Stop, rep.Evaluations, rep.Candidates)
		}
	}
}

// TestCancelAndResume interrupts a run after 10 recorded evaluations and
// resumes it: nothing recorded is lost or measured again, and together the
// two runs record each configuration exactly once.
func TestCancelAndResume(t *testing.T) {
	for _, name := range search.Names {
		rec := &memRecorder{}
		meas := &fakeMeasurer{}
		ctx, cancel := context.WithCancel(context.Background())
		rec.onRecord = func(n int) {
			if n == 10 {
				cancel()
			}
		}
		tu, _ := newTuner(t, rec, meas, Options{Strategy: name, Seed: 2, CompileWorkers: 2})
		rep, err := tu.Run(ctx)
		if !errors.Is(err, context.Canceled) || rep.Stop != StopCancelled {
			t.Fatalf("%s: interrupted run: err %v, stop %s", name, err, rep.Stop)
		}
		first := map[tuning.Params]bool{}
		for _, o := range rec.outcomes {
			if o.Kind != Pruned {
				first[o.Params] = true
			}
		}
		if len(first) < 10 {
			t.Fatalf("%s: %d evaluations recorded before the interruption", name, len(first))
		}
		callsBefore := len(meas.calls)

		rec.onRecord = nil
		if name == "random" {
			// A store need not keep evaluation numbers.
			for i := range rec.outcomes {
				rec.outcomes[i].Seq = 0
			}
		}
		tu2, _ := newTuner(t, rec, meas, Options{Strategy: name, Seed: 2, CompileWorkers: 2})
		rep2, err := tu2.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep2.Resumed != len(first) || rep2.Evaluations != 64 || rep2.Stop != StopExhausted {
			t.Errorf("%s: resumed %d of %d, %d evaluations, stop %s", name, rep2.Resumed, len(first), rep2.Evaluations, rep2.Stop)
		}
		seen := map[tuning.Params]int{}
		for _, o := range rec.outcomes {
			seen[o.Params]++
		}
		for p, n := range seen {
			if n != 1 {
				t.Errorf("%s: %v recorded %d times", name, p, n)
			}
		}
		if len(seen) != 96 || len(rec.pruned) != 1 || rec.pruned[0].Count != 96 {
			t.Errorf("%s: %d configurations recorded and pruned counts %+v, want 96 and 96 by one rule", name, len(seen), rec.pruned)
		}
		for p := range first {
			if meas.calls[p] > 1 {
				t.Errorf("%s: %v measured again after it was recorded", name, p)
			}
		}
		if len(meas.calls) < callsBefore {
			t.Errorf("%s: measurer log shrank", name)
		}
		seqs := map[int]bool{}
		for i, o := range rep2.Outcomes {
			if o.Seq == 0 && i < rep2.Resumed {
				continue // a resumed evaluation whose number the store dropped
			}
			if seqs[o.Seq] || (i >= rep2.Resumed && o.Seq <= rep2.Resumed) {
				t.Errorf("%s: evaluation number %d used twice or inside the resumed ones", name, o.Seq)
			}
			seqs[o.Seq] = true
		}
	}
}

func TestWarmStartFirst(t *testing.T) {
	outside := tuning.Params{SubgroupSize: 1, WorkGroupSize: [2]int{1, 1}, Tile: [2]int{1, 1}, Coopmatrix: [3]int{1, 1, 1}, Unroll: 3, BatchPerGroup: 1}
	warm := []tuning.Params{
		outside, // runs, but the space has no unroll 3: skipped
		{SubgroupSize: 1, WorkGroupSize: [2]int{1, 1}, Tile: [2]int{2, 1}, Coopmatrix: [3]int{1, 1, 1}, Unroll: 2, BatchPerGroup: 2},
		{SubgroupSize: 1, WorkGroupSize: [2]int{1, 8192}, Tile: [2]int{1, 1}, Coopmatrix: [3]int{1, 1, 1}, Unroll: 1, BatchPerGroup: 1}, // pruned: skipped
		{SubgroupSize: 1, WorkGroupSize: [2]int{4, 1}, Tile: [2]int{1, 1}, Coopmatrix: [3]int{1, 1, 1}, Unroll: 1, BatchPerGroup: 1},
	}
	for _, name := range search.Names {
		tu, _ := newTuner(t, &memRecorder{}, &fakeMeasurer{}, Options{Strategy: name, Budget: 5, WarmStart: warm, Seed: 1})
		rep, err := tu.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcomes[0].Params != warm[1] || rep.Outcomes[1].Params != warm[3] {
			t.Errorf("%s: started with %v, %v", name, rep.Outcomes[0].Params, rep.Outcomes[1].Params)
		}
		for _, o := range rep.Outcomes {
			if o.Params == outside {
				t.Errorf("%s: evaluated the warm start %v, which is outside the space", name, outside)
			}
		}
	}
}

func TestReproducible(t *testing.T) {
	order := func() []tuning.Params {
		tu, _ := newTuner(t, &memRecorder{}, &fakeMeasurer{}, Options{Strategy: "gp", Seed: 9, Budget: 30, CompileWorkers: 4})
		rep, err := tu.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ps []tuning.Params
		for _, o := range rep.Outcomes {
			ps = append(ps, o.Params)
		}
		return ps
	}
	if a, b := order(), order(); !slices.Equal(a, b) {
		t.Error("same seed and outcomes, different evaluation order")
	}
}

func TestRecorderFailureStops(t *testing.T) {
	for _, failAt := range []int{1, 5} { // the pruned batch; an evaluation
		tu, _ := newTuner(t, &memRecorder{failAt: failAt}, &fakeMeasurer{}, Options{Strategy: "exhaustive"})
		_, err := tu.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("failAt %d: err %v", failAt, err)
		}
	}
}

// prunedSignal closes pruned when the run records its pruned counts,
// which the search's preparation does.
type prunedSignal struct {
	*memRecorder
	once   sync.Once
	pruned chan struct{}
}

func (r *prunedSignal) RecordPruned(ctx context.Context, counts []PrunedCount) error {
	r.once.Do(func() { close(r.pruned) })
	return r.memRecorder.RecordPruned(ctx, counts)
}

// setupFirst fails the test when a configuration is measured before the
// Tuner's Setup returned.
type setupFirst struct {
	Measurer
	t    *testing.T
	done *atomic.Bool
}

func (m setupFirst) Measure(ctx context.Context, a Artifact, p tuning.Params) (Measurement, error) {
	if !m.done.Load() {
		m.t.Errorf("%v measured before the setup finished", p)
	}
	return m.Measurer.Measure(ctx, a, p)
}

// TestSetupBesidePrepare: the Tuner's Setup runs beside the search's own
// preparation (it waits for the pruned counts prepare records, so one
// after the other they would never end), nothing is measured before it
// returns, its time is setup time, and its error ends the run unmeasured.
func TestSetupBesidePrepare(t *testing.T) {
	var done atomic.Bool
	rec := &prunedSignal{memRecorder: &memRecorder{}, pruned: make(chan struct{})}
	tu, _ := newTuner(t, rec, setupFirst{&fakeMeasurer{}, t, &done}, Options{Strategy: "exhaustive", Budget: 4})
	const pause = 30 * time.Millisecond
	tu.Setup = func(ctx context.Context) error {
		select {
		case <-rec.pruned:
		case <-time.After(10 * time.Second):
			return errors.New("the search's preparation never ran beside the setup")
		}
		time.Sleep(pause)
		done.Store(true)
		return nil
	}
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Evaluations != 4 || rep.Split.Phases[PhaseSetup] < pause/2 {
		t.Errorf("%d evaluations, %v of setup; want 4 and about %v", rep.Evaluations, rep.Split.Phases[PhaseSetup], pause)
	}

	meas := &fakeMeasurer{}
	tu, _ = newTuner(t, &memRecorder{}, meas, Options{Strategy: "exhaustive", Budget: 4})
	tu.Setup = func(context.Context) error { return errors.New("out of device memory") }
	if _, err := tu.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "out of device memory") || len(meas.calls) != 0 {
		t.Errorf("a failed setup: err %v, %d configurations measured", err, len(meas.calls))
	}
}

func TestBadSetup(t *testing.T) {
	tu, _ := newTuner(t, &memRecorder{}, &fakeMeasurer{}, Options{Strategy: "annealing"})
	if _, err := tu.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "annealing") {
		t.Errorf("unknown strategy: %v", err)
	}
	tu, _ = newTuner(t, &memRecorder{}, &fakeMeasurer{}, Options{})
	tu.Problem.M = 0
	if _, err := tu.Run(context.Background()); err == nil {
		t.Error("impossible shape accepted")
	}
}

// TestSplitsWalkedOnlyWhereUseful: where the batch alone gives every
// compute unit enough work-groups at every batch_per_group, the pruner
// would reject every split, so pruning does not walk them; otherwise it
// does, and keeps some.
func TestSplitsWalkedOnlyWhereUseful(t *testing.T) {
	for _, tc := range []struct {
		batch        int
		walked, kept int // of the 576 points with splits 1, 2, 4
	}{{batch: 10000, walked: 192, kept: 96}, {batch: 10, walked: 576, kept: 288}} {
		walked, kept, pruned := walkCounts(t, func(tu *Tuner) {
			tu.Device.ComputeUnits, tu.Problem.Batch = 4, tc.batch
			tu.Space.Split = space.Values{1, 2, 4}
		})
		if walked != tc.walked || kept != tc.kept {
			t.Errorf("batch %d: %d points walked, %d kept (pruned %v); want %d and %d", tc.batch, walked, kept, pruned, tc.walked, tc.kept)
		}
	}
}

// TestPadsWalkedOnlyWhereUseful: on the nvidia target only the pad of 16
// bytes is walked (4 for f32), and it keeps what a space of that pad alone
// keeps; other targets walk every pad.
func TestPadsWalkedOnlyWhereUseful(t *testing.T) {
	walk := func(target profile.Target, pads space.Values) (walked, kept int, pruned map[string]int) {
		return walkCounts(t, func(tu *Tuner) {
			tu.Device.Target = target
			tu.Space.StageLocal, tu.Space.Stages, tu.Space.LocalPad = []bool{true}, space.Values{2}, pads
		})
	}
	all := space.Values{1, 2, 4, 8}
	oneW, oneK, _ := walk(profile.NVIDIA, space.Values{4})
	allW, allK, pruned := walk(profile.NVIDIA, all)
	if oneW == 0 || allW != oneW || allK != oneK || pruned["pad"] != 0 {
		t.Errorf("nvidia, pads %v: %d walked, %d kept (pruned %v); want the %d walked and %d kept of pad 4 alone", all, allW, allK, pruned, oneW, oneK)
	}
	if w, _, _ := walk(profile.Generic, all); w != 4*oneW {
		t.Errorf("generic, pads %v: %d walked, want %d", all, w, 4*oneW)
	}
}

// TestCoopRowsWalkedOnlyWhereUseful: on nvidia, a dtype the matrix engine
// takes walks coopmatrices of up to 32 rows only (prune.CoopRowsUseful);
// f32 walks every size.
func TestCoopRowsWalkedOnlyWhereUseful(t *testing.T) {
	walk := func(dtype string, rows space.Values) (walked int, pruned map[string]int) {
		w, _, pruned := walkCounts(t, func(tu *Tuner) {
			tu.Device.Target = profile.NVIDIA
			tu.Device.Matrix = []profile.Matrix{{Kind: "mma", Dtypes: []string{"f16"}, SubgroupSize: 1, M: []int{1}, N: 1, K: 1}}
			tu.Problem.Dtype = dtype
			tu.Space.Tile.M, tu.Space.Coopmatrix.M = space.Values{128}, rows
		})
		return w, pruned
	}
	short, long := space.Values{32}, space.Values{32, 64, 128}
	f16, _ := walk("f16", short)
	if w, pruned := walk("f16", long); w != f16 || pruned["coopmatrix"] != 0 {
		t.Errorf("f16, rows %v: %d walked (pruned %v), want the %d of rows %v", long, w, pruned, f16, short)
	}
	if f32, _ := walk("f32", short); f32 != f16 {
		t.Fatalf("f32 and f16 walk %d and %d points of rows %v", f32, f16, short)
	}
	if w, _ := walk("f32", long); w != 3*f16 {
		t.Errorf("f32, rows %v: %d walked, want %d", long, w, 3*f16)
	}
}

// walkCounts runs an exhaustive tuner over the test space as set changes
// it (on a copy of the test device) and returns the points pruning
// walked, those it kept and those it rejected by rule.
func walkCounts(t *testing.T, set func(*Tuner)) (walked, kept int, pruned map[string]int) {
	dev := *testDevice
	tu, _ := newTuner(t, &memRecorder{}, &fakeMeasurer{}, Options{Strategy: "exhaustive", Budget: 1, Seed: 1})
	tu.Device = &dev
	set(tu)
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	walked = rep.Candidates - rep.PrunedByRule["recipe"]
	for _, n := range rep.PrunedByRule {
		walked += n
	}
	return walked, rep.Candidates, rep.PrunedByRule
}

// TestShippedWalks: on the H100's nvidia gemm space the walk takes
// half-warps only for the types off the matrix engine, each with its
// 16-row coopmatrices and work-groups of whole half-warps, none of which
// the pruner then rejects for being one; so the walk of f16 stays as it
// was (544,320 points at 256³) and that of f32 at one and a half times
// its warps' (777,600 and 388,800).
func TestShippedWalks(t *testing.T) {
	devs, err := profile.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	dev, ok := devs.Lookup("NVIDIA H100 80GB HBM3")
	sp, err := space.Shipped("gemm", "nvidia")
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, prob := range []prune.Problem{
		{Op: "gemm", Dtype: "f16", Acc: "f32", M: 256, N: 256, K: 256, Batch: 400},
		{Op: "gemm", Dtype: "f32", M: 256, N: 256, K: 256, Batch: 267},
		{Op: "gemm", Dtype: "f32", M: 16, N: 16, K: 16, Batch: 68267},
	} {
		r := &run{t: &Tuner{Space: sp, Device: dev, Problem: prob}}
		walked, halfWarps := 0, 0
		for _, seq := range r.walks(r.enumerated().Parts()) {
			for p := range seq {
				walked++
				if p.SubgroupSize == 32 {
					continue
				}
				halfWarps++
				if why := prune.Check(p, dev, prob); why != nil && (why.Rule == "half-warp" || p.WorkGroupSize[0]%p.SubgroupSize != 0) {
					t.Fatalf("%s %dx%dx%d: walked %v, which %v", prob.Dtype, prob.M, prob.N, prob.K, p, why)
				}
			}
		}
		t.Logf("%s %dx%dx%d: %d points walked, %d of them half-warps", prob.Dtype, prob.M, prob.N, prob.K, walked, halfWarps)
		if walked > 1_200_000 || (prob.Dtype == "f16") != (halfWarps == 0) {
			t.Errorf("%s %dx%dx%d: %d points walked, %d of them half-warps", prob.Dtype, prob.M, prob.N, prob.K, walked, halfWarps)
		}
	}
}
