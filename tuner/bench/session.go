package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/device"
	"tltune/kernels"
	"tltune/tuner/measure"
)

// Options say how a Session verifies and times.
type Options struct {
	Seed        uint64 // seed of the verification inputs; recorded with each measurement
	VerifyBatch int    // batch entries checked against the host reference; default 8
	// Goal sizes the timed launches; EntryBytes is filled from the recipe.
	Goal measure.BatchGoal
}

// Session holds one recipe's verification inputs and its timing buffers on
// one device. It is not safe for concurrent use, like the device.
type Session struct {
	dev    device.Device
	recipe kernels.Recipe
	opt    Options

	verifyIn *kernels.Inputs
	verify   *bufferSet // verifyIn on the device, its output a copy of its own (withOwnOutput); nil until first used

	plan measure.BatchPlan
	sets []*bufferSet // timing buffers, rotated over by Sampler
}

func (o Options) withDefaults() Options {
	if o.VerifyBatch <= 0 {
		o.VerifyBatch = 8
	}
	return o
}

// Reference is the float64 host reference of the verification inputs a
// session with opt uses: what Output must match. A host that verifies
// outside the session (the tuner's parent process, while a worker runs the
// session) computes it once per problem with this.
func Reference(r kernels.Recipe, opt Options) (*kernels.Expected, error) {
	opt = opt.withDefaults()
	in, err := r.Inputs(opt.Seed, opt.VerifyBatch)
	if err != nil {
		return nil, err
	}
	return r.Reference(in)
}

// ReferenceMemory is the host memory Reference with opt takes: the
// verification inputs and the reference of them (kernels.Spec.HostMemory),
// computed on every processor.
func ReferenceMemory(r kernels.Recipe, opt Options) int64 {
	opt = opt.withDefaults()
	return r.Spec().HostMemory(opt.VerifyBatch, runtime.GOMAXPROCS(0))
}

// Plan is the batch plan of a session of r with goal: what NewSession's
// Plan will be, known before the session is prepared.
func Plan(r kernels.Recipe, goal measure.BatchGoal) (measure.BatchPlan, error) {
	goal.EntryBytes = r.Bytes(1)
	return measure.PlanBatch(goal)
}

