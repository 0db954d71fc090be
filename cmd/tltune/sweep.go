package main

import (
	stdctx "context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/results"
	"tltune/tuner"
	"tltune/tuner/space"
	"tltune/tuner/suite"
)

func init() {
	register(&command{
		name:    "sweep",
		summary: "tune the shapes of a suite in one run, or re-time their stored best configurations (--remeasure, the nightly job)",
		usage:   "SUITE.toml|NAME [--retune | --remeasure [--tune-missing] [--stored TABLE.json]] [--precision exact|tf32] [--shard I/N [--campaign NAME]] [--tag NAME] [--resume RUN|last] [--device D|D1,D2|all[:gpu|cpu]] [--db PATH] [--json] [tuning flags: --budget, --strategy and --time override the suite's]",
		run:     sweepCmd,
	})
}

// sweepFlags are the flags of `tltune sweep`: those of the tuning commands
// but the recipe's, and the mode.
type sweepFlags struct {
	tuneFlags
	retune, remeasure, tuneMissing bool
	shard                          string          // I/N: this task's share of the suite
	precision                      string          // --precision: over the suite's, where it applies
	storedTable                    string          // --stored: a tuning table to re-measure instead of the store's bests
	given                          map[string]bool // flags set on the command line, over the suite's settings
}

func sweepCmd(c *context, args []string) int {
	sw, status, ok := parseSweep(c, args)
	if !ok {
		return status
	}
	f := sw.flags
	if f.storedTable != "" { // before the run is recorded: a bad table is bad input, not a failed run
		var err error
		if sw.table, err = tuning.ReadFile(f.storedTable); err != nil {
			return c.fail(inputError{fmt.Errorf("--stored: %w", err)})
		}
	}
	infos, err := sweepDevices(*f.device)
	if err != nil {
		return deviceError(c, err)
	}
	if len(infos) > 1 {
		f.quiet = true // one progress bar per device would garble the terminal
	}
	runs, status := f.openOn(c, "sweep", sw.ops(), sw.recipes, infos)
	if runs == nil {
		return status
	}
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	sw.runs = runs
	return sw.execute(c)
}

// parseSweep reads a sweep's flags and suite. When the command must stop
// it has printed why and returns ok false with the exit status.
func parseSweep(c *context, args []string) (sw *sweep, status int, ok bool) {
	f, suitePath, status, ok := parseSweepFlags(c, args)
	if !ok {
		return nil, status, false
	}
	return loadSweep(c, f, suitePath)
}

// parseSweepFlags reads a sweep's flags and the path of its suite, the one
// argument, with the errors of sweep's flags: c is sweep's context, also
// when slurm passes the flags on.
func parseSweepFlags(c *context, args []string) (f *sweepFlags, suitePath string, status int, ok bool) {
	// A sweep reports the best configuration of each shape.
	f = &sweepFlags{tuneFlags: tuneFlags{top: 1}, given: map[string]bool{}}
	fs := c.flags()
	f.registerTuning(fs, "") // a suite may hold every op
	fs.BoolVar(&f.retune, "retune", false, "search every shape again (the default)")
	fs.BoolVar(&f.remeasure, "remeasure", false, "do not search: verify and time the stored best configuration of each shape on this device again")
	fs.BoolVar(&f.tuneMissing, "tune-missing", false, "with --remeasure: tune the shapes that have no stored best instead of skipping them")
	fs.StringVar(&f.storedTable, "stored", "", "with --remeasure: re-time the configurations of this tuning table (tltune table -o FILE) instead of the bests stored in --db; the shards of a campaign do, each with a store of its own")
	fs.StringVar(&f.campaign, "campaign", "", "record the run as part of the named campaign: the shards of one campaign (e.g. the tasks of a job array, given the same name) merge into one run, and a shard started again resumes its part")
	fs.StringVar(&f.precision, "precision", "", "exact or tf32, over the suite's precision keys: every shape that can take it does (tf32: the f32 GEMMs into f32, and only on a target with a tf32 engine), the others stay exact; an error only when no shape can take it (default: each recipe's)")
	fs.StringVar(&f.shard, "shard", "", "I/N: sweep only the I-th of N shares of the suite (a job array's task); the split is balanced by estimated cost and does not depend on the order of the suite file")
	pos, status, ok := parseInterleaved(c, fs, args)
	if !ok {
		return nil, "", status, false
	}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	if err := f.check(pos); err != nil {
		return nil, "", c.usageError("%v", err), false
	}
	return f, pos[0], exitOK, true
}

