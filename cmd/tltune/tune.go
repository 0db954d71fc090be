package main

import (
	stdctx "context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"tltune/compiler"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/configs"
	"tltune/device"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/results"
	"tltune/tuner"
	"tltune/tuner/bench"
	"tltune/tuner/bincache"
	"tltune/tuner/measure"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/search"
	"tltune/tuner/space"
	"tltune/tuner/suite"
	"tltune/tuner/worker"
)

func init() {
	for _, op := range []kernels.Op{kernels.GEMMOp, kernels.GEMVOp, kernels.GEROp} {
		register(&command{
			name:    op.String(),
			summary: fmt.Sprintf("tune a batched %s shape on a device: search, verify, time, store, report", strings.ToUpper(op.String())),
			usage:   tuneUsage(op),
			more:    "configurations are written as (unset knobs left out):\n" + tuning.Legend(op.String()),
			run:     func(c *context, args []string) int { return tuneCmd(c, op, args) },
		})
	}
}

func tuneUsage(op kernels.Op) string {
	shape, precision := "--m M --n N --k K", " [--precision exact|tf32]"
	if op != kernels.GEMMOp {
		shape, precision = "--m M --n N", ""
	}
	return shape + " [--dtype T]" + precision + " [--device D] [--strategy gp|random|exhaustive] [--budget N] [--time D] [--db PATH] [--tag NAME] [--resume RUN] [--json] [space flags]"
}

// newRecipe makes the recipe of a problem to tune: the tuning process
// generates its verification inputs and computes their reference once per
// problem (tests count that through it).
var newRecipe = kernels.New

// tuneFlags are the flags of `tltune gemm|gemv|ger` beyond the recipe's.
type tuneFlags struct {
	recipe    kernels.Flags
	overrides *space.Overrides
	device    *string
	db        *string
	target    string
	tf32      *tf32Ask // set when a problem of the run has precision tf32
	tag       string
	resume    string
	campaign  string // sweep --campaign: the name every shard of a campaign shares
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

	kernelsPerProgram int
	buildProcs        int
	noCache           bool
	noRace            bool
	ptx               ptxMode
}

// tf32Ask says what asked for precision tf32 and what to do instead, for
// the refusal on a target without a tf32 engine.
type tf32Ask struct{ by, instead string }

func (f *tuneFlags) register(fs *flag.FlagSet, op kernels.Op) {
	f.recipe.Register(fs, op)
	f.registerTuning(fs, op.String())
	fs.IntVar(&f.top, "top", 5, "configurations in the final table")
}

