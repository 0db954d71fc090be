package main

import (
	"bytes"
	"testing"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// TestFormCompilerSPIRVOnly: on a device that builds SPIR-V, programs after
// the first are compiled to SPIR-V alone, into the same module; on one that
// builds OpenCL C, every program keeps its source.
func TestFormCompilerSPIRVOnly(t *testing.T) {
	r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 16, N: 8, K: 8, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Layout: kernels.Strided})
	if err != nil {
		t.Fatal(err)
	}
	src, err := r.Source(tuning.Params{SubgroupSize: 1, WorkGroupSize: [2]int{2, 1}, Tile: [2]int{8, 8},
		Coopmatrix: [3]int{4, 4, 1}, Unroll: 1, BatchPerGroup: 1})
	if err != nil {
		t.Fatal(err)
	}
	srcs, names := [][]byte{[]byte(src)}, []string{"k0"}
	for _, tc := range []struct {
		info device.Info
		path devcall.Path
	}{
		{device.Info{Name: "Arc", Runtime: device.LevelZero}, devcall.PathSPIRV},
		{device.Info{Name: "PoCL", Runtime: device.OpenCL}, devcall.PathOpenCLC},
	} {
		compile := formCompiler(tc.info, compiler.Options{Target: "generic"})
		first, err := compile(srcs, names)
		if err != nil {
			t.Fatal(err)
		}
		second, err := compile(srcs, names)
		if err != nil {
			t.Fatal(err)
		}
		if first.Path != tc.path || second.Path != tc.path {
			t.Fatalf("%s: paths %s and %s, want %s", tc.info.Name, first.Path, second.Path, tc.path)
		}
		if !bytes.Equal(first.SPIRV, second.SPIRV) || first.Source != second.Source {
			t.Errorf("%s: the second program differs from the first", tc.info.Name)
		}
		if tc.path == devcall.PathSPIRV && len(second.SPIRV) == 0 || tc.path == devcall.PathOpenCLC && second.Source == "" {
			t.Errorf("%s: the %s program is empty", tc.info.Name, tc.path)
		}
	}
}
