package main

import (
	stdctx "context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"tltune/compiler"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/configs"
	"tltune/device"
	"tltune/kernels"
	"tltune/results"
	"tltune/tuner"
	"tltune/tuner/bench"
	"tltune/tuner/measure"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/search"
	"tltune/tuner/space"
)

func init() {
	for _, op := range []kernels.Op{kernels.GEMMOp, kernels.GEMVOp, kernels.GEROp} {
		register(&command{
			name:    op.String(),
			summary: fmt.Sprintf("tune a batched %s shape on a device: search, verify, time, store, report", strings.ToUpper(op.String())),
			usage:   tuneUsage(op),
			run:     func(c *context, args []string) int { return tuneCmd(c, op, args) },
		})
	}
}

func tuneUsage(op kernels.Op) string {
	shape := "--m M --n N --k K"
	if op != kernels.GEMMOp {
		shape = "--m M --n N"
	}
	return shape + " [--dtype T] [--device D] [--strategy gp|random|exhaustive] [--budget N] [--time D] [--db PATH] [--tag NAME] [--resume RUN] [--json] [space flags]"
}

// tuneFlags are the flags of `tltune gemm|gemv|ger` beyond the recipe's.
type tuneFlags struct {
	recipe    kernels.Flags
	overrides *space.Overrides
	device    *string
	db        *string
	target    string
	tag       string
	resume    string
	strategy  string
	budget    int
	time      time.Duration
	seed      uint64
	top       int
	asJSON    bool
	hot       bool
	minBatch  int
	maxBatch  int
	ciTarget  float64
	perConfig time.Duration
	timeout   time.Duration
	quiet     bool
}

