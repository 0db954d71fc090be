// Package tuner owns the tuning loop: it enumerates a search space, prunes
// it for the device and shape, lets a search strategy choose what to
// evaluate, compiles configurations in parallel (cached by source hash)
// while a single device worker verifies and times them, and records every
// outcome as it happens, so that an interrupted run resumes where it
// stopped. It accounts for where each run's wall time goes (Split, Track),
// and races configurations against the best so far, re-timing the fastest
// with the full protocol at the end (Options.Race, race.go).
//
// The loop is written against small interfaces — Generator (recipes),
// Compiler, Measurer (device), Recorder (store) — that the command line
// wires to the real compiler, device and results packages.
//
// Sub-packages: profile (device facts), space (search spaces), prune
// (constraints), search (strategies), measure (statistics of the
// measurement protocol).
package tuner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"tltune/compiler/tuning"
	"tltune/tuner/measure"
)

// Kind classifies an outcome (DESIGN.md §5).
type Kind string

// The outcome taxonomy. Only OK is a candidate for the best configuration.
const (
	OK            Kind = "ok"
	Pruned        Kind = "pruned"         // rejected before compilation; not an evaluation
	CompileError  Kind = "compile_error"  // the generated kernel did not compile
	LaunchError   Kind = "launch_error"   // it compiled but did not run
	ResourceError Kind = "resource_error" // out of registers, local memory, device memory
	Timeout       Kind = "timeout"        // compiling or running exceeded the per-config limit
	WrongResult   Kind = "wrong_result"   // verification failed (NaN never passes)
	DeviceLost    Kind = "device_lost"    // the device reset or vanished while running it
	Crash         Kind = "crash"          // the driver killed the process working on it, twice
)

// Kinds lists every kind, in report order.
var Kinds = []Kind{OK, Pruned, CompileError, LaunchError, ResourceError, Timeout, WrongResult, DeviceLost, Crash}

// Error is a failure classified into an outcome kind. A Compiler or
// Measurer returns one (possibly wrapped) to say what kind a failure is; an
// unclassified compiler error is a CompileError, an unclassified measurer
// error a LaunchError.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Fail classifies err as kind.
func Fail(kind Kind, err error) error { return &Error{kind, err} }

// Generator turns a configuration into tensor-language source: the recipe
// of the op being tuned, with the shape, dtype and layout bound. A
// configuration the recipe refuses is pruned with the recipe's reason.
type Generator func(p tuning.Params) (source string, err error)

// Artifact is whatever the Compiler produces and the Measurer runs. If it
// implements io.Closer, the loop closes it when it leaves the cache.
type Artifact any

// Compiler compiles generated source. It is called from several goroutines
// at once.
type Compiler interface {
	Compile(ctx context.Context, source string) (Artifact, error)
}

// Measurer runs a compiled configuration on the device: it verifies the
// output against the host reference first, then times it (typically with
// measure.Protocol, whose Race it takes from RaceOf(ctx)). It is called
// from one goroutine only. It must honour ctx's deadline: that is how the
// per-configuration time limit works.
type Measurer interface {
	Measure(ctx context.Context, a Artifact, p tuning.Params) (Measurement, error)
}

// Evaluation is the number of the evaluation (1-based, in proposal order)
// that a Compiler's or Measurer's context belongs to; 0 outside the tuner.
func Evaluation(ctx context.Context) int {
	n, _ := ctx.Value(evaluationKey{}).(int)
	return n
}

type evaluationKey struct{}

// RaceOf is the race a Measurer's timing of this configuration runs in
// (measure.Protocol.Race): against the best configuration measured before
// it, when the tuner races (Options.Race); the zero Race, which stops
// nothing, otherwise, for the first configuration, and in the final
// re-timing.
func RaceOf(ctx context.Context) measure.Race {
	r, _ := ctx.Value(raceKey{}).(measure.Race)
	return r
}

type raceKey struct{}

// Measurement is what the device reports for one configuration.
type Measurement struct {
	Verify Verification
	Result measure.Result // samples and summary; empty if verification failed
}

