package spirv_test

import (
	"testing"

	"tltune/compiler/emit/spirv"
	"tltune/compiler/internal/exectest"
	"tltune/device"
)

// TestDifferentialOnDevice runs the compiler's differential test kernels
// (compiler/testdata/exec: every instruction family, views, groups, SPMD
// builtins, subgroup operations, local memory, cooperative matrices) as
// SPIR-V on the device and compares every memref with the reference
// interpreter run on the source, from the same seeded inputs (the kernels'
// conventions are exectest's).
func TestDifferentialOnDevice(t *testing.T) {
	d := openDevice(t)
	for _, k := range exectest.Sources(t, "../../testdata/exec") {
		t.Run(k.Name, func(t *testing.T) { diffProgramOn(t, d, "generic", spirv.Options{}, string(k.Src)) })
	}
}

// diffProgramOn emits src for target with o and compares every kernel of
// it run on d with the interpreter; without a device it only prepares the
// module's bitcode.
func diffProgramOn(t *testing.T, d device.Device, target string, o spirv.Options, src string) {
	_, out := emitWith(t, src, target, o)
	if d == nil {
		prepare(t, out.Module)
		return
	}
	for fi, f := range exectest.Parse(t, []byte(src)).Funcs {
		k := &out.Kernels[fi]
		want, err := exectest.Interpret(f, k)
		if err != nil {
			if target != "generic" {
				// Kernels written for one lane per subgroup may be
				// undefined with more (a lane index that is not uniform).
				t.Skipf("the reference rejects the kernel at subgroup size %d: %v", k.SubgroupSize, err)
			}
			t.Fatalf("interpreter: %v", err)
		}
		got := exectest.Args(f, 1)
		if err := exectest.RunArgs(d, fromModule(d, out.Module), k, got); err != nil {
			t.Fatalf("device: %v", exectest.Detail(err))
		}
		exectest.Compare(t, "SPIR-V", f, want, got)
	}
}
