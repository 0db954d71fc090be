package compiler_test

import (
	"errors"
	"fmt"
	"testing"

	"tltune/compiler"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The differential tests run every kernel of testdata/exec three ways —
// the reference interpreter on the source, the interpreter on the lowered
// program, and the OpenCL C on the device — from the same seeded inputs
// (the kernels' conventions are exectest's), and compare every memref
// argument afterwards.

func TestDifferentialOnDevice(t *testing.T) {
	d := openDevice(t)
	for _, k := range exectest.Sources(t, "testdata/exec") {
		t.Run(k.Name, func(t *testing.T) { diffKernel(t, d, k.Src, testOptions(d)) })
	}
}

// TestLoweringForSubgroups interprets the program lowered for the intel
// and nvidia targets (subgroups of 16 and 32 lanes) and compares it with the
// source: the tile distribution and the cooperative matrices of the
// lowering are checked here at the IR level, where no GPU is needed.
func TestLoweringForSubgroups(t *testing.T) {
	sources := exectest.Sources(t, "testdata/exec")
	for name, src := range recipeSources(t) {
		sources = append(sources, exectest.Source{Name: name, Src: src})
	}
	for _, s := range sources {
		for _, tgt := range []string{"intel", "nvidia"} {
			t.Run(tgt+"/"+s.Name, func(t *testing.T) {
				res, err := compiler.Compile(s.Src, compiler.Options{Target: tgt})
				var cerr *compiler.Error
				if errors.As(err, &cerr) && len(cerr.Diags) > 0 {
					// The source is valid (the device test verifies it),
					// so these are the target's limits.
					t.Skipf("kernel attributes exceed what %s supports: %v", tgt, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				for fi, f := range exectest.Parse(t, s.Src).Funcs {
					want, got := interpretBoth(t, f, res, fi)
					exectest.Compare(t, "lowered for "+tgt, f, want, got)
				}
			})
		}
	}
}

// recipeSources are GEMM, gemv and ger kernels from kernels/ with
// configurations for subgroups of 16 and 32 lanes (ragged shapes, staging,
// unroll, batches, several subgroups per work-group; gemv/ger vector
// widths and tiles that split the lanes between rows and columns).
func recipeSources(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for i, c := range []struct {
		spec kernels.Spec
		p    tuning.Params
	}{
		{kernels.Spec{Op: kernels.GEMMOp, M: 37, N: 19, K: 21, DType: kernels.F16, Acc: kernels.F32, TransB: true, Alpha: 1, Beta: 1},
			tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 20, N: 5, K: 56, DType: kernels.F32, Acc: kernels.F32, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 8}, Coopmatrix: [3]int{16, 4, 8}, Unroll: 2, BatchPerGroup: 2, StageLocal: true}},
		{kernels.Spec{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 2, Beta: 0, Atomic: true},
			tuning.Params{Unroll: 3}},
		{kernels.Spec{Op: kernels.GEMVOp, M: 100, N: 33, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
			tuning.Params{Tile: [2]int{64, 8}, VectorWidth: 4, BatchPerGroup: 2}},
		{kernels.Spec{Op: kernels.GEMVOp, M: 40, N: 48, DType: kernels.F16, Acc: kernels.F32, TransA: true, Alpha: 1, Beta: 1},
			tuning.Params{Tile: [2]int{32, 4}, VectorWidth: 8}},
		{kernels.Spec{Op: kernels.GEROp, M: 72, N: 9, DType: kernels.F32, Acc: kernels.F32, Alpha: -1, Beta: 0.5},
			tuning.Params{Tile: [2]int{32, 4}, VectorWidth: 4}},
		// Several subgroups per work-group: tiles and results past the
		// edge are masked, not skipped (uniform loops).
		{kernels.Spec{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1, Beta: 0},
			tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 7, N: 33, K: 3, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 0},
			tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 53, N: 23, K: 56, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{WorkGroupSize: [2]int{64, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 4}, Unroll: 2, BatchPerGroup: 1}},
		// Subgroups of 16 lanes on both targets (half-warps on nvidia),
		// two to a work-group row, staged.
		{kernels.Spec{Op: kernels.GEMMOp, M: 13, N: 16, K: 19, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 0.5},
			tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 16}, Unroll: 1,
				BatchPerGroup: 2, StageLocal: true, Stages: 2}},
		// C through local memory: f16 products of staged panels stored by
		// four subgroups (mma.sync fragments on nvidia), written element by
		// element in 8 rounds (C's columns unaligned); f32 chunks of 16
		// bytes dealt to 16 work-items without a fixed row or column, the
		// last round partial.
		{kernels.Spec{Op: kernels.GEMMOp, M: 37, N: 19, K: 40, DType: kernels.F16, Acc: kernels.F32, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{16, 8, 16}, Unroll: 2,
				BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 8, LocalEpilogue: true}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 52, N: 9, K: 19, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
			tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{48, 4}, Coopmatrix: [3]int{16, 2, 8}, Unroll: 1,
				BatchPerGroup: 1, LocalEpilogue: true}},
	} {
		src, err := newRecipe(t, c.spec).Source(c.p)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("recipe%d", i)] = []byte(src)
	}
	return out
}

func diffKernel(t *testing.T, d device.Device, src []byte, opts compiler.Options) {
	res, err := compiler.Compile(src, opts)
	var cerr *compiler.Error
	if tgt := targetName(opts); tgt != "generic" && errors.As(err, &cerr) && len(cerr.Diags) > 0 {
		t.Skipf("kernel attributes exceed what %s supports: %v", tgt, err)
	}
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	diffCompiled(t, d, src, res)
}

// diffCompiled runs every kernel of res, compiled from src, on d and on the
// interpreter (source and lowered program) and compares them.
func diffCompiled(t *testing.T, d device.Device, src []byte, res *compiler.Result) {
	t.Helper()
	for fi, f := range exectest.Parse(t, src).Funcs {
		want, lowered := interpretBoth(t, f, res, fi)
		exectest.Compare(t, "lowered program (interpreter)", f, want, lowered)
		k := &res.Kernels[fi]
		got := exectest.Args(f, 1)
		if err := exectest.RunArgs(d, openCL(d, res), k, got); err != nil {
			t.Fatalf("device: %v\n%s", exectest.Detail(err), res.OpenCL)
		}
		exectest.Compare(t, "OpenCL C on "+d.Info().Name, f, want, got)
	}
}

// interpretBoth runs f, function fi of the source, and the same function of
// res's lowered program on the interpreter as res's kernel fi was compiled,
// and returns the arguments of each afterwards.
func interpretBoth(t *testing.T, f *ir.Func, res *compiler.Result, fi int) (source, lowered []interp.Arg) {
	t.Helper()
	k := &res.Kernels[fi]
	source, err := exectest.Interpret(f, k)
	if err != nil {
		t.Fatalf("interpreter on the source: %v", err)
	}
	lowered = exectest.Args(f, 1)
	if err := interp.Run(res.Lowered.Funcs[fi], lowered, exectest.InterpOptions(k)); err != nil {
		t.Fatalf("interpreter on the lowered program: %v", err)
	}
	return source, lowered
}