// registerTuning defines every flag but the recipe's: those `tltune sweep`
// shares.
func (f *tuneFlags) registerTuning(fs *flag.FlagSet, op string) {
	f.overrides = space.RegisterFlags(fs, op)
	f.device = deviceFlag(fs)
	f.db = dbFlag(fs)
	fs.StringVar(&f.target, "target", "", "force the code-generation target: "+strings.Join(target.Names(), ", ")+" (default: from the device)")
	fs.StringVar(&f.tag, "tag", "", "label the run (for regress --baseline TAG)")
	fs.StringVar(&f.resume, "resume", "", "continue an interrupted or killed run (its id, or last): configurations it measured are not measured again; a run whose tltune process still runs is refused")
	fs.StringVar(&f.strategy, "strategy", "gp", "search strategy: "+strings.Join(search.Names, ", "))
	fs.IntVar(&f.budget, "budget", suite.DefaultBudget, "most configurations to evaluate (0: every candidate)")
	fs.DurationVar(&f.time, "time", 0, "stop proposing configurations after this long (0: no limit)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the inputs and of random choices (recorded); a gp run with the seed of an earlier one retraces its proposals while they stay near the best, so the binary cache holds them")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.BoolVar(&f.hot, "hot", false, "time with warm caches (one buffer set) instead of cold")
	fs.IntVar(&f.minBatch, "batch", 1, "smallest batch of a timed launch (the plan may make it larger to defeat the cache)")
	fs.IntVar(&f.maxBatch, "max-batch", 0, "largest batch of a timed launch (0: 512 on CPUs, 1<<20 on GPUs)")
	fs.Float64Var(&f.ciTarget, "ci", 0.01, "stop timing a configuration when the median's CI half-width is below this fraction")
	fs.DurationVar(&f.perConfig, "sample-time", time.Second, "most time spent timing one configuration")
	fs.IntVar(&f.kernelsPerProgram, "kernels-per-program", 1, "configurations compiled into one program, built by the driver at once (1: a program each; NVIDIA's OpenCL and PoCL build N kernels in one program no faster than in N programs, which builder processes build side by side)")
	fs.IntVar(&f.buildProcs, "build-procs", autoBuildProcs, "builder processes beside the worker that build programs side by side, as a driver builds one program at a time per process (-1: "+autoBuildProcsDoc+")")
	fs.BoolVar(&f.noRace, "no-race", false, "time every configuration in full, once: no racing against the best so far (by default one clearly slower stops after a few samples and the 3 fastest are re-timed in full at the end)")
	fs.Var(&f.ptx, "ptx", "build the kernels tltune can write as PTX (GEMV, GER, f16, bf16 and f32 GEMMs) from that PTX, without NVIDIA's OpenCL C compiler, the others from OpenCL C; by default on NVIDIA devices (the nvidia target), where it builds in a third of the time and its kernels time level with NVVM's; --ptx=false builds everything from OpenCL C")
	fs.BoolVar(&f.noCache, "no-cache", false, "build every program, without the binary cache in $XDG_CACHE_HOME/tltune (tltune cache stats|clear)")
	fs.DurationVar(&f.timeout, "config-timeout", 2*time.Minute, "a configuration whose build, verification or timing gets no answer for this long is recorded as timeout (its worker process is killed)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
}

func tuneCmd(c *context, op kernels.Op, args []string) int {
	var f tuneFlags
	fs := c.flags()
	f.register(fs, op)
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
	if spec.Precision == speak.TF32 {
		f.tf32 = &tf32Ask{by: "--precision " + speak.TF32, instead: "tune it with --precision " + speak.ExactPrecision}
	}
	recipe, err := newRecipe(spec)
	if err != nil {
		return c.usageError("%v", err)
	}
	if err := fitsHost(recipe); err != nil {
		return c.fail(err)
	}
	run, status := f.open(c, op.String(), []kernels.Op{op}, []kernels.Recipe{recipe})
	if run == nil {
		return status
	}
	defer run.close()
	return run.tuneOne(c, recipe)
}

// check rejects flag values no run can use.
func (f *tuneFlags) check() error {
	switch {
	case !slices.Contains(search.Names, f.strategy):
		return fmt.Errorf("--strategy %q: use one of %s", f.strategy, strings.Join(search.Names, ", "))
	case f.budget < 0:
		return fmt.Errorf("--budget %d must be ≥ 0", f.budget)
	case f.time < 0 || f.perConfig <= 0 || f.timeout <= 0:
		return errors.New("--time, --sample-time and --config-timeout must be positive durations")
	case f.kernelsPerProgram < 1:
		return fmt.Errorf("--kernels-per-program %d must be ≥ 1", f.kernelsPerProgram)
	case f.buildProcs < autoBuildProcs:
		return fmt.Errorf("--build-procs %d must be ≥ 0, or -1 for %s", f.buildProcs, autoBuildProcsDoc)
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

// tuneRun is what a tuning run holds open across the shapes it tunes:
// the worker process that has the device, the device's profile and search
// spaces, the store and the stored run. `tltune gemm` tunes one shape in a
// run, `tltune sweep` many.
type tuneRun struct {
	flags    *tuneFlags
	info     device.Info
	worker   *worker.Client
	copts    compiler.Options // of the exact problems
	prof     *profile.Profile
	tgt      *target.Target // the code-generation target
	tf32     *compileSetup  // of the tf32 problems (enableTF32); nil when the run has none
	spaces   map[kernels.Op]*space.Space
	store    *results.Store
	stored   results.Run
	bins     *bincache.Cache // the binary cache; nil with --no-cache
	ceilings results.Ceilings
	follower bool // records into another tuneRun's store and run (a sweep's second device)
}

func (r *tuneRun) close() {
	if r.worker != nil {
		r.worker.Close()
	}
	if r.store != nil && !r.follower {
		r.store.Close()
	}
}

// open starts the worker with the device and opens the store, loads the
// device profile and the search spaces of ops, and begins the run (op is
// what the run records: "gemm", or "sweep"), or reopens the one --resume
// names if it is a run of problems on this device. On failure it has
// printed one line and returns the exit status.
func (f *tuneFlags) open(c *context, op string, ops []kernels.Op, recipes []kernels.Recipe) (*tuneRun, int) {
	info, err := device.Select(enumerateDevices(), *f.device)
	if err != nil {
		return nil, deviceError(c, err)
	}
	runs, status := f.openOn(c, op, ops, recipes, []*device.Info{info})
	if runs == nil {
		return nil, status
	}
	return runs[0], exitOK
}

// deviceError prints why no device could be selected and returns the
// exit status.
func deviceError(c *context, err error) int {
	if isReference(err) {
		return c.usageError("the reference interpreter cannot be tuned; pick a device (tltune devices)")
	}
	return c.fail(err)
}

// openOn opens a run on every device of infos, as open does for one: the
// first device's opens the store and begins the run, the others record
// into the same run (a sweep over several devices of one model).
func (f *tuneFlags) openOn(c *context, op string, ops []kernels.Op, recipes []kernels.Recipe, infos []*device.Info) ([]*tuneRun, int) {
	var runs []*tuneRun
	fail := func(status int) ([]*tuneRun, int) {
		for _, r := range runs {
			r.close()
		}
		return nil, status
	}
	for _, info := range infos {
		r := &tuneRun{flags: f, spaces: map[kernels.Op]*space.Space{}, follower: len(runs) > 0}
		runs = append(runs, r)
		if status := r.prepare(c, info, ops, recipes); status != exitOK {
			return fail(status)
		}
	}
	lead := runs[0]
	var err error
	if lead.store, err = openStore(*f.db, true); err != nil {
		return fail(c.fail(err))
	}
	if err := lead.beginRun(op, problemsOf(recipes)); err != nil {
		return fail(c.fail(err))
	}
	for _, r := range runs[1:] {
		r.store, r.stored, r.ceilings = lead.store, lead.stored, lead.ceilings
	}
	return runs, exitOK
}

// problemsOf returns the problems of recipes.
func problemsOf(recipes []kernels.Recipe) []speak.Problem {
	ps := make([]speak.Problem, len(recipes))
	for i, r := range recipes {
		ps[i] = r.Spec().Problem()
	}
	return ps
}

// autoBuildProcs asks for buildProcs' choice.
const (
	autoBuildProcs    = -1
	autoBuildProcsDoc = "half the CPUs, at most 8, for a GPU; none for a CPU device, whose builds take the cores it runs on"
)

// buildProcs is how many builder processes a worker for info starts.
func buildProcs(flag int, info *device.Info) int {
	switch {
	case flag != autoBuildProcs:
		return flag
	case info.Type == "cpu":
		return 0
	}
	return min(runtime.NumCPU()/2, 8)
}

// prepare starts the worker with the device, loads its profile and the
// search spaces of ops; on failure it has printed one line and returns the
// exit status. The worker prestarts its builders unless the run retraces
// earlier ones of its recipes (see retraces).
func (r *tuneRun) prepare(c *context, info *device.Info, ops []kernels.Op, recipes []kernels.Recipe) int {
	f := r.flags
	cache, err := f.cacheDir()
	if err != nil {
		return c.fail(err)
	}
	if cache != "" {
		if r.bins, err = bincache.Open(cache, 0); err != nil {
			return c.fail(err)
		}
	}
	// The enumeration's properties, until the worker reports its own: the
	// cache's keys need the device's name, driver and runtime.
	r.info, r.copts = *info, compiler.Options{Target: f.target}
	r.worker = worker.NewClient(workerLauncher)
	r.worker.Timeout = f.timeout
	r.worker.Builders = buildProcs(f.buildProcs, info)
	r.worker.Prestart = r.worker.Builders > 0 && !r.retraces(recipes)
	if r.info, err = r.worker.Open(stdctx.Background(), info.ID, cache); err != nil {
		return c.fail(err)
	}
	r.copts.Device = targetDevice(&r.info)
	tgt := target.ForDevice(*r.copts.Device)
	if f.target != "" {
		tgt, _ = target.ByName(f.target) // checked with the flags
		// Every configuration would fail to build: refuse the run before
		// it records one. (A Level Zero device lists its
		// driver's extensions, not OpenCL's: it is not held to them.)
		if missing := tgt.Lacks(*r.copts.Device); missing != "" && r.info.Runtime != device.LevelZero {
			return c.usageError("--target %s: %s has no %s, which the %s target's code needs; leave out --target, or choose --target emulated (the same layouts through local memory)",
				f.target, r.info.Name, missing, tgt.Name)
		}
	}
	r.tgt = tgt
	var ok bool
	if r.copts.PTX, ok = f.ptx.decide(tgt.Name == "nvidia" && r.info.IsNVIDIA()); !ok {
		return c.usageError("--ptx: %s (the %s target) builds no PTX that tltune writes, only NVIDIA's OpenCL does; leave out --ptx", r.info.Name, tgt.Name)
	}
	if r.prof, err = deviceProfile(r.info, tgt); err != nil {
		return c.fail(err)
	}
	if f.tf32 != nil {
		if err := r.enableTF32(tgt); err != nil {
			return c.usageError("%s: %v; %s", f.tf32.by, err, f.tf32.instead)
		}
	}
	for _, o := range ops {
		sp, err := space.Load(configs.FS, "spaces", o.String(), tgt.Name)
		if err == nil {
			err = f.overrides.Apply(sp)
		}
		if err != nil {
			return c.usageError("%v", err)
		}
		r.spaces[o] = sp
	}
	return exitOK
}

// enableTF32 prepares the run's tf32 problems: their compiles round f32
// gemm inputs to tf32 on the target's matrix engine, and their device
// profile lists the engine's shape, so that the pruner keeps f32
// coopmatrices to grids of it (any other shape would compute in exact FMAs
// under the tf32 name). The run's exact problems compile and prune as
// before. It fails on a target without a tf32 engine.
func (r *tuneRun) enableTF32(tgt *target.Target) error {
	if err := tgt.EnableTF32(); err != nil {
		return err
	}
	tf32 := compileSetup{copts: r.copts, prof: new(profile.Profile)}
	tf32.copts.Precision = speak.TF32
	*tf32.prof = *r.prof
	for _, s := range tgt.MMA {
		if s.In == "f32" {
			tf32.prof.Matrix = append(slices.Clip(tf32.prof.Matrix), profile.Matrix{Kind: "mma", Dtypes: []string{"f32"},
				SubgroupSize: s.SubgroupSize, M: []int{s.M}, N: s.N, K: s.K})
		}
	}
	r.tf32 = &tf32
	return nil
}

// compileSetup is how a run compiles and prunes the problems of one
// precision.
type compileSetup struct {
	copts compiler.Options
	prof  *profile.Profile
}

// setupFor is the compile setup of a problem of the given precision.
func (r *tuneRun) setupFor(precision string) compileSetup {
	if precision == speak.TF32 && r.tf32 != nil {
		return *r.tf32
	}
	return compileSetup{copts: r.copts, prof: r.prof}
}

// shapeJob is one shape tuned inside a run: the recipe, its host
// reference, its inputs on the device (the worker's session) and the tuner
// wired to them.
type shapeJob struct {
	run    *tuneRun
	recipe kernels.Recipe
	want   *kernels.Expected
	plan   measure.BatchPlan
	setup  time.Duration // computing the reference; the session is prepared in the tuner's Setup
	tuner  *tuner.Tuner
	builds worker.Stats // the worker's builds during the search
}

// newShape computes the recipe's reference and wires a tuner that
// prepares its inputs on the device (the worker's session) while it walks
// the space, then searches sp with opts and records into the run.
func (r *tuneRun) newShape(recipe kernels.Recipe, sp *space.Space, opts tuner.Options) (*shapeJob, error) {
	if err := deviceSupports(r.info, r.tgt, recipe.Spec()); err != nil {
		return nil, err
	}
	start := time.Now()
	want, err := bench.Reference(recipe, bench.Options{Seed: r.flags.seed})
	if err != nil {
		return nil, err
	}
	session := worker.Session{Spec: recipe.Spec(), Seed: r.flags.seed, Goal: r.flags.batchGoal(r.info, r.prof, recipe)}
	plan, err := bench.Plan(recipe, session.Goal)
	if err != nil {
		return nil, fmt.Errorf("sizing the batch of %s on %s: %w", recipe.Name(), r.info.Name, err)
	}
	opts.Cheap, opts.Path = r.cheapConfigs(recipe), r.searchPath(recipe)
	j := &shapeJob{run: r, recipe: recipe, want: want, plan: plan, setup: time.Since(start)}
	// The worker client limits each of a configuration's driver requests
	// (r.worker.Timeout): starting a new worker after a crash is no
	// configuration's time. tltune's own compiler cannot be interrupted.
	opts.ConfigTimeout = 0
	// One configuration in flight for each build slot (the worker's and its
	// builders'), or enough for one program to build while the next is
	// being filled. No more: configurations in flight are proposed before
	// their results are in, so each one more is proposed with less to go on
	// (tltune replay --strategy gp --tolerance 3% over random samples an
	// H100 measured, 256³ f16 and 64x64x32 f32: 50.8 and 43.1 evaluations
	// with 11 in flight, as 8 builders give, 58.4 and 48.9 with the 18
	// that GOMAXPROCS gave on 16 cores; the tuner keeps two more in flight
	// than it has compile workers).
	opts.CompileWorkers = max(r.worker.Builders+1, 2*r.flags.kernelsPerProgram)
	j.tuner = j.newTuner(sp, opts)
	j.tuner.Setup = func(ctx stdctx.Context) error { return j.startSession(ctx, session) }
	return j, nil
}

// fitsHost refuses a shape whose verification inputs and reference would
// take more than the host can spare (hostMemory): generating them would
// kill the process with Go's out-of-memory dump.
func fitsHost(recipe kernels.Recipe) error {
	need := bench.ReferenceMemory(recipe, bench.Options{})
	if need <= hostMemory {
		return nil
	}
	return inputError{fmt.Errorf("%s needs %s of host memory for its verification inputs and reference, more than the %s this host can spare (half its memory); tune a smaller shape",
		recipe.Name(), speak.Bytes(uint64(need)), speak.Bytes(uint64(hostMemory)))}
}

// startSession prepares the shape's inputs on the device: the worker's
// session, whose batch plan must be the one the search was sized for.
func (j *shapeJob) startSession(ctx stdctx.Context, session worker.Session) error {
	r, name := j.run, j.recipe.Name()
	plan, err := r.worker.Session(ctx, session)
	if err != nil {
		return fmt.Errorf("preparing the inputs of %s on %s: %w", name, r.info.Name, err)
	}
	if plan != j.plan {
		return fmt.Errorf("preparing the inputs of %s on %s: the worker planned a batch of %d in %d set(s), tltune %d in %d (the worker is another build: rebuild tltune)",
			name, r.info.Name, plan.Batch, plan.Sets, j.plan.Batch, j.plan.Sets)
	}
	return nil
}

// cacheDir is the binary cache's directory, or "" with --no-cache.
func (f *tuneFlags) cacheDir() (string, error) {
	if f.noCache {
		return "", nil
	}
	return bincache.DefaultDir()
}

// deviceSupports says why the device cannot run a recipe's element types
// with the target's code: every configuration would fail to build, so the
// shape is refused up front. Double precision needs cl_khr_fp64. Half
// precision needs cl_khr_fp16 only where the target computes in it (intel);
// elsewhere it is stored as half and computed in f32.
func deviceSupports(info device.Info, t *target.Target, s kernels.Spec) error {
	for _, dt := range []kernels.DType{s.DType, s.Acc} {
		if (dt == kernels.F64 || dt == kernels.C64) && !info.FP64 {
			return fmt.Errorf("%s has no double precision (cl_khr_fp64), which %s needs: choose another --dtype/--acc or device", info.Name, dt)
		}
		if dt == kernels.F16 && t.NativeF16 && !info.FP16 {
			return fmt.Errorf("%s has no half precision (cl_khr_fp16), in which the %s target computes %s: leave out --target (the target chosen from the device computes it in f32), or choose --target generic", info.Name, t.Name, dt)
		}
	}
	return nil
}

// searchOptions are the tuner's options from the flags, with the best of
// the nearest shape tuned before as a warm start.
func (r *tuneRun) searchOptions(spec kernels.Spec) tuner.Options {
	f := r.flags
	return tuner.Options{Strategy: f.strategy, Seed: f.seed, Budget: f.budget, Time: f.time,
		ConfigTimeout: f.timeout, WarmStart: r.warmStart(spec.TableKey(r.info.Name)), Race: !f.noRace}
}

// deviceProfile is the shipped profile of the device's family with the
// values the runtime reports put in place of the profile's, or a profile
// made from the runtime's report alone for an unknown device; either way
// within the limits of the target t.
func deviceProfile(info device.Info, t *target.Target) (*profile.Profile, error) {
	set, err := profile.Shipped()
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{Name: info.Name, Target: profile.Target(t.Name)}
	if shipped, ok := set.Lookup(info.Name); ok {
		copied := *shipped
		p = &copied
	}
	if p.Target != profile.Target(t.Name) {
		// A forced target changes what the compiler emits, so the profile's
		// subgroup sizes and matrix shapes no longer apply.
		p = &profile.Profile{Name: info.Name, Target: profile.Target(t.Name), CacheBytes: p.CacheBytes}
	}
	if len(p.SubgroupSizes) == 0 {
		p.SubgroupSizes = subgroupSizesOf(info, t)
	}
	if info.MaxWorkGroupSize > 0 {
		p.MaxWorkGroupSize = info.MaxWorkGroupSize
	}
	if info.LocalMemBytes > 0 {
		p.LocalMemoryBytes = int(info.LocalMemBytes)
	}
	// The lowering refuses what exceeds the target's own limits, which a
	// forced target does not take from the device.
	p.MaxWorkGroupSize = atMost(p.MaxWorkGroupSize, t.MaxWorkGroupSize)
	p.LocalMemoryBytes = atMost(p.LocalMemoryBytes, t.LocalMemBytes)
	p.OneSubgroupPerGroup = t.OneSubgroupPerGroup
	p.CacheBytes = max(p.CacheBytes, int64(info.CacheBytes))
	p.ComputeUnits = info.ComputeUnits
	return p, nil
}

// atMost is v capped at limit; a limit or v of 0 is unknown and does not
// cap.
func atMost(v, limit int) int {
	if limit > 0 && (v == 0 || limit < v) {
		return limit
	}
	return v
}

// subgroupSizesOf are the subgroup sizes the target can use on the device.
func subgroupSizesOf(info device.Info, t *target.Target) []int {
	if len(t.SubgroupSizes) == 0 {
		return []int{1}
	}
	if len(info.SubgroupSizes) == 0 {
		return t.SubgroupSizes
	}
	var both []int
	for _, s := range t.SubgroupSizes {
		if slices.Contains(info.SubgroupSizes, s) {
			both = append(both, s)
		}
	}
	return both
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

// loadCeilings reads the device's ceilings from the store, measuring and
// storing them first when tltune peak never ran in this environment: the
// report gives every configuration's bandwidth as a share of the measured
// copy bandwidth.
func (r *tuneRun) loadCeilings(env results.Environment) error {
	c, err := r.store.Ceilings(stdctx.Background(), env)
	if err == nil && c.CopyGBS > 0 {
		r.ceilings = c
		return nil
	}
	p, err := r.worker.Peak(stdctx.Background(), device.PeakOptions{})
	if err != nil {
		return fmt.Errorf("measuring the device's ceilings (tltune peak): %w", err)
	}
	r.ceilings, err = storeCeilings(r.store, r.info, p)
	return err
}

// beginRun starts a new run of op in the store, or reopens the
// interrupted one --resume names.
func (r *tuneRun) beginRun(op string, problems []speak.Problem) error {
	ctx := stdctx.Background()
	env := environment(r.info)
	if err := r.loadCeilings(env); err != nil {
		return err
	}
	prev, named, err := r.previousRun(ctx)
	if err != nil {
		return err
	}
	if named == "" {
		r.stored, err = r.store.BeginRun(ctx, env, results.Run{UUID: campaignUUID(r.flags.campaign),
			CommandLine: strings.Join(os.Args, " "), Tag: r.flags.tag, Op: op})
		return err
	}
	if err := r.checkResumable(ctx, prev, named, op, env, problems); err != nil {
		return err
	}
	r.stored, err = r.store.ResumeRun(ctx, prev.ID)
	var live *results.LiveRunError
	if errors.As(err, &live) {
		return liveRunRefusal(named, live)
	}
	return err
}

// liveRunRefusal says that the run named is still being tuned, by which
// process, and how to continue it: bad input, as the refusals of
// checkResumable are (a second process would record into the run, and the
// first to end would change its status under the other).
func liveRunRefusal(named string, live *results.LiveRunError) error {
	stop := fmt.Sprintf("kill %d", live.Owner.PID)
	if live.Owner.Host != results.ThisProcess().Host {
		stop += " on " + live.Owner.Host
	}
	return inputError{fmt.Errorf("%s: run %d is still being tuned by process %s (last heartbeat %v ago); wait for it to finish or stop it (%s), then resume",
		named, live.ID, live.Owner, live.HeartbeatAge(), stop)}
}

// checkResumable refuses to continue a run that finished, or that tuned
// something else (another op, device, driver or problem): its measurements
// would mix with this invocation's. (ResumeRun refuses a run that another
// process is tuning still.)
func (r *tuneRun) checkResumable(ctx stdctx.Context, prev results.Run, named, op string, env results.Environment, problems []speak.Problem) error {
	refuse := func(format string, a ...any) error {
		// Asked to continue what cannot be continued: bad input.
		return inputError{fmt.Errorf("%s: run %d "+format, append([]any{named, prev.ID}, a...)...)}
	}
	switch {
	case prev.Status == results.Done && r.flags.resume != "":
		// (A campaign's task that Slurm starts again finds its part done
		// and goes over it again, which is its business.)
		return refuse("finished; tune again without --resume to start a new run")
	case prev.Op != op:
		return refuse("is a %s run, not %s", prev.Op, op)
	case prev.Env.Device != env.Device || prev.Env.Driver != env.Driver:
		return refuse("ran on %s (driver %s), not %s (driver %s)", prev.Env.Device, prev.Env.Driver, env.Device, env.Driver)
	}
	stored, err := r.store.RunProblems(ctx, prev.ID)
	if err != nil {
		return err
	}
	for _, p := range stored {
		if !slices.Contains(problems, p) {
			return refuse("tuned %s, which this command does not", p)
		}
	}
	return nil
}

// previousRun finds the run to continue: the one --resume names, or this
// store's part of the --campaign's run (a task of a job array that Slurm
// started again resumes it). named is the flag that named it, or empty
// when there is none.
func (r *tuneRun) previousRun(ctx stdctx.Context) (prev results.Run, named string, err error) {
	switch f := r.flags; {
	case f.resume != "":
		named = "--resume " + f.resume
		if prev, err = r.store.ResolveRun(ctx, f.resume); err != nil {
			err = fmt.Errorf("%s: %w", named, err)
		}
	case f.campaign != "":
		prev, err = r.store.RunByUUID(ctx, campaignUUID(f.campaign))
		switch {
		case errors.Is(err, results.ErrNoRun):
			err = nil
		case err == nil:
			named = "--campaign " + f.campaign
		}
	}
	return prev, named, err
}

// campaignUUID is the run UUID every shard of the named campaign records,
// so that merging the shards makes one run; no campaign: a new UUID.
func campaignUUID(campaign string) string {
	if campaign == "" {
		return ""
	}
	return results.NameUUID("campaign " + campaign)
}

// newTuner wires the tuner to the recipe, compiler, device session and store.
func (j *shapeJob) newTuner(sp *space.Space, opts tuner.Options) *tuner.Tuner {
	r, spec := j.run, j.recipe.Spec()
	key := spec.TableKey(r.info.Name)
	batch := j.plan.Batch
	setup := r.setupFor(spec.Precision)
	return &tuner.Tuner{
		Problem: prune.Problem{Op: key.Op, Dtype: key.Dtype, Acc: key.Acc, M: key.M, N: key.N, K: key.K, Batch: batch,
			Trans: key.Trans, Atomic: key.Atomic},
		Device:   setup.prof,
		Space:    sp,
		Generate: j.recipe.Source,
		Compiler: newBatcher(r, setup.copts),
		Measurer: &deviceMeasurer{want: j.want, protocol: measure.Protocol{Target: r.flags.ciTarget, MaxTime: r.flags.perConfig}},
		Recorder: &storeRecorder{store: r.store, runID: r.stored.ID, device: r.info.ID, recipe: j.recipe, problem: spec.Problem(),
			seed: r.flags.seed, batch: batch, tol: j.want.Tolerance()},
		Options: opts,
	}
}

// warmStart is the best configuration of the nearest shape tuned before on
// this device, if the store has one: evaluated first, it gives the search a
// good incumbent at once.
func (r *tuneRun) warmStart(key tuning.Key) []tuning.Params {
	table, err := r.store.TuningTable(stdctx.Background(), results.Filter{Device: results.ThisDevice(r.info.Name), Op: key.Op})
	if err != nil {
		return nil
	}
	p, ok := table.Lookup(key).Params()
	if !ok {
		return nil
	}
	return []tuning.Params{p}
}

// tuneOne tunes one recipe in the run until the budget, time or
// candidates run out, or the user interrupts (the run is then recorded as
// interrupted and can be resumed), and prints the report.
func (r *tuneRun) tuneOne(c *context, recipe kernels.Recipe) int {
	ctx, stop := interruptible()
	defer stop()
	spec := recipe.Spec()
	bar := newProgress(c.stderr, r.flags.quiet, r.flags.budget, recipe.Name(), nil)
	j, err := r.newShape(recipe, r.spaces[spec.Op], r.searchOptions(spec))
	if err != nil {
		bar.finish()
		r.finish(err)
		return c.fail(err)
	}
	rep, err := j.tune(ctx, bar)
	status, err := r.finish(err)
	if rep != nil {
		if werr := j.report(c, rep); werr != nil && err == nil {
			err = werr
		}
	}
	switch {
	case status == results.Interrupted:
		return r.interrupted(c)
	case err != nil:
		return c.fail(err)
	case rep.Best() == nil:
		if why, ok := nothingToTune(rep, r.flags.overrides.Given(), c.cmd.name); ok {
			fmt.Fprintf(c.stderr, "tltune %s: %s\n", c.cmd.name, why)
			return exitUsage
		}
		last, _, _ := strings.Cut(whyNothingRan(rep), "\n") // a build log would run on
		fmt.Fprintf(c.stderr, "tltune %s: no configuration ran correctly (the outcome counts are above); the last: %s\n", c.cmd.name, last)
		return exitRuntime
	}
	return exitOK
}

// nothingToTune says, naming the fix, why a run had no configuration to
// evaluate: the problem and the space left none, or --time ran out before
// the first, which is the input's doing, not the device's. ok is false
// where there were candidates and time to evaluate one.
func nothingToTune(rep *tuner.Report, spaceFlags bool, cmd string) (why string, ok bool) {
	if outOfTime(rep) {
		return fmt.Sprintf("%s; give a longer --time or leave it out (see 'tltune %s -h')", whyNothingRan(rep), cmd), true
	}
	if rep.Candidates > 0 || rep.Evaluations > 0 {
		return "", false
	}
	fix := fmt.Sprintf("give candidate values the device can run with the space flags (see 'tltune %s -h')", cmd)
	if spaceFlags {
		fix = fmt.Sprintf("widen the space flags or leave them out (see 'tltune %s -h')", cmd)
	}
	return whyNothingRan(rep) + "; " + fix, true
}

// tune runs the shape's tuner, reporting to bar (which it finishes), and
// stores where its time went, the reference's computation included.
func (j *shapeJob) tune(ctx stdctx.Context, bar *progress) (*tuner.Report, error) {
	j.tuner.Options.Progress = bar.update
	before := j.run.worker.Stats()
	rep, err := j.tuner.Run(ctx)
	bar.finish()
	if rep == nil {
		return nil, err
	}
	after := j.run.worker.Stats()
	j.builds = worker.Stats{Builds: after.Builds - before.Builds, CachedBuilds: after.CachedBuilds - before.CachedBuilds,
		BuilderBuilds: after.BuilderBuilds - before.BuilderBuilds, BuilderProcs: after.BuilderProcs}
	rep.Split.Add(tuner.PhaseSetup, j.setup)
	// The notes are hints for later runs: failing to write them fails nothing.
	_ = j.run.noteBuilt(j.recipe.Spec(), rep)
	_ = j.run.notePath(j.recipe.Spec(), rep)
	t := results.Throughput{Evaluations: rep.Evaluated(), WallSeconds: rep.Split.Wall.Seconds(), Phases: rep.Split.Seconds()}
	if serr := j.run.store.AddThroughput(stdctx.Background(), j.run.stored.ID, t); serr != nil && err == nil {
		err = serr
	}
	return rep, err
}

// finish records how the run ended, from the error that ended it: a
// cancellation (the user's interrupt) leaves it resumable. It returns the
// status and err, or the store's error if recording failed. A run that
// another process resumed since (taking this one for dead) is that
// process's to finish and resume: finish returns status Failed, which it
// did not record, and the store's error, which says so.
func (r *tuneRun) finish(err error) (results.RunStatus, error) {
	status := results.Done
	switch {
	case errors.Is(err, stdctx.Canceled):
		status = results.Interrupted
	case err != nil:
		status = results.Failed
	}
	ferr := r.store.FinishRun(stdctx.Background(), r.stored.ID, status, time.Time{})
	switch {
	case errors.Is(ferr, results.ErrNotOwner):
		return results.Failed, ferr
	case ferr != nil && err == nil:
		err = ferr
	}
	return status, err
}

// interrupted says how to continue an interrupted run.
func (r *tuneRun) interrupted(c *context) int {
	fmt.Fprintf(c.stderr, "tltune %s: interrupted; continue with --resume %d --db %s\n", c.cmd.name, r.stored.ID, strconv.Quote(r.store.Path()))
	return exitInterrupted
}

// ptxMode is --ptx: on, off, or unset, which means on where the device
// builds the PTX tltune writes (an NVIDIA device, the nvidia target).
// `--ptx` alone sets it on, as a boolean flag.
type ptxMode struct{ set, on bool }

func (m *ptxMode) String() string {
	if m == nil || !m.set {
		return "auto"
	}
	return strconv.FormatBool(m.on)
}

func (m *ptxMode) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	m.set, m.on = true, on
	return nil
}

func (m *ptxMode) IsBoolFlag() bool { return true }

// decide is whether a run builds from PTX where the device does or does
// not (buildsPTX); ok is false where --ptx asks it of a device that does
// not.
func (m ptxMode) decide(buildsPTX bool) (use, ok bool) {
	if !m.set {
		return buildsPTX, true
	}
	return m.on && buildsPTX, !m.on || buildsPTX
}