// NewSession prepares r on d: it generates the verification inputs and
// uploads the timing buffer sets the batch plan asks for.
func NewSession(d device.Device, r kernels.Recipe, opt Options) (*Session, error) {
	opt = opt.withDefaults()
	s := &Session{dev: d, recipe: r, opt: opt}
	var err error
	if s.verifyIn, err = r.Inputs(opt.Seed, opt.VerifyBatch); err != nil {
		return nil, err
	}
	if s.plan, err = Plan(r, opt.Goal); err != nil {
		return nil, err
	}
	if err := s.uploadTimingSets(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// timingPattern is the number of distinct random batch entries of the
// timing buffers, the rest repeating them; fewer where the entries are
// large, so that the distinct ones hold about timingPatternBytes (a batch
// of 64 gemv entries of 1024² f16 took 4 s to generate on the GPU
// machine). Repeated values cost no speed: caches go by address.
const (
	timingPattern      = 64
	timingPatternBytes = 16 << 20
)

// patternEntries is the number of distinct entries of a timing batch.
func patternEntries(batch int, entryBytes int64) int {
	return max(1, min(batch, timingPattern, int(timingPatternBytes/max(entryBytes, 1))))
}

// uploadTimingSets generates one batch of inputs and uploads it once per set:
// the values do not matter for timing beyond being realistic, distinct
// buffers do (a repeat must not find its inputs in the cache). The batch
// repeats a few random entries (patternEntries): generating every value
// of a launch that outgrows the cache took about a second on the GPU
// machine. They repeat as they are written to the device, not on the host
// first: the host copy of a 210 MB launch (gemm 64x64x32 f16) took 0.3 to
// 0.9 s to make on a 2-core machine, and the session would hold it.
func (s *Session) uploadTimingSets() error {
	in, err := s.recipe.Inputs(s.opt.Seed+1, patternEntries(s.plan.Batch, s.recipe.Bytes(1)))
	if err != nil {
		return err
	}
	for range s.plan.Sets {
		set, err := uploadRepeated(s.dev, in, s.plan.Batch, s.recipe.Spec().Layout)
		if err != nil {
			return fmt.Errorf("timing buffers (%d sets of %d entries, %d bytes each): %w",
				s.plan.Sets, s.plan.Batch, s.plan.LaunchBytes, err)
		}
		s.sets = append(s.sets, set)
	}
	return nil
}

// Plan is the batch and buffer rotation of the timed launches.
func (s *Session) Plan() measure.BatchPlan { return s.plan }

// Close releases every device buffer of the session.
func (s *Session) Close() {
	for _, set := range s.sets {
		set.release()
	}
	s.sets = nil
	if s.verify != nil {
		s.verify.release()
		s.verify = nil
	}
}

// Kernel is one kernel of a program built on the session's device, with its
// argument ABI.
type Kernel struct {
	abi  *compiler.Kernel
	kern device.Kernel
}

// NewKernel pairs a kernel built on the session's device with its
// argument ABI. The caller keeps owning kern.
func NewKernel(abi compiler.Kernel, kern device.Kernel) *Kernel {
	return &Kernel{abi: &abi, kern: kern}
}

// Output runs k once on the verification inputs (the output poisoned with
// NaN where the kernel must not read it) and returns what it wrote, for a
// check against Reference. The buffers stay on the device from one
// configuration to the next, written again before each run (a kernel that
// wrote out of bounds must not spoil the next one's inputs): allocating
// and freeing them each time cost more than the run.
func (s *Session) Output(k *Kernel) (*kernels.Buffer, error) {
	if s.verify == nil {
		in := withOwnOutput(s.verifyIn)
		s.verify = newBufferSet(s.dev, in, in.Batch, InputParams(in))
	}
	out := s.verify.output()
	copy(out.Data, s.verifyIn.Output().Data)
	if err := s.verify.write(); err != nil {
		return nil, err
	}
	call, err := s.verify.call(k.abi)
	if err != nil {
		return nil, err
	}
	ev, err := s.verify.bufs.Launch(k.kern, call)
	if err != nil {
		return nil, err
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return nil, err
	}
	if err := s.verify.bufs.ReadBack(out); err != nil {
		return nil, err
	}
	result := *s.verify.in.Output()
	result.Data = slices.Clone(result.Data) // the next run writes the set's copy
	return &result, nil
}

// withOwnOutput is in with a copy of its output buffer, so that reading the
// device's result back leaves the session's initial output intact.
func withOwnOutput(in *kernels.Inputs) *kernels.Inputs {
	cp := *in
	cp.Args = slices.Clone(in.Args)
	out := *in.Output()
	out.Data = slices.Clone(out.Data)
	cp.Args[len(cp.Args)-1] = &out
	return &cp
}

// launchesPerSample is how many back-to-back launches one sample of the
// measurement protocol averages. On an H200 (driver 580.159.04, a 64×64×32
// f16 GEMM on one buffer set) consecutive launches alternate between a
// fast and a slow level about 4 % apart (lag-1 autocorrelation −0.6 over
// hundreds of launches): the median of single launches falls between the
// two, where few of them lie, and its 95 % interval took 72 to 731
// launches to narrow to 1 %, a third of a warm tuning run's time. The
// mean of a pair is the time per launch of that steady state: on the same
// launches, the median of the first 40 pairs was within 0.2-0.5 %. Where
// launches do not alternate, a pair scatters less than a launch, which
// its cost repays.
const launchesPerSample = 2

// Sampler returns a function that returns the mean device time of k's next
// launchesPerSample launches in nanoseconds, rotating over the timing
// sets, and a function that waits for and releases the launches still
// queued, to be called when sampling ends: the launches run back to back
// (device.BackToBack).
func (s *Session) Sampler(k *Kernel) (sample measure.Sampler, stop func(), err error) {
	calls := make([]*hostcall.Call, len(s.sets))
	for i, set := range s.sets {
		c, err := set.call(k.abi)
		if err != nil {
			return nil, nil, err
		}
		calls[i] = c
	}
	i := 0
	next, stop := device.BackToBack(func() (device.Event, error) {
		ev, err := s.sets[i].bufs.Launch(k.kern, calls[i])
		i = (i + 1) % len(calls)
		return ev, err
	})
	return meanOfLaunches(next, launchesPerSample), stop, nil
}

// meanOfLaunches is a sampler whose sample is the mean device time of the
// next n launches that next times.
func meanOfLaunches(next func() (int64, error), n int) measure.Sampler {
	return func(ctx context.Context) (float64, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var sum int64
		for range n {
			ns, err := next()
			if err != nil {
				return 0, err
			}
			sum += ns
		}
		return float64(sum) / float64(n), nil
	}
}
