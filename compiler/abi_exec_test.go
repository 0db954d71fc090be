package compiler_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/device"
)

// abiKernel takes a scalar, two dynamically shaped matrices (one with a
// dynamic stride) and a vector, so that its tinytc argument list has every
// kind of entry: scalar, pointer, dynamic shape, dynamic stride.
const abiKernel = `func @scale_add(%alpha: f32, %X: memref<f32x?x?>, %Y: memref<f32x?x?,strided<1,?>>, %N: memref<i64x?>) ATTRS {
    %g = builtin.group_id : index
    %m = size %X[0] : index
    %x = subview %X[0:%m, %g] : memref<f32x?>
    %y = subview %Y[0:%m, %g] : memref<f32x?>
    %one = constant 1.0 : f32
    axpby.n %alpha, %x, %one, %y
    %ng = builtin.group_size : index
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    foreach (%w) = (%c0), (%c1) {
        %n = cast %ng : i64
        store %n, %N[%g]
    }
}
`

// TestTinytcABIOnDevice launches compiled kernels as a host program written
// for tinytc does, through the device API alone (no hostcall): it builds the
// OpenCL C, looks the kernel up by its name, sets exactly tinytc's arguments
// — the scalar, then per memref its pointer and one long per dynamic shape
// and stride entry — and launches one work-group per batch entry. Kernels
// that run two batch entries per work-group work with that launch too (the
// extra work-groups find nothing to do) and with the smaller one of
// Kernel.GlobalSize.
func TestTinytcABIOnDevice(t *testing.T) {
	d := openDevice(t)
	const m, batch, ldy = 7, 5, 9
	for _, c := range []struct {
		name, attrs string
		perGroup    int                          // batch entries per work-group
		groups      func(k *compiler.Kernel) int // work-groups launched
	}{
		{"one entry per work-group", "", 1, func(*compiler.Kernel) int { return batch }},
		{"two per work-group, tinytc's launch", `attributes {"tltune.params"={"batch_per_group"=2}}`, 2,
			func(*compiler.Kernel) int { return batch }},
		{"two per work-group, GlobalSize", `attributes {"tltune.params"={"batch_per_group"=2}}`, 2,
			func(k *compiler.Kernel) int { return int(k.GlobalSize(batch)[0]) / k.WorkGroupSize[0] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := compiler.Compile([]byte(strings.Replace(abiKernel, "ATTRS", c.attrs, 1)), testOptions(d))
			if err != nil {
				t.Fatal(err)
			}
			k := &res.Kernels[0]
			if want := 11; len(k.Args) != want {
				t.Fatalf("%d kernel arguments, want tinytc's %d: %+v", len(k.Args), want, k.Args)
			}
			if k.BatchPerGroup != c.perGroup {
				t.Fatalf("compiled for %d batch entries per work-group, want %d", k.BatchPerGroup, c.perGroup)
			}
			prog, err := d.BuildSource(res.OpenCL, "")
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Release()
			kern, err := prog.Kernel("scale_add")
			if err != nil {
				t.Fatal(err)
			}
			defer kern.Release()
			x, y := make([]float32, m*batch), make([]float32, ldy*batch)
			for i := range x {
				x[i] = float32(i%11) - 3
			}
			for i := range y {
				y[i] = float32(i % 5)
			}
			xb, yb, nb := upload(t, d, device.Bytes(x)), upload(t, d, device.Bytes(y)), upload(t, d, make([]byte, 8*batch))
			err = kern.SetArgs(device.F32(0.5),
				device.Buf(xb), device.I64(m), device.I64(batch), device.I64(m), // X: shape0, shape1, stride1
				device.Buf(yb), device.I64(m), device.I64(batch), device.I64(ldy), // Y: shape0, shape1, stride1
				device.Buf(nb), device.I64(batch)) // N: shape0
			if err != nil {
				t.Fatal(err)
			}
			wx, wy := k.WorkGroupSize[0], k.WorkGroupSize[1]
			ev, err := kern.Launch([]int{c.groups(k) * wx, wy}, []int{wx, wy})
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Release()
			if err := ev.Wait(); err != nil {
				t.Fatal(err)
			}
			gotY, gotN := make([]byte, 4*len(y)), make([]byte, 8*batch)
			if err := yb.Read(gotY); err != nil {
				t.Fatal(err)
			}
			if err := nb.Read(gotN); err != nil {
				t.Fatal(err)
			}
			for j := range batch {
				if n := int64(binary.LittleEndian.Uint64(gotN[8*j:])); n != batch {
					t.Errorf("batch entry %d: group_size %d, want %d", j, n, batch)
				}
				for i := range ldy {
					want := y[j*ldy+i]
					if i < m {
						want += 0.5 * x[j*m+i]
					}
					if got := math.Float32frombits(binary.LittleEndian.Uint32(gotY[4*(j*ldy+i):])); got != want {
						t.Errorf("Y[%d, %d] = %v, want %v", i, j, got, want)
					}
				}
			}
		})
	}
}

func upload(t *testing.T, d device.Device, data []byte) device.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Release() })
	if err := b.Write(data); err != nil {
		t.Fatal(fmt.Errorf("upload: %w", err))
	}
	return b
}