// Verification compares the output with the float64 host reference.
type Verification struct {
	RelErr    float64 // ‖out − ref‖ / ‖ref‖
	Tolerance float64 // the dtype's tolerance, scaled with K
}

// Passed reports whether the output is within tolerance; NaN never passes.
func (v Verification) Passed() bool { return v.RelErr <= v.Tolerance }

// Recorder stores outcomes. Record must commit before it returns: an
// outcome recorded is an outcome a resumed run will not repeat.
type Recorder interface {
	// Record commits outcomes, one at a time; a configuration the recipe
	// refused is one with Kind Pruned.
	Record(ctx context.Context, outcomes ...Outcome) error
	// RecordPruned commits how many configurations each pruning rule
	// rejected before the search, once per run: thousands of rejected
	// configurations are counted, not recorded one by one. A resumed run
	// prunes the same ones again, so a later call replaces an earlier one.
	RecordPruned(ctx context.Context, counts []PrunedCount) error
	// Retime replaces the recorded outcome of o's configuration with its
	// final re-timing (o.Retimed), whatever its kind now; it commits
	// before it returns, as Record does.
	Retime(ctx context.Context, o Outcome) error
	// Previous returns the outcomes this run already recorded, when it is
	// being resumed; none for a fresh run. The loop needs Params, Kind,
	// Seq, SourceHash and Retimed of each, and Result.Summary and
	// Result.Stop of the OK ones (to rank them, race against them and
	// teach the strategy); Source and raw samples may be left out.
	Previous(ctx context.Context) ([]Outcome, error)
}

// A PrunedCount is how many configurations one pruning rule rejected.
type PrunedCount struct {
	Rule    string // prune.Reason.Rule
	Count   int
	Example string // the first rejection's reason, with its numbers
}

// Outcome is the result of one configuration.
type Outcome struct {
	Params  tuning.Params
	Kind    Kind
	Message string // the error, or why it was pruned; "" when OK

	Seq         int    // evaluation number in the run, from 1; 0 when pruned
	Source      string // generated source; "" when pruned
	SourceHash  string // hex SHA-256 of Source
	CacheHit    bool   // the compiled artifact of an identical source was reused
	CompileTime time.Duration
	MeasureTime time.Duration
	Verify      Verification
	Result      measure.Result // samples and summary when Kind is OK
	// Retimed: Result is the final re-timing with the full protocol of
	// one of the run's fastest configurations (Options.Race), which
	// replaced its timing in the search.
	Retimed bool
}

// Median is the median time in ns of an OK outcome.
func (o *Outcome) Median() float64 { return o.Result.Summary.Median }

// Raced reports whether the timing of an OK outcome stopped early, clearly
// slower than the best so far: its samples are partial.
func (o *Outcome) Raced() bool { return o.Kind == OK && o.Result.Stop == measure.StopRaced }

// Options tune the tuner.
type Options struct {
	Strategy string // search strategy (search.Names); default "gp"
	Seed     uint64 // for random choices; recorded by the caller for reproducibility

	// Budget is the most evaluations, resumed ones included; 0: no limit.
	// Pruned configurations are not evaluations.
	Budget int
	// Time stops proposing after this long (pruning included); evaluations
	// in flight then finish, each within ConfigTimeout. 0: no limit.
	Time time.Duration

	// ConfigTimeout limits compiling and, separately, measuring one
	// configuration (verification and timing together: keep it above the
	// measurement protocol's MaxTime); 0: no limit.
	ConfigTimeout  time.Duration
	CompileWorkers int // parallel compilations; default GOMAXPROCS
	CacheSize      int // compiled artifacts kept for reuse; default 1024

	// WarmStart configurations (best of tuned neighbouring shapes) are
	// evaluated first, where they are among the candidates: in the space,
	// kept by pruning.
	WarmStart []tuning.Params

	// Cheap configurations cost little to evaluate, their device binaries
	// being in the binary cache: the search weighs them by what that saves
	// (search.PreferCheap), so that running a space again builds little.
	Cheap []tuning.Params
	// Path is the proposals of an earlier search of the space with the
	// same seed, in order: the search retraces it while it stays near
	// the best choice (search.Retrace), so that with Cheap a second run
	// builds nothing where measurements agree.
	Path []tuning.Params

	// Race times configurations against the best so far: the timing of
	// one clearly slower stops early (measure.Race, with RaceMargin;
	// default measure.DefaultRaceMargin) and it is recorded OK with its
	// partial samples (Outcome.Raced). At the end the RetimeTop fastest
	// (default 3) are timed again with the full protocol, and again until
	// the fastest RetimeTop are all re-timed, so the winner is measured
	// as carefully as without racing. Off: every configuration is timed
	// in full once.
	Race       bool
	RaceMargin float64
	RetimeTop  int

	// Progress, if set, is called after each evaluation, from the loop's
	// goroutine.
	Progress func(Progress)
}

