package compiler_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/numeric"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The intel target calls Intel's DPAS built-ins
// (cl_intel_subgroup_matrix_multiply_accumulate) where the device lists the
// extension. No such device is at hand, so the tests here run that code on
// a device with cl_intel_subgroups (PoCL 5) with the built-ins supplied by
// testdata/targets/dpas_emulation.h, an OpenCL C emulation written from the
// extension's specification and prepended to every program built:
// TestDPASEmulation checks the emulation against a host product on
// operands laid out as the specification describes, and TestDPASOnDevice
// compiles GEMMs for the device described as having the extension and
// compares them with the reference interpreter, which proves the fragment
// layouts the emitter builds. CI's PoCL 3.1 has no subgroups: there both
// skip and say why, and TestDPASConfigsCompile checks that the
// configurations call the built-ins and compile with the emulation. On the
// GPU machine, from compiler/: TLTUNE_TEST_DEVICE=cpu (PoCL 5's name or
// opencl:N) compiler.test -test.run DPAS.

const (
	dpasExtension     = "cl_intel_subgroup_matrix_multiply_accumulate"
	dpasEmulationFile = "testdata/targets/dpas_emulation.h"
)

// dpasCall is the start of the built-in call the intel target emits for
// dtype at subgroup size sgs: A as short8 at 16 lanes, int8 at 8.
func dpasCall(dtype kernels.DType, sgs int) string {
	a := map[int]string{8: "int8", 16: "short8"}[sgs]
	return fmt.Sprintf("intel_sub_group_%[1]s_%[1]s_matrix_mad_k16((%[2]s)", dtype, a)
}

// dpasTarget describes dev as having DPAS at subgroup size sgs: the
// extension, and sgs as its smallest subgroup size (the built-ins work at
// the device's minimum subgroup size only).
func dpasTarget(dev target.Device, sgs int) *target.Device {
	dev.SubgroupSizes = slices.DeleteFunc(slices.Clone(dev.SubgroupSizes), func(s int) bool { return s < sgs })
	if !slices.Contains(dev.Extensions, dpasExtension) {
		dev.Extensions = append(slices.Clone(dev.Extensions), dpasExtension)
	}
	return &dev
}

// dpasDevice is dpasTarget of the device info describes; it skips where
// the device has no subgroups of sgs lanes, or lists the extension itself
// but at another subgroup size.
func dpasDevice(t *testing.T, info device.Info, sgs int) *target.Device {
	t.Helper()
	if !slices.Contains(info.SubgroupSizes, sgs) || info.HasExtension(dpasExtension) && slices.Min(info.SubgroupSizes) != sgs {
		t.Skipf("%s has no DPAS at subgroup size %d (subgroup sizes %v)", info.Name, sgs, info.SubgroupSizes)
	}
	return dpasTarget(*devcall.TargetDevice(info), sgs)
}

// openDPASDevice returns the test device with the DPAS built-ins: its own
// where it lists the extension, else with the emulation in front of every
// program it builds. It skips where the device has no cl_intel_subgroups.
func openDPASDevice(t *testing.T) device.Device {
	t.Helper()
	d := openDevice(t)
	info := d.Info()
	if !info.HasExtension("cl_intel_subgroups") {
		t.Skipf("%s has no cl_intel_subgroups, whose shuffles the DPAS emulation needs (PoCL 5 has them; TLTUNE_TEST_DEVICE names the device)", info.Name)
	}
	if info.HasExtension(dpasExtension) {
		return d
	}
	header, err := os.ReadFile(dpasEmulationFile)
	if err != nil {
		t.Fatal(err)
	}
	return withPrelude{d, string(header)}
}

// withPrelude is a device that builds every OpenCL C program with prelude
// in front of its source.
type withPrelude struct {
	device.Device
	prelude string
}

func (d withPrelude) BuildSource(src, options string) (device.Program, error) {
	return d.Device.BuildSource(d.prelude+src, options)
}

// TestDPASOnDevice runs GEMMs that call the DPAS built-ins, f16 and bf16
// at subgroup sizes 8 and 16, on ragged shapes with every transpose (they
// rotate over the configurations), against the reference interpreter.
// With TLTUNE_TEST_DPAS_CASE=i it runs case i alone (exectest.PickedCases):
// PoCL 5 takes minutes to build some of them.
func TestDPASOnDevice(t *testing.T) {
	cases := exectest.PickedCases(t, dpasCases())
	d := openDPASDevice(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRecipe(t, c.spec)
			src, err := r.Source(c.p)
			if err != nil {
				t.Fatal(err)
			}
			res := compileRecipe(t, r, c.p, compiler.Options{Device: dpasDevice(t, d.Info(), c.p.SubgroupSize)})
			if call := dpasCall(c.spec.DType, c.p.SubgroupSize); !strings.Contains(res.OpenCL, call) {
				t.Fatalf("no %s in the kernel", call)
			}
			diffCompiled(t, d, []byte(src), res)
		})
	}
}

