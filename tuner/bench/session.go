package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/compiler/hostcall/devcall"
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

// Session holds one recipe's verification inputs and reference and its
// timing buffers on one device. It is not safe for concurrent use, like the
// device.
type Session struct {
	dev    device.Device
	recipe kernels.Recipe
	opt    Options

	verifyIn *kernels.Inputs
	want     *kernels.Expected

	plan measure.BatchPlan
	sets []*bufferSet // timing buffers, rotated over by Sampler
}

// NewSession prepares r on d: it computes the reference of the verification
// inputs and uploads the timing buffer sets the batch plan asks for.
func NewSession(d device.Device, r kernels.Recipe, opt Options) (*Session, error) {
	if opt.VerifyBatch <= 0 {
		opt.VerifyBatch = 8
	}
	s := &Session{dev: d, recipe: r, opt: opt}
	var err error
	if s.verifyIn, err = r.Inputs(opt.Seed, opt.VerifyBatch); err != nil {
		return nil, err
	}
	if s.want, err = r.Reference(s.verifyIn); err != nil {
		return nil, err
	}
	goal := opt.Goal
	goal.EntryBytes = r.Bytes(1)
	if s.plan, err = measure.PlanBatch(goal); err != nil {
		return nil, err
	}
	if err := s.uploadTimingSets(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// uploadTimingSets generates one batch of inputs and uploads it once per set:
// the values do not matter for timing, distinct buffers do (a repeat must not
// find its inputs in the cache).
func (s *Session) uploadTimingSets() error {
	in, err := s.recipe.Inputs(s.opt.Seed+1, s.plan.Batch)
	if err != nil {
		return err
	}
	for range s.plan.Sets {
		set, err := upload(s.dev, in)
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
}

// Kernel is one configuration compiled and built for the session's device.
type Kernel struct {
	abi     *compiler.Kernel
	kern    device.Kernel
	release func()
}

// Build builds the first kernel of res on the device, from SPIR-V or from
// OpenCL C as the device's properties choose (devcall.ChoosePath).
func (s *Session) Build(res *compiler.Result) (*Kernel, error) {
	if len(res.Kernels) == 0 {
		return nil, errors.New("the program has no kernel")
	}
	abi := &res.Kernels[0]
	kern, release, _, err := devcall.BuildResult(s.dev, res, abi.Name)
	if err != nil {
		return nil, err
	}
	return &Kernel{abi: abi, kern: kern, release: release}, nil
}

// Release frees the kernel and its program.
func (k *Kernel) Release() { k.release() }

// Verify runs k once on fresh copies of the verification inputs (the output
// poisoned with NaN where the kernel must not read it) and checks the output
// against the host reference.
func (s *Session) Verify(k *Kernel) (kernels.Verdict, error) {
	in := withOwnOutput(s.verifyIn)
	set, err := upload(s.dev, in)
	if err != nil {
		return kernels.Verdict{}, err
	}
	defer set.release()
	call, err := set.call(k.abi)
	if err != nil {
		return kernels.Verdict{}, err
	}
	ev, err := set.bufs.Launch(k.kern, call)
	if err != nil {
		return kernels.Verdict{}, err
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return kernels.Verdict{}, err
	}
	if err := set.bufs.ReadBack(set.output()); err != nil {
		return kernels.Verdict{}, err
	}
	return s.want.Check(in.Output())
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

// Sampler returns a function that launches k on the next timing set and
// returns the launch's device time in nanoseconds.
func (s *Session) Sampler(k *Kernel) (measure.Sampler, error) {
	calls := make([]*hostcall.Call, len(s.sets))
	for i, set := range s.sets {
		c, err := set.call(k.abi)
		if err != nil {
			return nil, err
		}
		calls[i] = c
	}
	next := 0
	return func(ctx context.Context) (float64, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		ev, err := s.sets[next].bufs.Launch(k.kern, calls[next])
		next = (next + 1) % len(calls)
		if err != nil {
			return 0, err
		}
		defer ev.Release()
		ns, err := ev.Nanoseconds()
		return float64(ns), err
	}, nil
}
