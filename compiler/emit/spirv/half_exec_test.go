package spirv_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"tltune/compiler/emit/opencl"
	"tltune/device"
)

// TestHalfRoundingOnDevice checks the generic target's rounding of f32 to
// half precision in registers (f16 without native half) on edge cases
// against IEEE round-to-nearest-even: ties, the overflow threshold,
// subnormals, infinities and NaN.
func TestHalfRoundingOnDevice(t *testing.T) {
	d := openDevice(t)
	in := []float32{1, 1 + 1.0/2048, 1 + 3.0/2048, 65504, 65519, 65520, 1e6, -65520,
		0x1p-14, 0x1p-24, 0x1.8p-24, 0x1p-25, 0x1.000002p-25, 3e-8, -0x1.4p-20,
		float32(math.Inf(-1)), float32(math.NaN()), 0.1, -2.71828, 0}
	want := []float32{1, 1, 1 + 4.0/2048, 65504, 65504, float32(math.Inf(1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		0x1p-14, 0x1p-24, 0x1p-23, 0, 0x1p-24, 0x1p-24, -0x1.4p-20,
		float32(math.Inf(-1)), float32(math.NaN()), 0.0999755859375, -2.71875, 0}
	src := fmt.Sprintf(`func @round(%%x: memref<f32x%[1]d>, %%y: memref<f32x%[1]d>) {
    %%c0 = constant 0 : index
    %%c1 = constant 1 : index
    foreach (%%i) = (%%c0), (%%c1) {
        %%n = constant %[1]d : index
        for %%j = %%c0, %%n {
            %%v = load %%x[%%j] : f32
            %%h = cast %%v : f16
            %%r = cast %%h : f32
            store %%r, %%y[%%j]
        }
    }
}`, len(in))
	_, out := emit(t, src, "generic")
	got := make([]float32, len(in))
	bufs := map[int][]float32{0: in, 1: got}
	var read device.Buffer
	bind := func(a opencl.Arg) (device.Arg, error) {
		if a.Role != opencl.RoleData {
			return device.I64(1), nil
		}
		b, err := d.Alloc(int64(4 * len(in)))
		if err != nil {
			return device.Arg{}, err
		}
		t.Cleanup(func() { b.Release() })
		if a.Param == 1 {
			read = b
		}
		return device.Buf(b), b.Write(device.Bytes(bufs[a.Param]))
	}
	if err := run(d, out.Module, &out.Kernels[0], 1, bind); err != nil {
		t.Fatal(detail(err))
	}
	raw := make([]byte, 4*len(in))
	if err := read.Read(raw); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		g := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		same := g == want[i] && math.Signbit(float64(g)) == math.Signbit(float64(want[i])) || g != g && want[i] != want[i]
		if !same {
			t.Errorf("round(%g) = %g, want %g", in[i], g, want[i])
		}
	}
}