type dpasCase struct {
	name string
	spec kernels.Spec
	p    tuning.Params
}

// dpasCases are TestDPASOnDevice's cases in order: every configuration of
// exectest.DPASConfigs on five shapes, the transposes and dtypes rotating.
func dpasCases() []dpasCase {
	shapes := [][3]int{{53, 23, 56}, {64, 64, 32}, {20, 5, 56}, {96, 80, 40}, {7, 33, 3}}
	transposes := [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	dtypes := []kernels.DType{kernels.F16, kernels.BF16}
	var cases []dpasCase
	for _, sgs := range []int{8, 16} {
		for ci, p := range exectest.DPASConfigs[sgs] {
			for si, sh := range shapes {
				tr, dtype := transposes[(si+ci)%len(transposes)], dtypes[(si+ci)%len(dtypes)]
				cases = append(cases, dpasCase{
					name: fmt.Sprintf("sg%d/%s/%dx%dx%d/%s/%v", sgs, dtype, sh[0], sh[1], sh[2], transName(tr), p),
					spec: kernels.Spec{Op: kernels.GEMMOp, M: sh[0], N: sh[1], K: sh[2], DType: dtype, Acc: kernels.F32,
						TransA: tr[0], TransB: tr[1], Alpha: 1.5, Beta: 0.5},
					p: p,
				})
			}
		}
	}
	return cases
}

// TestDPASConfigsCompile: every configuration of TestDPASOnDevice calls
// the built-ins for both dtypes, and its OpenCL C compiles with the
// emulation (clang-15, spir64 with cl_intel_subgroups), for a device like
// PoCL 5 described as having DPAS. It runs where the device test cannot.
func TestDPASConfigsCompile(t *testing.T) {
	header, err := filepath.Abs(dpasEmulationFile)
	if err != nil {
		t.Fatal(err)
	}
	pocl5 := target.Device{Name: "PoCL 5", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp64"}, SubgroupSizes: []int{1, 2, 4, 8, 16, 32, 64}}
	for _, sgs := range []int{8, 16} {
		for ci, p := range exectest.DPASConfigs[sgs] {
			for _, dtype := range []kernels.DType{kernels.F16, kernels.BF16} {
				t.Run(fmt.Sprintf("sg%d/cfg%d/%s", sgs, ci, dtype), func(t *testing.T) {
					r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 53, N: 23, K: 56, DType: dtype, Acc: kernels.F32,
						TransB: ci%2 == 1, Alpha: 1.5, Beta: 0.5})
					res := compileRecipe(t, r, p, compiler.Options{Device: dpasTarget(pocl5, sgs)})
					if call := dpasCall(dtype, sgs); !strings.Contains(res.OpenCL, call) {
						t.Fatalf("no %s in the kernel:\n%s", call, res.OpenCL)
					}
					clangCompile(t, "intel", res.OpenCL, "-include", header)
				})
			}
		}
	}
}

// dpasCheckKernel calls one built-in once on operands laid out by the host,
// in a work-group of one subgroup: lane l's a, b and acc vectors are
// elements 8l to 8l+7 of the buffers of those names, and its result goes
// to the same elements of d.
const dpasCheckKernel = `__attribute__((intel_reqd_sub_group_size(%[1]d)))
kernel void check(global const %[2]s* a, global const int* b, global const float* acc, global float* d)
{
    const size_t l = get_global_id(0);
    vstore8(intel_sub_group_%[3]s_%[3]s_matrix_mad_k16(vload8(l, a), vload8(l, b), vload8(l, acc)), l, d);
}
`

// TestDPASEmulation checks the built-ins (the emulation, or the device's
// own) against a product computed on the host, for f16 and bf16 at
// subgroup sizes 8 and 16, independently of tltune's emitter.
func TestDPASEmulation(t *testing.T) {
	d := openDPASDevice(t)
	for _, dtype := range []kernels.DType{kernels.F16, kernels.BF16} {
		for _, sgs := range []int{8, 16} {
			t.Run(fmt.Sprintf("%s/sg%d", dtype, sgs), func(t *testing.T) {
				dpasDevice(t, d.Info(), sgs)
				checkDPAS(t, d, dtype, sgs)
			})
		}
	}
}