// loadSweep reads the suite at path for a sweep with flags f. A bad suite
// is bad input, as a bad flag is, of the command c runs: sweep, or slurm,
// whose argument it is.
func loadSweep(c *context, f *sweepFlags, path string) (sw *sweep, status int, ok bool) {
	sw, err := newSweep(f, path)
	if err != nil {
		return nil, c.fail(inputError{err}), false
	}
	return sw, exitOK, true
}

// check rejects flag combinations no sweep can use.
func (f *sweepFlags) check(pos []string) error {
	switch {
	case len(pos) != 1:
		return errors.New("name one suite file (e.g. configs/suites/nightly.toml, or nightly for the shipped one)")
	case f.retune && f.remeasure:
		return errors.New("--retune and --remeasure exclude each other")
	case f.tuneMissing && !f.remeasure:
		return errors.New("--tune-missing goes with --remeasure")
	case f.storedTable != "" && !f.remeasure:
		return errors.New("--stored goes with --remeasure")
	case f.shard != "":
		if _, err := suite.ParseShard(f.shard); err != nil {
			return fmt.Errorf("--%v", err)
		}
	}
	if _, err := kernels.ParsePrecision(f.precision); err != nil {
		return fmt.Errorf("--precision: %v", err)
	}
	return f.tuneFlags.check()
}

// newSweep reads the suite at path and makes its recipes. A missing file
// is an error that lists the shipped suites.
func newSweep(f *sweepFlags, path string) (*sweep, error) {
	s, err := suite.Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%v (shipped suites: %s)", err, strings.Join(suite.Shipped(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if s, err = f.withPrecision(s); err != nil {
		return nil, err
	}
	if f.shard != "" {
		sh, _ := suite.ParseShard(f.shard) // checked with the flags
		s, f.shard = s.Shard(sh), sh.String()
	}
	sw := &sweep{flags: f, suite: s}
	for _, cs := range s.Cases {
		r, err := newRecipe(cs.Spec)
		if err == nil { // suite.Parse validated the spec; a recipe may still refuse it
			err = fitsHost(r)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: recipe %d: %v", s.Name, cs.Recipe, err)
		}
		sw.recipes = append(sw.recipes, r)
	}
	return sw, nil
}

// withPrecision puts --precision over the suite's precisions, and notes
// what asked for tf32 if a shape has it, for the refusal on a target
// without a tf32 engine. A shard of a campaign does this before it takes
// its share, so the shards agree on the problems.
func (f *sweepFlags) withPrecision(s *suite.Suite) (*suite.Suite, error) {
	instead := "sweep with --precision " + speak.ExactPrecision
	if f.given["precision"] {
		p, _ := kernels.ParsePrecision(f.precision) // checked with the flags
		var err error
		if s, err = s.WithPrecision(p); err != nil {
			return nil, fmt.Errorf("--precision %s: %v; leave the flag out", f.precision, err)
		}
		if p == speak.TF32 {
			f.tf32 = &tf32Ask{by: "--precision " + speak.TF32, instead: instead}
		}
		return s, nil
	}
	for _, c := range s.Cases {
		if c.Spec.Precision == speak.TF32 {
			f.tf32 = &tf32Ask{by: fmt.Sprintf("%s: recipe %d", s.Name, c.Recipe), instead: instead + " (every shape exact), or on a device with one"}
			break
		}
	}
	return s, nil
}

// sweep is one `tltune sweep`: the suite's shapes, each tuned or
// re-measured inside one run, on one device or several of one model.
type sweep struct {
	flags   *sweepFlags
	suite   *suite.Suite
	recipes []kernels.Recipe               // one per case
	runs    []*tuneRun                     // one per device, all recording into the first's run
	stored  map[speak.Problem]results.Best // --remeasure: the best stored on this device model
	table   *tuning.Table                  // --stored: the tuning table to re-time
	mu      sync.Mutex                     // guards tally, the counts and the output while several devices sweep
	tally   throughput                     // of every shape evaluated so far
	// For the progress bar: when the sweep began, how many shapes it has,
	// began and finished.
	start                  time.Time
	total, started, finish int
}

// lead is the first device's run, which holds the store and the stored run.
func (s *sweep) lead() *tuneRun { return s.runs[0] }

// ops are the operations of the suite, for the search spaces to load.
func (s *sweep) ops() []kernels.Op {
	var ops []kernels.Op
	for _, r := range s.recipes {
		if op := r.Spec().Op; !slices.Contains(ops, op) {
			ops = append(ops, op)
		}
	}
	return ops
}

