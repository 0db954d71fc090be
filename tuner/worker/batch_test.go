package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"tltune/compiler/hostcall/devcall"
	"tltune/tuner"
)

// fakeBatcher batches onto the fake device: its "compiler" joins the
// sources (so the fake device's markers reach the build) and gives every
// kernel the ABI of the real recipe kernel, and refuses a source that
// says COMPILE_FAIL.
func fakeBatcher(t *testing.T, size int, lazy bool) *Batcher {
	c := newFakeClient(t, time.Minute)
	abi := compiled(t).Kernels[0]
	return &Batcher{Client: c, Size: size, Lazy: lazy,
		CompileMany: func(srcs [][]byte, names []string) (devcall.Form, error) {
			form := devcall.Form{Path: devcall.PathOpenCLC}
			for i, src := range srcs {
				if strings.Contains(string(src), "COMPILE_FAIL") {
					return form, fmt.Errorf("@%s: syntax error", names[i])
				}
				form.Source += string(src) + "\n"
				k := abi
				k.Name, k.Symbol = names[i], names[i]
				form.Kernels = append(form.Kernels, k)
			}
			return form, nil
		}}
}

// compileAll hands the batcher the sources at once, as the tuner's compile
// workers do, and returns the artifacts and errors in order.
func compileAll(b *Batcher, srcs []string) ([]*BatchKernel, []error) {
	arts, errs := make([]*BatchKernel, len(srcs)), make([]error, len(srcs))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Go(func() {
			a, err := b.Compile(context.Background(), src)
			if err == nil {
				arts[i] = a.(*BatchKernel)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return arts, errs
}

func sources(n int, mark map[int]string) []string {
	srcs := make([]string, n)
	for i := range srcs {
		srcs[i] = fmt.Sprintf("// configuration %d %s", i, mark[i])
	}
	return srcs
}

// TestBatchesBuildOnce: eight configurations in programs of four are two
// driver builds, and each configuration verifies and times its own kernel.
// No batch goes short: on a loaded machine the 3 ms between two of the
// goroutines handing in sources had made three builds.
func TestBatchesBuildOnce(t *testing.T) {
	b := fakeBatcher(t, 4, false)
	b.Quiet = time.Minute
	arts, errs := compileAll(b, sources(8, nil))
	symbols := map[string]bool{}
	for i, k := range arts {
		if errs[i] != nil {
			t.Fatalf("configuration %d: %v", i, errs[i])
		}
		if err := k.Build(bg, i+1); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Kernel().Verify(bg, i+1); err != nil {
			t.Fatal(err)
		}
		symbols[k.Kernel().ABI().Symbol] = true
	}
	if s := b.Client.Stats(); s.Builds != 2 || len(symbols) != 8 {
		t.Errorf("%d builds for %d distinct kernels; want 2 builds of 8", s.Builds, len(symbols))
	}
	for _, k := range arts {
		k.Close()
	}
}

// TestShortBatch: fewer configurations than a program holds are compiled
// and built once nothing more comes. The quiet window is wide so that a
// loaded machine's scheduling gaps between the three goroutines (CI once
// saw them exceed the 3 ms default) do not split the batch; a short batch
// still goes within it.
func TestShortBatch(t *testing.T) {
	b := fakeBatcher(t, 16, false)
	b.Quiet = time.Second
	start := time.Now()
	_, errs := compileAll(b, sources(3, nil))
	if errors.Join(errs...) != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("%v after %v", errs, time.Since(start))
	}
	if s := b.Client.Stats(); s.Builds != 1 {
		t.Errorf("%d builds, want 1", s.Builds)
	}
}

// TestOneBadKernel: a kernel the compiler refuses, or that fails the
// driver's build of its program, is the only one to fail; the others run.
func TestOneBadKernel(t *testing.T) {
	for _, c := range []struct {
		mark string
		lazy bool
		kind tuner.Kind
	}{
		{"COMPILE_FAIL", false, ""},
		{"BUILD_FAIL", false, tuner.CompileError},
		{"BUILD_FAIL", true, tuner.CompileError},
	} {
		b := fakeBatcher(t, 4, c.lazy)
		arts, errs := compileAll(b, sources(4, map[int]string{2: c.mark}))
		for i := range arts {
			err := errs[i]
			if err == nil {
				err = arts[i].Build(bg, i+1)
			}
			if err == nil {
				_, err = arts[i].Kernel().Verify(bg, i+1)
			}
			switch {
			case i == 2 && err == nil:
				t.Errorf("%s (lazy %v): the bad kernel passed", c.mark, c.lazy)
			case i == 2 && c.kind != "" && !kindIs(err, c.kind):
				t.Errorf("%s (lazy %v): %v, want %s", c.mark, c.lazy, err, c.kind)
			case i != 2 && err != nil:
				t.Errorf("%s (lazy %v): configuration %d failed with the bad one: %v", c.mark, c.lazy, i, err)
			}
		}
	}
}
