package spirv_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"tltune/compiler/hostcall"
	"tltune/compiler/internal/exectest"
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
	memref := func(data []byte) *hostcall.Memref {
		return &hostcall.Memref{Data: &hostcall.Blob{Data: data}, Shape: []int64{int64(len(in))}, Stride: []int64{1}}
	}
	y := memref(make([]byte, 4*len(in)))
	call, err := hostcall.Bind(&out.Kernels[0], []hostcall.Param{{Memref: memref(device.Bytes(in))}, {Memref: y}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := exectest.Run(d, fromModule(d, out.Module), call); err != nil {
		t.Fatal(exectest.Detail(err))
	}
	raw := y.Data.Data
	for i := range in {
		g := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		same := g == want[i] && math.Signbit(float64(g)) == math.Signbit(float64(want[i])) || g != g && want[i] != want[i]
		if !same {
			t.Errorf("round(%g) = %g, want %g", in[i], g, want[i])
		}
	}
}
