package main

import (
	stdctx "context"
	"errors"
	"math"
	"time"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/results"
	"tltune/tuner"
	"tltune/tuner/bench"
	"tltune/tuner/measure"
)

// The tuner is written against small interfaces (tuner.Compiler, Measurer,
// Recorder); this file wires them to the real compiler, device and store.

// kernelCompiler compiles generated recipes with tltune's compiler for the
// tuned device. With a session it also builds the program for the device,
// in the tuner's parallel compile pool: a GPU driver's compiler then runs
// while the device worker times other configurations. On a CPU device the
// driver's compiler would compete with the kernels being timed for the same
// cores, so there the device worker builds (session nil).
type kernelCompiler struct {
	opts    compiler.Options
	session *bench.Session
}

// builtKernel is a configuration compiled and built for the device; the
// tuner's cache closes it when it evicts it.
type builtKernel struct{ *bench.Kernel }

func (b builtKernel) Close() error {
	b.Release()
	return nil
}

func (c kernelCompiler) Compile(ctx stdctx.Context, src string) (tuner.Artifact, error) {
	res, err := compiler.Compile([]byte(src), c.opts)
	if err != nil || c.session == nil {
		return res, err
	}
	endBuild := tuner.Track(ctx, tuner.PhaseBuild)
	k, err := c.session.Build(res)
	endBuild()
	if err != nil {
		return nil, classifyDeviceError(err, tuner.CompileError)
	}
	return builtKernel{k}, nil
}

// deviceMeasurer builds, verifies and times compiled configurations on the
// device through a bench session.
type deviceMeasurer struct {
	session  *bench.Session
	protocol measure.Protocol
}

func (m *deviceMeasurer) Measure(ctx stdctx.Context, a tuner.Artifact, _ tuning.Params) (tuner.Measurement, error) {
	var k *bench.Kernel
	switch a := a.(type) {
	case builtKernel:
		k = a.Kernel
	case *compiler.Result:
		endBuild := tuner.Track(ctx, tuner.PhaseBuild)
		var err error
		k, err = m.session.Build(a)
		endBuild()
		if err != nil {
			return tuner.Measurement{}, classifyDeviceError(err, tuner.CompileError)
		}
		defer k.Release()
	}
	endVerify := tuner.Track(ctx, tuner.PhaseVerify)
	v, err := m.session.Verify(k)
	endVerify()
	if err != nil {
		return tuner.Measurement{}, classifyDeviceError(err, tuner.LaunchError)
	}
	out := tuner.Measurement{Verify: tuner.Verification{RelErr: v.Err, Tolerance: v.Tol}}
	if !v.OK {
		return out, nil // the tuner records it as a wrong result
	}
	sample, err := m.session.Sampler(k)
	if err != nil {
		return out, classifyDeviceError(err, tuner.LaunchError)
	}
	out.Result, err = m.protocol.Run(ctx, sample)
	if err != nil {
		return out, classifyDeviceError(err, tuner.LaunchError)
	}
	return out, nil
}

// classifyDeviceError maps the device's failure kinds to tuner outcomes;
// anything else is fallback.
func classifyDeviceError(err error, fallback tuner.Kind) error {
	kinds := []struct {
		err  error
		kind tuner.Kind
	}{
		{device.ErrBuild, tuner.CompileError},
		{device.ErrWorkGroupSize, tuner.LaunchError},
		{device.ErrOutOfResources, tuner.ResourceError},
		{device.ErrDeviceLost, tuner.DeviceLost},
		{stdctx.DeadlineExceeded, tuner.Timeout},
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return tuner.Fail(k.kind, err)
		}
	}
	return tuner.Fail(fallback, err)
}

// storeRecorder commits every outcome of one run to the results store as it
// happens, so a killed run loses nothing and --resume continues it.
type storeRecorder struct {
	store   *results.Store
	runID   int64
	device  string // the device's id on this host, e.g. opencl:1
	recipe  kernels.Recipe
	problem speak.Problem
	seed    uint64
	batch   int // batch entries of one timed launch, for the rates
}

func (r *storeRecorder) config(o tuner.Outcome) results.Config {
	return results.Config{Problem: r.problem, Params: o.Params, SourceHash: o.SourceHash}
}

// RecordPruned stores the pruning rules' counts for the recipe's problem.
func (r *storeRecorder) RecordPruned(ctx stdctx.Context, counts []tuner.PrunedCount) error {
	stored := make([]results.PrunedCount, len(counts))
	for i, c := range counts {
		stored[i] = results.PrunedCount{Problem: r.problem, Rule: c.Rule, Count: c.Count, Example: c.Example}
	}
	return r.store.RecordPruned(ctx, r.runID, stored)
}

func (r *storeRecorder) Record(ctx stdctx.Context, outcomes ...tuner.Outcome) error {
	for _, o := range outcomes {
		if _, err := r.store.Record(ctx, r.runID, r.measurement(o)); err != nil {
			return err
		}
	}
	return nil
}

// measurement is the stored form of an outcome: raw samples, summary and
// the rates of one timed launch.
func (r *storeRecorder) measurement(o tuner.Outcome) results.Measurement {
	m := results.Measurement{
		Config:      r.config(o),
		Outcome:     results.Outcome(o.Kind),
		Message:     o.Message,
		Seed:        int64(r.seed),
		Device:      r.device,
		Verified:    o.Verify.Tolerance > 0,
		VerifyError: o.Verify.RelErr,
		MeasuredAt:  time.Now(),
	}
	if !m.Verified || math.IsInf(m.VerifyError, 0) {
		m.VerifyError = math.NaN()
	}
	if o.Kind != tuner.OK {
		return m
	}
	s := o.Result.Summary
	m.SamplesNS = o.Result.Samples
	m.MedianNS, m.MinNS, m.MaxNS, m.IQRNS = s.Median, s.Min, s.Max, s.IQR
	m.CILowNS, m.CIHighNS = finiteOr(s.Lo, s.Min), finiteOr(s.Hi, s.Max)
	m.GFLOPS = float64(r.recipe.FLOPs(r.batch)) / s.Median
	m.GBS = float64(r.recipe.Bytes(r.batch)) / s.Median
	return m
}

// finiteOr is x, or fallback when x is infinite (a confidence interval
// with too few samples to bound the median).
func finiteOr(x, fallback float64) float64 {
	if math.IsInf(x, 0) {
		return fallback
	}
	return x
}

// Previous rebuilds the outcomes a resumed run recorded for this shape, so
// the tuner skips them and still knows the best one. A sweep's run holds
// other shapes too, whose configurations are no evaluations of this one.
func (r *storeRecorder) Previous(ctx stdctx.Context) ([]tuner.Outcome, error) {
	ms, err := r.store.Measurements(ctx, r.runID)
	if err != nil {
		return nil, err
	}
	problem := r.problem
	outs := make([]tuner.Outcome, 0, len(ms))
	for _, m := range ms {
		if m.Config.Problem != problem {
			continue
		}
		o := tuner.Outcome{Params: m.Config.Params, Kind: tuner.Kind(m.Outcome), Message: m.Message, SourceHash: m.Config.SourceHash}
		if m.Verified {
			o.Verify = tuner.Verification{RelErr: m.VerifyError, Tolerance: r.recipe.Tolerance()}
		}
		if o.Kind == tuner.OK {
			o.Result = measure.Result{Samples: m.SamplesNS, Summary: measure.Summarize(m.SamplesNS, 0.95)}
		}
		outs = append(outs, o)
	}
	return outs, nil
}
