package main

import (
	stdctx "context"
	"math"
	"time"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/results"
	"tltune/tuner"
	"tltune/tuner/measure"
	"tltune/tuner/worker"
)

// The tuner is written against small interfaces (tuner.Compiler, Measurer,
// Recorder); this file wires them to the real compiler, the worker process
// that does the device's work, and the store.

// deviceMeasurer builds (when lazy), verifies and times compiled
// configurations in the worker, racing the best so far when the tuner
// says so; it checks the outputs against the host reference itself,
// computed once per problem (newShape) and shared by every configuration.
type deviceMeasurer struct {
	want     *kernels.Expected
	protocol measure.Protocol
}

func (m *deviceMeasurer) Measure(ctx stdctx.Context, a tuner.Artifact, _ tuning.Params) (tuner.Measurement, error) {
	k := a.(*worker.BatchKernel)
	seq := tuner.Evaluation(ctx)
	endBuild := tuner.Track(ctx, tuner.PhaseBuild)
	err := k.Build(ctx, seq) // nothing to do unless lazy, built in a worker since replaced, or failed with others
	endBuild()
	if err != nil {
		return tuner.Measurement{}, err
	}
	endVerify := tuner.Track(ctx, tuner.PhaseVerify)
	v, err := m.verify(ctx, k, seq)
	endVerify()
	if err != nil {
		return tuner.Measurement{}, err
	}
	out := tuner.Measurement{Verify: tuner.Verification{RelErr: v.Err, Tolerance: v.Tol}}
	if !v.OK {
		return out, nil // the tuner records it as a wrong result
	}
	protocol := m.protocol
	protocol.Race = tuner.RaceOf(ctx)
	out.Result, err = k.Kernel().Time(ctx, seq, protocol)
	return out, err
}

// verify runs the kernel once in the worker and checks its output here.
func (m *deviceMeasurer) verify(ctx stdctx.Context, k *worker.BatchKernel, seq int) (kernels.Verdict, error) {
	output, err := k.Kernel().Verify(ctx, seq)
	if err != nil {
		return kernels.Verdict{}, err
	}
	v, err := m.want.Check(output)
	if err != nil { // an output of another shape: the worker's answer is not to be trusted
		return v, tuner.Fail(tuner.LaunchError, err)
	}
	return v, nil
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
	batch   int     // batch entries of one timed launch, for the rates
	tol     float64 // the reference's tolerance (kernels.Expected.Tolerance)
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

// Retime replaces the stored outcome of o's configuration with its final
// re-timing.
func (r *storeRecorder) Retime(ctx stdctx.Context, o tuner.Outcome) error {
	return r.store.Retime(ctx, r.runID, r.measurement(o))
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
		Raced:       o.Raced(),
		Retimed:     o.Retimed,
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
		o := tuner.Outcome{Params: m.Config.Params, Kind: tuner.Kind(m.Outcome), Message: m.Message, SourceHash: m.Config.SourceHash,
			Retimed: m.Retimed}
		if m.Verified {
			o.Verify = tuner.Verification{RelErr: m.VerifyError, Tolerance: r.tol}
		}
		if o.Kind == tuner.OK {
			o.Result = measure.Result{Samples: m.SamplesNS, Summary: measure.Summarize(m.SamplesNS, 0.95)}
			if m.Raced {
				o.Result.Stop = measure.StopRaced
			}
		}
		outs = append(outs, o)
	}
	return outs, nil
}
