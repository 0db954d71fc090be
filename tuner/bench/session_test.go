package bench

import (
	"context"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/devtest"
	"tltune/kernels"
	"tltune/kernels/kernelstest"
	"tltune/tuner/measure"
)

func recipe(t *testing.T, s kernels.Spec) kernels.Recipe {
	t.Helper()
	r, err := kernels.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func compile(t *testing.T, r kernels.Recipe, p tuning.Params) *compiler.Result {
	t.Helper()
	src, err := r.Source(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile([]byte(src), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatalf("%s: %v", r.Name(), err)
	}
	return res
}

var smallGoal = measure.BatchGoal{MinBatch: 4, Hot: true}

func gemmSpec(layout kernels.Layout, alpha complex128) kernels.Spec {
	return kernels.Spec{Op: kernels.GEMMOp, M: 20, N: 5, K: 7, DType: kernels.F32, Acc: kernels.F32,
		Layout: layout, Alpha: alpha, Beta: 1}
}

// build builds res's kernel on d, released with the test.
func build(t *testing.T, d device.Device, res *compiler.Result) *Kernel {
	t.Helper()
	form, err := devcall.FormOf(d.Info(), res)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := form.Build(d)
	if err != nil {
		t.Fatal(err)
	}
	kern, err := prog.Kernel(form.Kernels[0].Symbol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kern.Release(); prog.Release() })
	return NewKernel(form.Kernels[0], kern)
}

// verify runs k in s and checks its output against Reference, the
// reference of the inputs a session with opt verifies with.
func verify(t *testing.T, s *Session, r kernels.Recipe, opt Options, k *Kernel) kernels.Verdict {
	t.Helper()
	out, err := s.Output(k)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Reference(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	v, err := want.Check(out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVerifyAndTime runs a ragged GEMM in both layouts: the output matches
// the reference, again on a second verification, and every timed launch
// takes device time.
func TestVerifyAndTime(t *testing.T) {
	d := devtest.OpenCL(t)
	for _, layout := range []kernels.Layout{kernels.Strided, kernels.Group} {
		r := recipe(t, gemmSpec(layout, 1.5))
		opt := Options{Seed: 3, Goal: smallGoal}
		s, err := NewSession(d, r, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		k := build(t, d, compile(t, r, tuning.Params{}))
		// Twice: reading the result back must not change the inputs of
		// the next verification (β = 1 reads the output).
		for range 2 {
			if v := verify(t, s, r, opt, k); !v.OK {
				t.Fatalf("%s: verify: %v", r.Name(), v)
			}
		}
		sample, stop, err := s.Sampler(k)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			ns, err := sample(context.Background())
			if err != nil || ns <= 0 {
				t.Fatalf("%s: sample %v ns, %v", r.Name(), ns, err)
			}
		}
		stop()
		// The launches queued ahead were waited for: the output holds a
		// finished launch's result, and verifying again still passes.
		if v := verify(t, s, r, opt, k); !v.OK {
			t.Fatalf("%s: verify after sampling: %v", r.Name(), v)
		}
	}
}

// TestVerifyCatchesWrongKernel checks a kernel computing another α than the
// session's recipe: verification must fail it.
func TestVerifyCatchesWrongKernel(t *testing.T) {
	d := devtest.OpenCL(t)
	r := recipe(t, gemmSpec(kernels.Strided, 1.5))
	wrong := recipe(t, gemmSpec(kernels.Strided, 2))
	opt := Options{Seed: 3, Goal: smallGoal}
	s, err := NewSession(d, r, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := verify(t, s, r, opt, build(t, d, compile(t, wrong, tuning.Params{}))); v.OK {
		t.Fatalf("a kernel with α = 2 passed verification against α = 1.5: %v", v)
	}
}

// TestTimingSetsRotate checks that a cold plan uploads several buffer sets.
func TestTimingSetsRotate(t *testing.T) {
	d := devtest.OpenCL(t)
	r := recipe(t, gemmSpec(kernels.Strided, 1))
	goal := measure.BatchGoal{MinBatch: 2, MaxBatch: 2, CacheBytes: r.Bytes(2)}
	s, err := NewSession(d, r, Options{Goal: goal})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p := s.Plan(); p.Sets < 2 || len(s.sets) != p.Sets {
		t.Fatalf("plan %+v with %d sets uploaded: want several sets", p, len(s.sets))
	}
}

// TestSessionPreparesOnce: a session generates its inputs when it starts
// (the verification inputs and one batch for the timing sets) and never
// again, however many kernels it verifies and times; it computes no
// reference (the tuning process does, once per problem).
func TestSessionPreparesOnce(t *testing.T) {
	d := devtest.OpenCL(t)
	r := &kernelstest.Counting{Recipe: recipe(t, gemmSpec(kernels.Strided, 1.5))}
	s, err := NewSession(d, r, Options{Seed: 3, Goal: smallGoal})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := build(t, d, compile(t, r, tuning.Params{}))
	for range 5 {
		if _, err := s.Output(k); err != nil {
			t.Fatal(err)
		}
		sample, stop, err := s.Sampler(k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sample(context.Background()); err != nil {
			t.Fatal(err)
		}
		stop()
	}
	if inputs, references := r.Counts(); inputs != 2 || references != 0 {
		t.Errorf("5 verifications and timings generated inputs %d times and the reference %d times; want 2 and 0, at the start", inputs, references)
	}
}

// TestPatternEntries: the timing batch generates up to 64 distinct
// entries, fewer where they would pass about 16 MiB, never none.
func TestPatternEntries(t *testing.T) {
	for _, tc := range []struct {
		batch      int
		entryBytes int64
		want       int
	}{{8534, 16 << 10, 64}, {10, 16 << 10, 10}, {100, 2 << 20, 8}, {25, 64 << 20, 1}} {
		if got := patternEntries(tc.batch, tc.entryBytes); got != tc.want {
			t.Errorf("batch %d of %d bytes: %d distinct entries, want %d", tc.batch, tc.entryBytes, got, tc.want)
		}
	}
}

// TestVerifyInputsFreshEachTime: a kernel that writes into an input (here
// A's first element) leaves nothing for the next verification to see.
func TestVerifyInputsFreshEachTime(t *testing.T) {
	d := devtest.OpenCL(t)
	r := recipe(t, gemmSpec(kernels.Strided, 1.5))
	opt := Options{Seed: 3, Goal: smallGoal}
	s, err := NewSession(d, r, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, err := r.Source(tuning.Params{})
	if err != nil {
		t.Fatal(err)
	}
	corrupt := strings.Replace(src, "\n}\n", "\n  %i0 = constant 0 : index\n  %big = constant 1000.0 : f32\n  store %big, %A_entry[%i0, %i0]\n}\n", 1)
	res, err := compiler.Compile([]byte(corrupt), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatalf("the corrupting kernel: %v\n%s", err, corrupt)
	}
	good, bad := build(t, d, compile(t, r, tuning.Params{})), build(t, d, res)
	if v := verify(t, s, r, opt, good); !v.OK {
		t.Fatalf("before: %v", v)
	}
	if _, err := s.Output(bad); err != nil {
		t.Fatal(err)
	}
	if v := verify(t, s, r, opt, good); !v.OK {
		t.Fatalf("after a kernel wrote into A: %v", v)
	}
}

// TestMeanOfLaunchesSettlesAlternation: launches alternating between two
// levels 4 % apart, as an H200's do, keep the median of single launches
// between the levels, where its interval never narrows to 1 %; the mean
// of pairs is the steady state's time per launch and settles at once.
func TestMeanOfLaunchesSettlesAlternation(t *testing.T) {
	alternating := func() func() (int64, error) {
		i := int64(0)
		return func() (int64, error) {
			i++
			return 100_000 + 4_000*(i%2), nil
		}
	}
	p := measure.Protocol{MaxSamples: 200}
	single, err := p.Run(context.Background(), meanOfLaunches(alternating(), 1))
	if err != nil {
		t.Fatal(err)
	}
	if single.Stop == measure.StopTarget {
		t.Errorf("single launches reached the target: %+v", single.Summary)
	}
	paired, err := p.Run(context.Background(), meanOfLaunches(alternating(), launchesPerSample))
	if err != nil {
		t.Fatal(err)
	}
	if paired.Stop != measure.StopTarget || paired.Summary.N != 10 || paired.Summary.Median != 102_000 {
		t.Errorf("pairs stopped (%s) after %d samples at median %g ns; want the target at the first look, 10 samples, 102000 ns",
			paired.Stop, paired.Summary.N, paired.Summary.Median)
	}
}
