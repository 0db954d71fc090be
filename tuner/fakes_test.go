package tuner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"tltune/compiler/tuning"
	"tltune/tuner/measure"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/space"
)

// The test space: 192 points on a generic device. wy 8192 exceeds the
// work-group limit (96 pruned by rule); unroll 4 is refused by the fake
// recipe (32 pruned as "recipe"); the recipe ignores batch_per_group, so
// pairs of configurations share a source (32 compilations, 32 cache hits).
// wx picks the outcome, see outcomeOf.
const testSpace = `
subgroup_size = [1]
unroll = [1, 2, 4]
batch_per_group = [1, 2]
[work_group_size]
x = "1..128*2"
y = [1, 8192]
[tile]
m = [1, 2]
n = [1]
[coopmatrix]
m = [1]
n = [1]
k = [1]
`

var testDevice = &profile.Profile{Name: "fake CPU", Target: profile.Generic, SubgroupSizes: []int{1}, MaxWorkGroupSize: 4096}

var testProblem = prune.Problem{Op: "gemm", Dtype: "f32", M: 1024, N: 1024, K: 64}

// outcomeOf is the fate of each configuration in the fakes, by wx.
var outcomeOf = map[int]Kind{
	1: OK, 2: CompileError, 4: ResourceError, 8: LaunchError,
	16: DeviceLost, 32: WrongResult, 64: WrongResult, 128: Timeout,
}

func testSpaceT(t testing.TB) *space.Space {
	s, err := space.Parse("test.toml", "gemm", "generic", []byte(testSpace))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// generate is the fake recipe.
func generate(p tuning.Params) (string, error) {
	if p.Unroll == 4 {
		return "", errors.New("unroll 4 not implemented")
	}
	// The batch per group is deliberately left out: identical sources.
	return fmt.Sprintf("kernel wx=%d tm=%d u=%d", p.WorkGroupSize[0], p.Tile[0], p.Unroll), nil
}

type artifact struct{ wx, tm int }

// fakeCompiler compiles instantly, counting compilations per source.
type fakeCompiler struct {
	mu    sync.Mutex
	count map[string]int
}

func (c *fakeCompiler) Compile(ctx context.Context, src string) (Artifact, error) {
	c.mu.Lock()
	if c.count == nil {
		c.count = map[string]int{}
	}
	c.count[src]++
	c.mu.Unlock()
	var a artifact
	var u int
	if _, err := fmt.Sscanf(src, "kernel wx=%d tm=%d u=%d", &a.wx, &a.tm, &u); err != nil {
		return nil, err
	}
	switch {
	case outcomeOf[a.wx] == CompileError && a.tm == 2:
		panic("internal error in the compiler")
	case outcomeOf[a.wx] == CompileError:
		return nil, errors.New("line 3: syntax error")
	case outcomeOf[a.wx] == ResourceError:
		return nil, Fail(ResourceError, errors.New("uses 300 registers"))
	}
	return a, nil
}

func (c *fakeCompiler) compilations() (total int) {
	for _, n := range c.count {
		total += n
	}
	return total
}

// fakeMeasurer returns each configuration's fate; OK ones get samples with
// a median of 1000 + 10·tm + batch_per_group ns.
type fakeMeasurer struct {
	delay time.Duration // per measurement
	mu    sync.Mutex
	calls map[tuning.Params]int
}

func (m *fakeMeasurer) Measure(ctx context.Context, a Artifact, p tuning.Params) (Measurement, error) {
	m.mu.Lock()
	if m.calls == nil {
		m.calls = map[tuning.Params]int{}
	}
	m.calls[p]++
	m.mu.Unlock()
	if m.delay > 0 {
		time.Sleep(m.delay)
	}
	art := a.(artifact)
	good := Verification{RelErr: 1e-7, Tolerance: 1e-5}
	switch art.wx {
	case 8:
		return Measurement{}, errors.New("CL_INVALID_WORK_GROUP_SIZE")
	case 16:
		return Measurement{}, Fail(DeviceLost, errors.New("CL_OUT_OF_RESOURCES after reset"))
	case 32:
		return Measurement{Verify: Verification{RelErr: 0.5, Tolerance: 1e-5}, Result: samples(1)}, nil // wrong but fast
	case 64:
		return Measurement{Verify: Verification{RelErr: math.NaN(), Tolerance: 1e-5}}, nil
	case 128:
		<-ctx.Done()
		return Measurement{}, ctx.Err()
	}
	return Measurement{Verify: good, Result: samples(1000 + 10*float64(p.Tile[0]) + float64(p.BatchPerGroup))}, nil
}

func samples(median float64) measure.Result {
	xs := []float64{median * 0.99, median, median * 1.01, median, median, median * 1.02, median}
	return measure.Result{Samples: xs, Summary: measure.Summarize(xs, 0.95)}
}

// memRecorder is an in-memory store; onRecord, if set, runs after each
// evaluation is recorded (to cancel a run mid-way, say).
type memRecorder struct {
	mu       sync.Mutex
	outcomes []Outcome
	pruned   []PrunedCount // the last RecordPruned
	failAt   int           // fail the failAt-th Record call; 0: never
	calls    int
	onRecord func(n int)
}

func (r *memRecorder) Record(_ context.Context, os ...Outcome) error {
	r.mu.Lock()
	r.calls++
	if r.calls == r.failAt {
		r.mu.Unlock()
		return errors.New("disk full")
	}
	r.outcomes = append(r.outcomes, os...)
	n := r.evaluated()
	r.mu.Unlock()
	if r.onRecord != nil && os[0].Kind != Pruned {
		r.onRecord(n)
	}
	return nil
}

func (r *memRecorder) RecordPruned(_ context.Context, counts []PrunedCount) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == r.failAt {
		return errors.New("disk full")
	}
	r.pruned = counts
	return nil
}

// Retime replaces the outcome of o's configuration.
func (r *memRecorder) Retime(_ context.Context, o Outcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == r.failAt {
		return errors.New("disk full")
	}
	for i := range r.outcomes {
		if r.outcomes[i].Params == o.Params {
			r.outcomes[i] = o
			return nil
		}
	}
	return fmt.Errorf("%v was never recorded", o.Params)
}

func (r *memRecorder) Previous(context.Context) ([]Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Outcome(nil), r.outcomes...), nil
}

func (r *memRecorder) evaluated() (n int) {
	for _, o := range r.outcomes {
		if o.Kind != Pruned {
			n++
		}
	}
	return n
}

func newTuner(t testing.TB, rec Recorder, meas Measurer, opts Options) (*Tuner, *fakeCompiler) {
	comp := &fakeCompiler{}
	if opts.ConfigTimeout == 0 {
		opts.ConfigTimeout = 20 * time.Millisecond
	}
	return &Tuner{
		Problem: testProblem, Device: testDevice, Space: testSpaceT(t),
		Generate: generate, Compiler: comp, Measurer: meas, Recorder: rec, Options: opts,
	}, comp
}

// keyOf names an outcome for duplicate checks.
func keyOf(o Outcome) string { return strings.Join([]string{o.Params.String(), string(o.Kind)}, "|") }