func (f *tuneFlags) register(fs *flag.FlagSet) {
	f.recipe.Register(fs)
	f.overrides = space.RegisterFlags(fs)
	f.device = deviceFlag(fs)
	f.db = dbFlag(fs)
	fs.StringVar(&f.target, "target", "", "force the code-generation target: "+strings.Join(target.Names(), ", ")+" (default: from the device)")
	fs.StringVar(&f.tag, "tag", "", "label the run (for regress --baseline TAG)")
	fs.StringVar(&f.resume, "resume", "", "continue an interrupted run (its id, or last): configurations it measured are not measured again")
	fs.StringVar(&f.strategy, "strategy", "gp", "search strategy: "+strings.Join(search.Names, ", "))
	fs.IntVar(&f.budget, "budget", 48, "most configurations to evaluate (0: every candidate)")
	fs.DurationVar(&f.time, "time", 0, "stop proposing configurations after this long (0: no limit)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the inputs and of random choices (recorded)")
	fs.IntVar(&f.top, "top", 5, "configurations in the final table")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.BoolVar(&f.hot, "hot", false, "time with warm caches (one buffer set) instead of cold")
	fs.IntVar(&f.minBatch, "batch", 1, "smallest batch of a timed launch (the plan may make it larger to defeat the cache)")
	fs.IntVar(&f.maxBatch, "max-batch", 0, "largest batch of a timed launch (0: 512 on CPUs, 1<<20 on GPUs)")
	fs.Float64Var(&f.ciTarget, "ci", 0.01, "stop timing a configuration when the median's CI half-width is below this fraction")
	fs.DurationVar(&f.perConfig, "sample-time", time.Second, "most time spent timing one configuration")
	fs.DurationVar(&f.timeout, "config-timeout", 2*time.Minute, "a configuration compiling or running longer is recorded as timeout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
}

func tuneCmd(c *context, op kernels.Op, args []string) int {
	var f tuneFlags
	fs := c.flags()
	f.register(fs)
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	spec, err := f.recipe.Spec(op)
	if err != nil {
		return c.usageError("%v", err)
	}
	if err := f.check(); err != nil {
		return c.usageError("%v", err)
	}
	recipe, err := kernels.New(spec)
	if err != nil {
		return c.usageError("%v", err)
	}
	job, status := f.prepare(c, recipe)
	if job == nil {
		return status
	}
	defer job.close()
	return job.run(c)
}

// check rejects flag values no run can use.
func (f *tuneFlags) check() error {
	switch {
	case !containsString(search.Names, f.strategy):
		return fmt.Errorf("--strategy %q: use one of %s", f.strategy, strings.Join(search.Names, ", "))
	case f.budget < 0:
		return fmt.Errorf("--budget %d must be ≥ 0", f.budget)
	case f.time < 0 || f.perConfig <= 0 || f.timeout <= 0:
		return errors.New("--time, --sample-time and --config-timeout must be positive durations")
	case f.top < 1:
		return fmt.Errorf("--top %d must be ≥ 1", f.top)
	case f.minBatch < 1 || f.maxBatch < 0:
		return errors.New("--batch must be ≥ 1 and --max-batch ≥ 0")
	case !(f.ciTarget > 0 && f.ciTarget < 1):
		return fmt.Errorf("--ci %g must lie in (0, 1)", f.ciTarget)
	case f.target != "":
		if _, err := target.ByName(f.target); err != nil {
			return fmt.Errorf("--target: %v", err)
		}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tuneJob is everything one tuning run holds open.
type tuneJob struct {
	flags    *tuneFlags
	recipe   kernels.Recipe
	info     device.Info
	dev      device.Device
	store    *results.Store
	session  *bench.Session
	stored   results.Run
	tuner    *tuner.Tuner
	ceilings results.Ceilings
}

func (j *tuneJob) close() {
	if j.session != nil {
		j.session.Close()
	}
	if j.dev != nil {
		j.dev.Close()
	}
	if j.store != nil {
		j.store.Close()
	}
}

// prepare opens the device and the store, loads the device profile and
// the search space, and wires the tuner. On failure it has printed one line
// and returns the exit status.
func (f *tuneFlags) prepare(c *context, recipe kernels.Recipe) (*tuneJob, int) {
	j := &tuneJob{flags: f, recipe: recipe}
	fail := func(status int) (*tuneJob, int) { j.close(); return nil, status }
	d, err := openDevice(*f.device)
	if isReference(err) {
		return fail(c.usageError("the reference interpreter cannot be tuned; pick a device (tltune devices)"))
	}
	if err != nil {
		return fail(c.fail(err))
	}
	j.dev, j.info = d, d.Info()
	copts := compiler.Options{Target: f.target, Device: targetDevice(&j.info)}
	tgt := target.ForDevice(*copts.Device)
	if f.target != "" {
		tgt, _ = target.ByName(f.target) // checked with the flags
	}
	prof, err := deviceProfile(j.info, tgt.Name)
	if err != nil {
		return fail(c.fail(err))
	}
	sp, err := space.Load(configs.FS, "spaces", recipe.Spec().Op.String(), tgt.Name)
	if err == nil {
		err = f.overrides.Apply(sp)
	}
	if err != nil {
		return fail(c.usageError("%v", err))
	}
	if j.store, err = openStore(*f.db, true); err != nil {
		return fail(c.fail(err))
	}
	if err := j.beginRun(); err != nil {
		return fail(c.fail(err))
	}
	if j.session, err = bench.NewSession(d, recipe, bench.Options{Seed: f.seed, Goal: f.batchGoal(j.info, prof, recipe)}); err != nil {
		return fail(c.fail(fmt.Errorf("preparing the inputs on %s: %w", j.info.Name, err)))
	}
	j.tuner = j.newTuner(copts, prof, sp)
	return j, exitOK
}

// deviceProfile is the shipped profile of the device's family with the
// values the runtime reports put in place of the profile's, or a profile
// made from the runtime's report alone for an unknown device.
func deviceProfile(info device.Info, targetName string) (*profile.Profile, error) {
	set, err := profile.Shipped()
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{Name: info.Name, Target: profile.Target(targetName)}
	if shipped, ok := set.Lookup(info.Name); ok {
		copied := *shipped
		p = &copied
	}
	if p.Target != profile.Target(targetName) {
		// A forced target changes what the compiler emits, so the profile's
		// subgroup sizes and matrix shapes no longer apply.
		p = &profile.Profile{Name: info.Name, Target: profile.Target(targetName), CacheBytes: p.CacheBytes}
	}
	if len(p.SubgroupSizes) == 0 {
		p.SubgroupSizes = subgroupSizesOf(info, targetName)
	}
	if info.MaxWorkGroupSize > 0 {
		p.MaxWorkGroupSize = info.MaxWorkGroupSize
	}
	if info.LocalMemBytes > 0 {
		p.LocalMemoryBytes = int(info.LocalMemBytes)
	}
	p.CacheBytes = max(p.CacheBytes, int64(info.CacheBytes))
	return p, nil
}

// subgroupSizesOf are the subgroup sizes the target can use on the device.
func subgroupSizesOf(info device.Info, targetName string) []int {
	t, err := target.ByName(targetName)
	if err != nil || len(t.SubgroupSizes) == 0 {
		return []int{1}
	}
	if len(info.SubgroupSizes) == 0 {
		return t.SubgroupSizes
	}
	var both []int
	for _, s := range t.SubgroupSizes {
		if containsInt(info.SubgroupSizes, s) {
			both = append(both, s)
		}
	}
	return both
}

func containsInt(list []int, x int) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// batchGoal sizes the timed launches: several times the device cache per
// buffer rotation, capped so a CPU device finishes a launch in milliseconds.
func (f *tuneFlags) batchGoal(info device.Info, p *profile.Profile, r kernels.Recipe) measure.BatchGoal {
	maxBatch, memory := f.maxBatch, int64(info.GlobalMemBytes/4)
	if info.Type == "cpu" {
		// A CPU device reports the host's last-level cache, which may be
		// shared by many cores and hundreds of MiB; rotating over a quarter
		// of host memory would spend the run uploading buffers. 256 MiB of
		// sets still streams far more than any core's private caches.
		memory = min(memory, 256<<20)
		if maxBatch == 0 {
			maxBatch = 512
		}
	}
	if maxBatch == 0 {
		maxBatch = 1 << 20
	}
	return measure.BatchGoal{
		CacheBytes:  p.CacheBytes,
		MemoryBytes: memory,
		MinBatch:    f.minBatch,
		MaxBatch:    maxBatch,
		Hot:         f.hot,
	}
}

// beginRun starts a new run in the store, or reopens the interrupted one
// --resume names.
func (j *tuneJob) beginRun() error {
	ctx := stdctx.Background()
	env := environment(j.info)
	j.ceilings, _ = j.store.Ceilings(ctx, env) // zero when tltune peak never ran here
	var err error
	if j.flags.resume == "" {
		j.stored, err = j.store.BeginRun(ctx, env, results.Run{
			CommandLine: strings.Join(os.Args, " "), Tag: j.flags.tag, Op: j.recipe.Spec().Op.String()})
		return err
	}
	prev, err := j.store.ResolveRun(ctx, j.flags.resume)
	if err != nil {
		return fmt.Errorf("--resume %s: %w", j.flags.resume, err)
	}
	if prev.Op != j.recipe.Spec().Op.String() || prev.Env.Device != env.Device {
		return fmt.Errorf("--resume %s: run %d tuned %s on %s, not %s on %s", j.flags.resume, prev.ID, prev.Op, prev.Env.Device, j.recipe.Spec().Op, env.Device)
	}
	j.stored, err = j.store.ResumeRun(ctx, prev.ID)
	return err
}

// newTuner wires the tuner to the recipe, compiler, device session and store.
func (j *tuneJob) newTuner(copts compiler.Options, prof *profile.Profile, sp *space.Space) *tuner.Tuner {
	f, spec := j.flags, j.recipe.Spec()
	key := spec.TableKey(j.info.Name)
	return &tuner.Tuner{
		Problem:  prune.Problem{Op: key.Op, Dtype: key.Dtype, Acc: key.Acc, M: key.M, N: key.N, K: key.K, Batch: j.session.Plan().Batch},
		Device:   prof,
		Space:    sp,
		Generate: j.recipe.Source,
		Compiler: j.compiler(copts),
		Measurer: &deviceMeasurer{session: j.session, protocol: measure.Protocol{Target: f.ciTarget, MaxTime: f.perConfig}},
		Recorder: &storeRecorder{store: j.store, runID: j.stored.ID, recipe: j.recipe, key: key,
			layout: layoutName(spec.Layout), seed: f.seed, batch: j.session.Plan().Batch},
		Options: tuner.Options{
			Strategy: f.strategy, Seed: f.seed, Budget: f.budget, Time: f.time,
			ConfigTimeout: f.timeout, WarmStart: j.warmStart(key),
		},
	}
}

// compiler builds programs in the tuner's compile pool on GPUs and leaves
// it to the device worker on CPU devices (see kernelCompiler).
func (j *tuneJob) compiler(copts compiler.Options) kernelCompiler {
	if j.info.Type == "cpu" {
		return kernelCompiler{opts: copts}
	}
	return kernelCompiler{opts: copts, session: j.session}
}

func layoutName(l kernels.Layout) string {
	if l == kernels.Group {
		return "group"
	}
	return "strided"
}

// warmStart is the best configuration of the nearest shape tuned before on
// this device, if the store has one: evaluated first, it gives the search a
// good incumbent at once.
func (j *tuneJob) warmStart(key tuning.Key) []tuning.Params {
	table, err := j.store.TuningTable(stdctx.Background(), results.Filter{Device: j.info.Name, Op: key.Op})
	if err != nil {
		return nil
	}
	p, ok := table.Lookup(key).Params()
	if !ok {
		return nil
	}
	return []tuning.Params{p}
}

// run tunes until the budget, time or candidates run out, or the user
// interrupts (the run is then recorded as interrupted and can be resumed),
// and prints the report.
func (j *tuneJob) run(c *context) int {
	ctx, stop := signal.NotifyContext(stdctx.Background(), os.Interrupt)
	defer stop()
	bar := newProgress(c.stderr, j.flags.quiet, j.tuner.Options.Budget)
	j.tuner.Options.Progress = bar.update
	rep, err := j.tuner.Run(ctx)
	bar.finish()
	status := results.Done
	switch {
	case errors.Is(err, stdctx.Canceled):
		status = results.Interrupted
	case err != nil:
		status = results.Failed
	}
	if ferr := j.store.FinishRun(stdctx.Background(), j.stored.ID, status, time.Time{}); ferr != nil && err == nil {
		err = ferr
	}
	if rep != nil {
		if werr := j.report(c, rep); werr != nil && err == nil {
			err = werr
		}
	}
	switch {
	case status == results.Interrupted:
		fmt.Fprintf(c.stderr, "tltune %s: interrupted; continue with --resume %d --db %s\n", c.cmd.name, j.stored.ID, strconv.Quote(j.store.Path()))
		return exitFail
	case err != nil:
		return c.fail(err)
	case rep.Best() == nil:
		fmt.Fprintf(c.stderr, "tltune %s: no configuration ran correctly; the outcome counts above say why\n", c.cmd.name)
		return exitFail
	}
	return exitOK
}