// execute goes through the shapes, printing a line per shape as it
// finishes, until all are done or the user interrupts; then it records how
// the run ended and prints the summary.
func (s *sweep) execute(c *context) int {
	ctx, stop := interruptible()
	defer stop()
	rep := s.newReport()
	err := s.loadStored()
	if err == nil {
		s.start, s.total = time.Now(), len(s.order())
		rep.Shapes, err = s.sweepAll(ctx, c)
		rep.Wall = time.Since(s.start).Seconds()
	}
	if err == nil && !rep.measuredAny() {
		// A nightly job must not pass on an empty run, nor leave it as
		// the next night's baseline: the run is recorded as failed.
		err = inputError{fmt.Errorf("no shape of %s has a stored best on %s; tune the suite first (drop --remeasure) or add --tune-missing", s.suite.Name, s.lead().info.Name)}
	}
	rep.throughput = s.tally
	rep.PTX = s.lead().copts.PTX
	status, err := s.lead().finish(err)
	if werr := rep.write(c.stdout, s.flags.asJSON); werr != nil && err == nil {
		err = werr
	}
	switch {
	case status == results.Interrupted:
		return s.lead().interrupted(c)
	case err != nil:
		return c.fail(err)
	}
	return rep.verdict(c)
}

// loadStored reads, for --remeasure, the best configuration stored for
// each shape on this device (exactly this device: the store's filter
// matches names by substring).
func (s *sweep) loadStored() error {
	if !s.flags.remeasure {
		return nil
	}
	info := s.lead().info
	s.stored = map[speak.Problem]results.Best{}
	if s.table != nil {
		s.loadStoredTable(info.Name)
		return nil
	}
	best, err := s.lead().store.BestPerShape(stdctx.Background(), results.Filter{Device: results.ThisDevice(info.Name)})
	if err != nil {
		return err
	}
	for _, b := range best {
		if b.Env.Device == info.Name {
			s.stored[b.Config.Problem] = b
		}
	}
	return nil
}

// loadStoredTable takes the stored bests from the --stored tuning table:
// its entries for this device.
func (s *sweep) loadStoredTable(device string) {
	for _, e := range s.table.Entries {
		if e.Device == device {
			s.stored[e.Problem] = results.Best{Measurement: results.Measurement{RunID: e.Run, MedianNS: e.MedianNS,
				Config: results.Config{Problem: e.Problem, Params: e.Params}}}
		}
	}
}

// shape tunes or re-measures case i on w's device, and says how long that
// took.
func (s *sweep) shape(ctx stdctx.Context, c *context, w *tuneRun, i int) (sweepShape, error) {
	start := time.Now()
	out, err := s.evaluateCase(ctx, c, w, i)
	out.Seconds = time.Since(start).Seconds()
	s.mu.Lock()
	s.finish++
	s.mu.Unlock()
	if len(s.runs) > 1 {
		out.Device = w.info.ID
	}
	return out, err
}

// evaluateCase tunes case i, or re-measures its stored best.
func (s *sweep) evaluateCase(ctx stdctx.Context, c *context, w *tuneRun, i int) (sweepShape, error) {
	out := newSweepShape(s.recipes[i].Spec())
	if !s.flags.remeasure {
		return s.tune(ctx, c, w, i, out)
	}
	best, ok := s.stored[out.NamedProblem.Problem]
	switch {
	case ok:
		return s.remeasure(ctx, c, w, i, out, best)
	case s.flags.tuneMissing:
		return s.tune(ctx, c, w, i, out)
	}
	out.Action = actionSkipped
	out.Why = fmt.Sprintf("never tuned on %s; skipped (--tune-missing tunes it)", w.info.Name)
	return out, nil
}

// tune searches the shape's space with the suite's settings, or the flags'
// where given.
func (s *sweep) tune(ctx stdctx.Context, c *context, w *tuneRun, i int, out sweepShape) (sweepShape, error) {
	recipe := s.recipes[i]
	spec := recipe.Spec()
	opts := w.searchOptions(spec)
	s.applySuiteTuning(&opts, s.suite.Cases[i].Tuning)
	out.Action = actionTuned
	return s.evaluate(ctx, c, w, recipe, w.spaces[spec.Op], opts, out)
}

