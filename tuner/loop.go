package tuner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"time"

	"tltune/compiler/tuning"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/search"
	"tltune/tuner/space"
)

// Tuner tunes one op and shape on one device.
type Tuner struct {
	Problem  prune.Problem
	Device   *profile.Profile
	Space    *space.Space
	Generate Generator
	Compiler Compiler
	Measurer Measurer
	Recorder Recorder
	// Setup, if not nil, prepares what measuring needs (the inputs on the
	// device, say). It runs in the setup phase beside the search's own
	// preparation (walking and pruning the space, starting the
	// strategy), which takes as long on a large space, and the search
	// begins when both are done; its error ends the run.
	Setup func(ctx context.Context) error
	Options
}

// job is one configuration in flight.
type job struct {
	out   Outcome
	entry *cacheEntry
	done  bool // finished without being cancelled
}

// run is the state of one Tuner.Run, owned by its goroutine.
type run struct {
	t        *Tuner
	opts     Options
	rep      *Report
	strategy search.Strategy
	cache    *compileCache
	start    time.Time
	seq      int // last evaluation number handed out
	inflight int
	planned  int
	best     *Outcome
	fatal    error // a recorder failure: stop, the store is not keeping up
	clock    *phaseClock
	// raceAbove is the lowest upper end of an OK outcome's confidence
	// interval so far, ns (0: none), which racing configurations must
	// stay below (race.go). The device worker owns it during the pipeline.
	raceAbove float64
}

func (o Options) withDefaults() Options {
	if o.Strategy == "" {
		o.Strategy = "gp"
	}
	if o.CompileWorkers <= 0 {
		o.CompileWorkers = runtime.GOMAXPROCS(0)
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 1024
	}
	if o.RetimeTop <= 0 {
		o.RetimeTop = 3
	}
	return o
}

// Run tunes until the strategy runs out of candidates, the budget or time
// is spent, or ctx is cancelled. No configuration's failure stops it; a
// failure of the Recorder does, since results would be lost. On
// cancellation it returns what it has with ctx's error: everything finished
// before was recorded, and a resumed run continues from there.
func (t *Tuner) Run(ctx context.Context) (*Report, error) {
	if err := t.Problem.Validate(); err != nil {
		return nil, err
	}
	r := &run{t: t, opts: t.Options.withDefaults(), start: time.Now(), clock: newPhaseClock(time.Now),
		rep: &Report{PrunedByRule: map[string]int{}, Counts: map[Kind]int{}}}
	defer func() {
		r.rep.Split = r.clock.stop()
		r.rep.countTimings()
	}()
	ctx = r.clock.newLane(ctx)
	setup := r.startSetup(ctx)
	err := r.prepare(ctx)
	if serr := <-setup; err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	r.cache = newCompileCache(r.opts.CacheSize)
	defer r.cache.close()
	r.pipeline(ctx)
	if r.opts.Race && r.fatal == nil && ctx.Err() == nil {
		r.retime(ctx)
	}
	switch {
	case r.fatal != nil:
		return r.rep, r.fatal
	case ctx.Err() != nil:
		r.rep.Stop = StopCancelled
		return r.rep, ctx.Err()
	}
	return r.rep, nil
}

// startSetup runs the Tuner's Setup, if any, on a lane of its own and
// returns where its error arrives.
func (r *run) startSetup(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	if r.t.Setup == nil {
		done <- nil
		return done
	}
	sctx := r.clock.newLane(ctx)
	go func() {
		end := Track(sctx, PhaseSetup)
		err := r.t.Setup(sctx)
		end()
		done <- err
	}()
	return done
}

// prepare prunes the space, starts the strategy and feeds it what an
// interrupted run recorded.
func (r *run) prepare(ctx context.Context) error {
	t := r.t
	endPropose := Track(ctx, PhasePropose)
	keep, pruned := prune.SplitParts(r.walks(r.enumerated().Parts()), t.Device, t.Problem)
	r.rep.Candidates = len(keep)
	strategy, err := search.New(r.opts.Strategy, keep, r.opts.Seed)
	endPropose()
	if err != nil {
		return err
	}
	search.PreferCheap(strategy, r.opts.Cheap)
	search.Retrace(strategy, r.opts.Path)
	r.strategy = strategy
	endRecord := Track(ctx, PhaseRecord)
	prev, err := t.Recorder.Previous(ctx)
	endRecord()
	if err != nil {
		return fmt.Errorf("reading the interrupted run: %w", err)
	}
	if err := r.recordPruned(ctx, pruned); err != nil {
		return err
	}
	defer Track(ctx, PhasePropose)()
	recipeRefused := r.resume(prev)
	r.warmStart(keep, prev)
	r.planned = len(keep) - recipeRefused
	if r.opts.Budget > 0 {
		r.planned = min(r.planned, r.opts.Budget)
	}
	return nil
}