// dpasOperands are an 8×16 A, a 16×sgs B and an 8×sgs C as the built-ins
// take them, written out from the extension's specification: lane l holds
// column l of B and C (C's row m in component m, B's rows 2j and 2j+1 in the
// low and high half of component j) and its share of every row of A,
// component m holding row m: column l at 16 lanes, columns 2l (low half)
// and 2l+1 (high half) at 8 lanes.
type dpasOperands struct {
	a   []byte // per lane 8 shorts (16 lanes) or 8 ints (8 lanes)
	b   []int32
	acc []float32
}

func layDPASOperands(bits func(float64) uint16, a, b, c [][]float64, sgs int) dpasOperands {
	var o dpasOperands
	var a16 []uint16
	var a32 []uint32
	pair := func(lo, hi float64) uint32 { return uint32(bits(lo)) | uint32(bits(hi))<<16 }
	for l := range sgs {
		for m := range 8 {
			if sgs == 16 {
				a16 = append(a16, bits(a[m][l]))
			} else {
				a32 = append(a32, pair(a[m][2*l], a[m][2*l+1]))
			}
			o.acc = append(o.acc, float32(c[m][l]))
		}
		for j := range 8 {
			o.b = append(o.b, int32(pair(b[2*j][l], b[2*j+1][l])))
		}
	}
	o.a = slices.Concat(device.Bytes(a16), device.Bytes(a32))
	return o
}

// checkDPAS runs the built-in for dtype at subgroup size sgs on random
// operands and compares every element of the result with the host's
// acc + a·b, within twice the worst error of 16 fma steps in fp32.
func checkDPAS(t *testing.T, d device.Device, dtype kernels.DType, sgs int) {
	bits, value := numeric.F16Bits, numeric.F16FromBits
	if dtype == kernels.BF16 {
		bits, value = numeric.BF16Bits, numeric.BF16FromBits
	}
	r := rand.New(rand.NewPCG(uint64(sgs), 7))
	random := func(rows, cols int, round bool) [][]float64 {
		m := make([][]float64, rows)
		for i := range m {
			for range cols {
				x := 2*r.Float64() - 1
				if round {
					x = value(bits(x))
				}
				m[i] = append(m[i], float64(float32(x)))
			}
		}
		return m
	}
	a, b, c := random(8, 16, true), random(16, sgs, true), random(8, sgs, false)
	ops := layDPASOperands(bits, a, b, c, sgs)

	aType := map[int]string{8: "int", 16: "short"}[sgs]
	prog, err := d.BuildSource(fmt.Sprintf(dpasCheckKernel, sgs, aType, dtype), "")
	if err != nil {
		t.Fatal(exectest.Detail(err))
	}
	defer prog.Release()
	k, err := prog.Kernel("check")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	out := make([]float32, 8*sgs)
	bufs := []device.Buffer{
		deviceBuffer(t, d, ops.a), deviceBuffer(t, d, device.Bytes(ops.b)),
		deviceBuffer(t, d, device.Bytes(ops.acc)), deviceBuffer(t, d, device.Bytes(out)),
	}
	args := make([]device.Arg, len(bufs))
	for i, buf := range bufs {
		args[i] = device.Buf(buf)
	}
	if err := k.SetArgs(args...); err != nil {
		t.Fatal(err)
	}
	ev, err := k.Launch([]int{sgs}, []int{sgs})
	if err == nil {
		err = ev.Wait()
		ev.Release()
	}
	if err == nil {
		err = bufs[3].Read(device.Bytes(out))
	}
	if err != nil {
		t.Fatal(err)
	}
	for m := range 8 {
		for n := range sgs {
			want, scale := c[m][n], math.Abs(c[m][n])
			for k := range 16 {
				want += a[m][k] * b[k][n]
				scale += math.Abs(a[m][k] * b[k][n])
			}
			if got := float64(out[n*8+m]); math.Abs(got-want) > 2*16*0x1p-24*scale || math.IsNaN(got) {
				t.Errorf("row %d, column %d: got %v, want %v", m, n, got, want)
			}
		}
	}
}

// deviceBuffer allocates a buffer holding data, released when the test ends.
func deviceBuffer(t *testing.T, d device.Device, data []byte) device.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(len(data)))
	if err == nil {
		err = b.Write(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Release() })
	return b
}