// applySuiteTuning puts the suite's settings in opts, except where a flag
// was given: the command line wins.
func (s *sweep) applySuiteTuning(opts *tuner.Options, t suite.Tuning) {
	given := s.flags.given
	if t.Strategy != "" && !given["strategy"] {
		opts.Strategy = t.Strategy
	}
	if t.Budget != nil && !given["budget"] {
		opts.Budget = *t.Budget
	}
	if t.Time != 0 && !given["time"] {
		opts.Time = t.Time
	}
}

// remeasure verifies and times the stored best configuration again, with
// the full measurement protocol, through the tuner over a space of that one
// point: it is recorded, classified and timed out exactly as in a search.
func (s *sweep) remeasure(ctx stdctx.Context, c *context, w *tuneRun, i int, out sweepShape, best results.Best) (sweepShape, error) {
	recipe := s.recipes[i]
	op := recipe.Spec().Op
	sp := onePoint(w.spaces[op], best.Config.Params)
	opts := tuner.Options{Strategy: "exhaustive", Seed: s.flags.seed, Budget: 1, ConfigTimeout: s.flags.timeout}
	out.Action = actionRemeasured
	out.Stored = &storedBest{Run: best.RunID, MedianNs: best.MedianNS, Params: best.Config.Params}
	return s.evaluate(ctx, c, w, recipe, sp, opts, out)
}

// onePoint is the space holding only p, for sp's op and target.
func onePoint(sp *space.Space, p tuning.Params) *space.Space { return sp.Point(p) }

// evaluate runs the shape's tuner over sp and summarises what it found.
func (s *sweep) evaluate(ctx stdctx.Context, c *context, w *tuneRun, recipe kernels.Recipe, sp *space.Space, opts tuner.Options, out sweepShape) (sweepShape, error) {
	bar := newProgress(c.stderr, s.flags.quiet || len(s.runs) > 1, opts.Budget, s.progressLabel(out.Name), s.eta)
	j, err := w.newShape(recipe, sp, opts)
	if err != nil {
		bar.finish()
		return out, err
	}
	rep, err := j.tune(ctx, bar)
	if rep == nil {
		return out, err
	}
	s.mu.Lock()
	s.tally.add(rep, j.builds)
	s.mu.Unlock()
	out.Counts, out.Stop = outcomeCounts(rep), string(rep.Stop)
	if b := rep.Best(); b != nil {
		ranked := j.ranked(*b)
		out.Best = &ranked
	} else {
		out.Why = whyNothingRan(rep)
	}
	return out, err
}

// progressLabel counts a shape as begun and names it with its place in
// the sweep, e.g. "[3/30] gemm.nn f32 64x64x64".
func (s *sweep) progressLabel(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started++
	return fmt.Sprintf("[%d/%d] %s", s.started, s.total, name)
}

// eta estimates the time the sweep has left from the pace of the shapes
// finished so far.
func (s *sweep) eta() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finish == 0 {
		return "sweep ETA after the first shape"
	}
	perShape := time.Since(s.start) / time.Duration(s.finish)
	return "sweep ETA " + speak.Elapsed(perShape*time.Duration(s.total-s.finish))
}

// whyNothingRan names what became of the evaluations of a shape with no
// correct configuration: the time limit that ran out before the first, the
// last failure's message, or the pruning, or the empty space (the words
// tltune gemm, gemv and ger end on too).
func whyNothingRan(rep *tuner.Report) string {
	if outOfTime(rep) {
		// The setup (the reference's computation) counts against the
		// limit: a short one ends the run before its first proposal.
		return fmt.Sprintf("the time limit ran out before the first of %d candidate configurations was proposed (setup and pruning took %s)",
			rep.Candidates, speak.Elapsed(rep.Split.Wall))
	}
	for i := len(rep.Outcomes) - 1; i >= 0; i-- {
		if o := rep.Outcomes[i]; o.Kind != tuner.OK {
			if strings.HasPrefix(o.Message, string(o.Kind)+":") {
				return o.Message // the worker's messages may name their kind already
			}
			return fmt.Sprintf("%s: %s", o.Kind, o.Message)
		}
	}
	if pruned := rep.Counts[tuner.Pruned]; pruned > 0 {
		return fmt.Sprintf("all %d configurations of the search space were pruned for this problem on this device (%s)",
			pruned, speak.Counts(rep.PrunedByRule, nil))
	}
	return "the search space holds no configuration (a coopmatrix must divide its tile, a tile its work-group's share)"
}

// outOfTime says whether the time limit ended a run that had candidates
// before it evaluated any.
func outOfTime(rep *tuner.Report) bool {
	return rep.Stop == tuner.StopTime && rep.Evaluations == 0 && rep.Candidates > 0
}