// walks are the points of each part, less what a part's subgroup size
// rules out at every point, so that walking it costs nothing: work-groups
// not a multiple of the subgroup (the pruner's work-group rule), and a
// half-warp's coopmatrix rows other than its own (prune.HalfWarpRows): the
// nvidia space lists half-warps and work-groups of 16 lanes for them.
func (r *run) walks(parts []*space.Space) []iter.Seq[tuning.Params] {
	var seqs []iter.Seq[tuning.Params]
	for _, p := range parts {
		sgs := p.SubgroupSize[0]
		if p.WorkGroupSize.X[0]%sgs != 0 {
			continue
		}
		if len(p.Coopmatrix.M) > 0 { // gemv and ger have none
			p.Coopmatrix.M = slices.DeleteFunc(slices.Clone(p.Coopmatrix.M), func(cm int) bool { return !prune.HalfWarpRows(r.t.Device, sgs, cm) })
			if len(p.Coopmatrix.M) == 0 {
				continue
			}
		}
		seqs = append(seqs, p.All())
	}
	return seqs
}

// enumerated is the space pruning walks: the tuner's, without what the
// pruner would reject at every point, so that walking it costs nothing:
// its splits where the batch alone fills the device at every
// batch_per_group (walking them was three quarters of the walk), the
// panel pads the problem's element type does not want (prune.PadUseful:
// the nvidia space lists one pad of 16 bytes for each type), the
// coopmatrix rows that only pay without a matrix engine
// (prune.CoopRowsUseful) and the half-warps that pay only there too
// (prune.HalfWarpUseful).
func (r *run) enumerated() *space.Space {
	narrowed := *r.t.Space
	sp := &narrowed
	if len(sp.Split) > 0 && len(sp.BatchPerGroup) > 0 &&
		prune.SplitUnneeded(r.t.Device, r.t.Problem, slices.Max(sp.BatchPerGroup)) {
		sp.Split = nil
	}
	sp.SubgroupSize = r.useful(sp.SubgroupSize, prune.HalfWarpUseful)
	sp.LocalPad = r.useful(sp.LocalPad, prune.PadUseful)
	sp.Coopmatrix.M = r.useful(sp.Coopmatrix.M, prune.CoopRowsUseful)
	return sp
}

// useful is the values of a dimension that useful keeps for the run's
// device and problem, or all of them where it keeps none: the pruner then
// rejects every such point itself.
func (r *run) useful(vs space.Values, useful func(*profile.Profile, prune.Problem, int) bool) space.Values {
	kept := slices.DeleteFunc(slices.Clone(vs), func(v int) bool { return !useful(r.t.Device, r.t.Problem, v) })
	if len(kept) == 0 {
		return vs
	}
	return kept
}

// recordPruned records the configurations pruning rejected, counted per
// rule in the order the rules first fired.
func (r *run) recordPruned(ctx context.Context, pruned []prune.Tally) error {
	counts := make([]PrunedCount, 0, len(pruned))
	for _, t := range pruned {
		r.rep.PrunedByRule[t.Rule] += t.Count
		r.rep.Counts[Pruned] += t.Count
		counts = append(counts, PrunedCount{Rule: t.Rule, Count: t.Count, Example: t.Example.String()})
	}
	if len(counts) == 0 {
		return nil
	}
	defer Track(ctx, PhaseRecord)()
	if err := r.t.Recorder.RecordPruned(ctx, counts); err != nil {
		return fmt.Errorf("recording pruned configurations: %w", err)
	}
	return nil
}

// resume feeds the outcomes of an interrupted run to the strategy, so
// nothing is measured twice, and returns how many of them the recipe
// refused (pruned outcomes of configurations the rules kept).
func (r *run) resume(prev []Outcome) (recipeRefused int) {
	for i := range prev {
		o := prev[i]
		if o.Kind == Pruned {
			if prune.Check(o.Params, r.t.Device, r.t.Problem) == nil {
				r.strategy.Observe(o.Params, 0, false)
				r.rep.PrunedByRule["recipe"]++
				r.rep.Counts[Pruned]++
				recipeRefused++
			}
			continue
		}
		r.strategy.Observe(o.Params, o.Median(), o.Kind == OK)
		r.noteTimed(&o)
		// Number on after the resumed evaluations, whether or not the
		// store kept their numbers.
		r.seq = max(r.seq+1, o.Seq)
		r.rep.Resumed++
		r.account(&o)
	}
	return recipeRefused
}

