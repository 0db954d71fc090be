package main

import (
	"slices"
	"testing"

	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
	"tltune/tuner"
	"tltune/tuner/bincache"
)

// TestCheapConfigs: of the configurations a run noted, those whose kernel
// the cache still holds are cheap; the others (evicted, say) leave the
// note.
func TestCheapConfigs(t *testing.T) {
	bins, err := bincache.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &tuneRun{bins: bins, info: device.Info{Name: "a device", Driver: "1.0", Runtime: "opencl"}}
	spec := kernels.Spec{Op: kernels.GEMMOp, M: 20, N: 5, K: 7, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 1, Layout: kernels.Strided}
	recipe, err := kernels.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	copts := r.setupFor(spec.Precision).copts
	kept := tuning.Params{SubgroupSize: 1, WorkGroupSize: [2]int{1, 2}, Tile: [2]int{8, 4}, Coopmatrix: [3]int{4, 4, 1}, Unroll: 1, BatchPerGroup: 1}
	evicted := kept
	evicted.Unroll = 2
	rep := &tuner.Report{Outcomes: []tuner.Outcome{{Params: kept, Kind: tuner.OK}, {Params: evicted, Kind: tuner.OK},
		{Params: tuning.Params{SubgroupSize: 1}, Kind: tuner.WrongResult}}}
	if err := r.noteBuilt(spec, rep); err != nil {
		t.Fatal(err)
	}
	cacheKernel(t, r, recipe, kept, devcall.PathOpenCLC)
	if got := r.cheapConfigs(recipe); !slices.Equal(got, []tuning.Params{kept}) {
		t.Errorf("cheap: %v, want only %v", got, kept)
	}
	if lines, _ := bins.Noted(r.buildNoteKey(spec, copts)); len(lines) != 1 {
		t.Errorf("the note keeps %d lines, want the cached configuration's alone", len(lines))
	}
}

// TestSearchPath: a gp run leaves the configurations it evaluated in the
// order it proposed them; a shorter run along the same path leaves the
// longer one, another path replaces it; another seed has none.
func TestSearchPath(t *testing.T) {
	bins, err := bincache.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &tuneRun{bins: bins, info: device.Info{Name: "a device", Driver: "1.0", Runtime: "opencl"},
		flags: &tuneFlags{strategy: "gp", seed: 1}}
	spec := kernels.Spec{Op: kernels.GEMMOp, M: 20, N: 5, K: 7, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 1, Layout: kernels.Strided}
	recipe, err := kernels.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	p := func(unroll int) tuning.Params { return tuning.Params{SubgroupSize: 1, Unroll: unroll} }
	note := func(outcomes ...tuner.Outcome) {
		t.Helper()
		if err := r.notePath(spec, &tuner.Report{Outcomes: outcomes}); err != nil {
			t.Fatal(err)
		}
	}
	// Finished out of order; a configuration the recipe refused has no Seq.
	note(tuner.Outcome{Params: p(2), Seq: 2}, tuner.Outcome{Params: p(1), Seq: 1, Kind: tuner.WrongResult},
		tuner.Outcome{Params: p(9), Kind: tuner.Pruned}, tuner.Outcome{Params: p(3), Seq: 3})
	want := []tuning.Params{p(1), p(2), p(3)}
	if got := r.searchPath(recipe); !slices.Equal(got, want) {
		t.Fatalf("path %v, want %v", got, want)
	}
	note(tuner.Outcome{Params: p(1), Seq: 1}, tuner.Outcome{Params: p(2), Seq: 2})
	if got := r.searchPath(recipe); !slices.Equal(got, want) {
		t.Errorf("after a shorter run along it: %v, want %v", got, want)
	}
	note(tuner.Outcome{Params: p(1), Seq: 1}, tuner.Outcome{Params: p(4), Seq: 2})
	if got := r.searchPath(recipe); !slices.Equal(got, []tuning.Params{p(1), p(4)}) {
		t.Errorf("after another path: %v", got)
	}
	r.flags.seed = 2
	if got := r.searchPath(recipe); got != nil {
		t.Errorf("another seed: %v", got)
	}
}

// TestCheapConfigsPTX: a kernel the cache holds as PTX is cheap to a --ptx
// run only: another run would build its OpenCL C.
func TestCheapConfigsPTX(t *testing.T) {
	for _, ptx := range []bool{false, true} {
		bins, err := bincache.Open(t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		r := &tuneRun{bins: bins, info: device.Info{Name: "a device", Driver: "1.0", Runtime: "opencl"}}
		r.copts.PTX = ptx
		spec := kernels.Spec{Op: kernels.GEROp, M: 20, N: 5, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 1, Layout: kernels.Strided}
		recipe, err := kernels.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		p := tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{32, 4}, Unroll: 1, BatchPerGroup: 1, VectorWidth: 1}
		if err := r.noteBuilt(spec, &tuner.Report{Outcomes: []tuner.Outcome{{Params: p, Kind: tuner.OK}}}); err != nil {
			t.Fatal(err)
		}
		cacheKernel(t, r, recipe, p, devcall.PathPTX)
		if got := r.cheapConfigs(recipe); len(got) != map[bool]int{false: 0, true: 1}[ptx] {
			t.Errorf("--ptx %v: cheap %v", ptx, got)
		}
	}
}

// cacheKernel puts a program for configuration p of recipe into r's cache
// and indexes p's kernel in it as built by path.
func cacheKernel(t *testing.T, r *tuneRun, recipe kernels.Recipe, p tuning.Params, path devcall.Path) {
	t.Helper()
	src, err := recipe.Source(p)
	if err != nil {
		t.Fatal(err)
	}
	program := bincache.Key("program", src)
	if err := r.bins.Put(program, []byte("binary")); err != nil {
		t.Fatal(err)
	}
	copts := r.setupFor(recipe.Spec().Precision).copts
	if err := r.bins.Index(r.kernelKey(copts)(path, tuner.SourceHash(src)), program, "k"); err != nil {
		t.Fatal(err)
	}
}