// Progress is the state after an evaluation.
type Progress struct {
	Done, Planned int      // evaluations so far, and the most there will be
	Last          *Outcome // the one just finished
	Best          *Outcome // the best OK outcome so far, or nil
}

// Report summarises a run.
type Report struct {
	Candidates   int            // configurations kept by pruning
	PrunedByRule map[string]int // pruned configurations per rule ("recipe" for the generator's refusals)
	Counts       map[Kind]int   // outcomes per kind, pruned included
	Evaluations  int            // evaluated configurations, resumed ones included
	Resumed      int            // evaluations taken from a previous, interrupted run
	CacheHits    int
	Raced        int // OK outcomes whose timing stopped early (and stayed partial)
	Retimed      int // OK outcomes timed again at the end with the full protocol
	Stop         Stop
	Outcomes     []Outcome // every evaluation, in order; resumed ones first
	Split        Split     // where the wall time of this Run went
}

// Evaluated is the number of evaluations this Run made itself (resumed
// ones were made by an earlier process).
func (r *Report) Evaluated() int { return r.Evaluations - r.Resumed }

// Stop says why a run ended.
type Stop string

// The reasons a run ends.
const (
	StopExhausted Stop = "exhausted" // every candidate evaluated
	StopBudget    Stop = "budget"
	StopTime      Stop = "time"
	StopCancelled Stop = "cancelled"
)

// Best returns the fastest OK outcome, or nil if none is OK.
func (r *Report) Best() *Outcome {
	top := r.Top(1)
	if len(top) == 0 {
		return nil
	}
	return &top[0]
}

// Top returns up to n OK outcomes, fastest first. Anything but OK (a wrong
// result above all) is never among them.
func (r *Report) Top(n int) []Outcome {
	top := r.topIndexes(n)
	out := make([]Outcome, len(top))
	for i, j := range top {
		out[i] = r.Outcomes[j]
	}
	return out
}

// topIndexes are the indexes in Outcomes of Top(n).
func (r *Report) topIndexes(n int) []int {
	var ok []int
	for i, o := range r.Outcomes {
		if o.Kind == OK {
			ok = append(ok, i)
		}
	}
	slices.SortStableFunc(ok, func(a, b int) int {
		switch ma, mb := r.Outcomes[a].Median(), r.Outcomes[b].Median(); {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		}
		return 0
	})
	return ok[:min(n, len(ok))]
}

// classify gives err its outcome kind: its own if classified, Timeout if the
// per-config deadline passed, else fallback.
func classify(err error, deadline context.Context, fallback Kind) Kind {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(deadline.Err(), context.DeadlineExceeded):
		return Timeout
	}
	return fallback
}

// checkMeasurement turns a measurement that came back without error into
// its kind: a result outside tolerance is wrong whatever the measurer
// thought, and an OK needs samples.
func checkMeasurement(m Measurement) (Kind, string) {
	if !m.Verify.Passed() {
		return WrongResult, fmt.Sprintf("relative error %.3g exceeds tolerance %.3g", m.Verify.RelErr, m.Verify.Tolerance)
	}
	if s := m.Result.Summary; s.N == 0 || !(s.Median > 0) {
		return LaunchError, "measurement returned no samples"
	}
	return OK, ""
}