// warmStart wraps the strategy so that the caller's warm-start
// configurations come first: those among the candidates (the space asked
// for, after pruning) and not evaluated yet. One outside them is left out
// even where it would run: the space flags say what a run may try.
func (r *run) warmStart(keep []tuning.Params, prev []Outcome) {
	if len(r.opts.WarmStart) == 0 {
		return
	}
	// A few warm starts against up to hundreds of thousands of
	// candidates: each is marked when a candidate is found to be it.
	candidate := map[tuning.Params]bool{}
	for _, p := range r.opts.WarmStart {
		candidate[p] = false
	}
	for _, p := range keep {
		if _, warm := candidate[p]; warm {
			candidate[p] = true
		}
	}
	for _, o := range prev {
		delete(candidate, o.Params)
	}
	var first []tuning.Params
	for _, p := range r.opts.WarmStart {
		if candidate[p] {
			delete(candidate, p)
			first = append(first, p)
		}
	}
	if len(first) > 0 {
		r.strategy = search.WarmStart(r.strategy, first)
	}
}

// account adds a finished evaluation to the report.
func (r *run) account(o *Outcome) {
	r.rep.Outcomes = append(r.rep.Outcomes, *o)
	r.rep.Counts[o.Kind]++
	r.rep.Evaluations++
	if o.CacheHit {
		r.rep.CacheHits++
	}
	if o.Kind == OK && (r.best == nil || o.Median() < r.best.Median()) {
		b := *o
		r.best = &b
	}
}

// pipeline keeps up to depth configurations in flight: compile workers
// work ahead while the device worker measures in proposal order, so the
// device never waits for a compiler that has work. Proposal order and
// observation order are therefore independent of timing: a run is
// reproducible given its seed and outcomes.
func (r *run) pipeline(ctx context.Context) {
	depth := r.opts.CompileWorkers + 2
	compileQ := make(chan *job, depth)
	deviceQ := make(chan *job, depth)
	results := make(chan *job, depth)
	var wg sync.WaitGroup
	for range r.opts.CompileWorkers {
		wctx := r.clock.newLane(ctx)
		wg.Go(func() {
			for j := range compileQ {
				r.compile(wctx, j)
			}
		})
	}
	dctx := r.clock.newLane(ctx)
	wg.Go(func() {
		for j := range deviceQ {
			r.measure(dctx, j, PhaseTime, r.opts.Race)
			results <- j
		}
	})
	for {
		for r.inflight < depth && r.mayPropose(ctx) {
			j := r.dispatch(ctx)
			if j == nil {
				continue
			}
			r.inflight++
			deviceQ <- j
			if j.out.CacheHit {
				continue
			}
			compileQ <- j
		}
		if r.inflight == 0 {
			break
		}
		r.finish(ctx, <-results)
	}
	close(compileQ)
	close(deviceQ)
	wg.Wait()
}

// mayPropose checks the limits before each proposal and notes which one
// ended the run.
func (r *run) mayPropose(ctx context.Context) bool {
	switch {
	case r.fatal != nil || ctx.Err() != nil || r.rep.Stop != "":
		return false
	case r.opts.Budget > 0 && r.rep.Evaluations+r.inflight >= r.opts.Budget:
		r.rep.Stop = StopBudget
		return false
	case r.opts.Time > 0 && time.Since(r.start) >= r.opts.Time:
		r.rep.Stop = StopTime
		return false
	}
	return true
}

// dispatch asks the strategy for a configuration and generates its source.
// It returns nil when the recipe refused it (pruned, recorded here) or the
// strategy has nothing left (Stop set).
func (r *run) dispatch(ctx context.Context) *job {
	endPropose := Track(ctx, PhasePropose)
	defer func() { endPropose() }()
	p, ok := r.strategy.Next()
	if !ok {
		r.rep.Stop = StopExhausted
		return nil
	}
	src, err := r.t.Generate(p)
	if err != nil {
		r.strategy.Observe(p, 0, false)
		r.rep.PrunedByRule["recipe"]++
		r.rep.Counts[Pruned]++
		o := Outcome{Params: p, Kind: Pruned, Message: "recipe: " + err.Error()}
		endPropose()
		endPropose = Track(ctx, PhaseRecord)
		if err := r.t.Recorder.Record(context.WithoutCancel(ctx), o); err != nil {
			r.fatal = fmt.Errorf("recording %v: %w", p, err)
		}
		return nil
	}
	r.seq++
	j := &job{out: Outcome{Params: p, Seq: r.seq, Source: src, SourceHash: SourceHash(src)}}
	var created bool
	j.entry, created = r.cache.acquire(j.out.SourceHash)
	j.out.CacheHit = !created
	return j
}

