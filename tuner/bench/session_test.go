package bench

import (
	"context"
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/internal/devtest"
	"tltune/kernels"
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

// TestVerifyAndTime runs a ragged GEMM in both layouts: the output matches
// the reference, again on a second verification, and every timed launch
// takes device time.
func TestVerifyAndTime(t *testing.T) {
	d := devtest.OpenCL(t)
	for _, layout := range []kernels.Layout{kernels.Strided, kernels.Group} {
		r := recipe(t, gemmSpec(layout, 1.5))
		s, err := NewSession(d, r, Options{Seed: 3, Goal: smallGoal})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		k, err := s.Build(compile(t, r, tuning.Params{}))
		if err != nil {
			t.Fatal(err)
		}
		defer k.Release()
		// Twice: reading the result back must not change the inputs of
		// the next verification (β = 1 reads the output).
		for range 2 {
			v, err := s.Verify(k)
			if err != nil || !v.OK {
				t.Fatalf("%s: verify: %v %v", r.Name(), v, err)
			}
		}
		sample, err := s.Sampler(k)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			ns, err := sample(context.Background())
			if err != nil || ns <= 0 {
				t.Fatalf("%s: sample %v ns, %v", r.Name(), ns, err)
			}
		}
	}
}

// TestVerifyCatchesWrongKernel checks a kernel computing another α than the
// session's recipe: verification must fail it.
func TestVerifyCatchesWrongKernel(t *testing.T) {
	d := devtest.OpenCL(t)
	r := recipe(t, gemmSpec(kernels.Strided, 1.5))
	wrong := recipe(t, gemmSpec(kernels.Strided, 2))
	s, err := NewSession(d, r, Options{Seed: 3, Goal: smallGoal})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, err := s.Build(compile(t, wrong, tuning.Params{}))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	v, err := s.Verify(k)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
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