// configContext bounds one compilation or measurement of evaluation seq.
func (r *run) configContext(ctx context.Context, seq int) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, evaluationKey{}, seq)
	if r.opts.ConfigTimeout > 0 {
		return context.WithTimeout(ctx, r.opts.ConfigTimeout)
	}
	return context.WithCancel(ctx)
}

// compile runs on a compile worker.
func (r *run) compile(ctx context.Context, j *job) {
	if err := ctx.Err(); err != nil {
		r.cache.finish(j.entry, nil, err, CompileError, 0)
		return
	}
	start := time.Now() // before the deadline starts: a timeout lasts the whole limit
	cctx, cancel := r.configContext(ctx, j.out.Seq)
	defer cancel()
	endCompile := Track(cctx, PhaseCompile)
	art, err := protect(func() (Artifact, error) { return r.t.Compiler.Compile(cctx, j.out.Source) })
	endCompile()
	var kind Kind
	if err != nil {
		kind = classify(err, cctx, CompileError)
	}
	r.cache.finish(j.entry, art, err, kind, time.Since(start))
}

// measure runs on the device worker, in proposal order: the time of the
// Measure call goes to phase; race says whether it races the best so far.
func (r *run) measure(ctx context.Context, j *job, phase Phase, race bool) {
	defer r.cache.release(j.entry)
	<-j.entry.done
	o := &j.out
	if ctx.Err() != nil {
		return // cancelled: not done, not recorded, redone on resume
	}
	if !o.CacheHit {
		o.CompileTime = j.entry.dur
	}
	if j.entry.err != nil {
		o.Kind, o.Message, j.done = j.entry.kind, j.entry.err.Error(), true
		return
	}
	start := time.Now()
	mctx, cancel := r.configContext(ctx, o.Seq)
	defer cancel()
	if race {
		mctx = context.WithValue(mctx, raceKey{}, r.race())
	}
	endTime := Track(mctx, phase)
	m, err := protect(func() (Measurement, error) { return r.t.Measurer.Measure(mctx, j.entry.art, o.Params) })
	endTime()
	o.MeasureTime = time.Since(start)
	if ctx.Err() != nil {
		return
	}
	j.done = true
	o.Verify = m.Verify
	if err != nil {
		o.Kind, o.Message = classify(err, mctx, LaunchError), err.Error()
		return
	}
	o.Kind, o.Message = checkMeasurement(m)
	if o.Kind == OK {
		o.Result = m.Result
		r.noteTimed(o)
	}
}

// finish records a job that came back from the device worker and tells the
// strategy. A job cancelled before it finished is dropped: it was never
// recorded, so a resumed run evaluates it.
func (r *run) finish(ctx context.Context, j *job) {
	r.inflight--
	if !j.done || r.fatal != nil {
		return
	}
	o := &j.out
	if !r.commit(ctx, "recording", o.Params, func(ctx context.Context) error { return r.t.Recorder.Record(ctx, *o) }) {
		return
	}
	endPropose := Track(ctx, PhasePropose)
	r.strategy.Observe(o.Params, o.Median(), o.Kind == OK)
	endPropose()
	r.account(o)
	if r.opts.Progress != nil {
		r.opts.Progress(Progress{Done: r.rep.Evaluations, Planned: r.planned, Last: o, Best: r.best})
	}
}

// SourceHash is the hex SHA-256 of a generated source (Outcome.SourceHash):
// the name of its compiled artifact here, in the worker's programs and in
// the binary cache.
func SourceHash(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:])
}

// commit makes a Recorder call for configuration p, in the record phase,
// even when ctx was cancelled meanwhile: the work is done and losing it
// would mean measuring it again. A failure stops the run (what names the
// call in its error); commit reports whether the call succeeded.
func (r *run) commit(ctx context.Context, what string, p tuning.Params, call func(context.Context) error) bool {
	end := Track(ctx, PhaseRecord)
	err := call(context.WithoutCancel(ctx))
	end()
	if err != nil {
		r.fatal = fmt.Errorf("%s %v: %w", what, p, err)
	}
	return err == nil
}

// protect turns a panic in a compiler or measurer into an error: one bad
// configuration must not take the run down.
func protect[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}
