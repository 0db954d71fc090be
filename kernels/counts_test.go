package kernels

import (
	"testing"

	"tltune/compiler/ir"
)

func TestFLOPs(t *testing.T) {
	for _, c := range []struct {
		s     Spec
		batch int
		want  int64
	}{
		// 2mnk for the plain product.
		{Spec{Op: GEMMOp, M: 64, N: 64, K: 32, DType: F16, Acc: F32, Alpha: 1}, 10, 2 * 64 * 64 * 32 * 10},
		// β = 1 adds onto C inside the multiply-adds: still 2mnk.
		{Spec{Op: GEMMOp, M: 4, N: 5, K: 6, DType: F32, Acc: F32, Alpha: 1, Beta: 1}, 1, 2 * 4 * 5 * 6},
		// α ≠ 1 and β ∉ {0,1}: one multiply per element each.
		{Spec{Op: GEMMOp, M: 4, N: 5, K: 6, DType: F32, Acc: F32, Alpha: 2, Beta: 3}, 1, 2*4*5*6 + 20 + 20},
		// Complex: 8mnk, complex scalings 6 per element.
		{Spec{Op: GEMMOp, M: 4, N: 5, K: 6, DType: C64, Acc: C64, Alpha: 1i, Beta: 2}, 2, 2 * (8*4*5*6 + 6*20 + 6*20)},
		// Real inputs, complex accumulation: real products, complex β.
		{Spec{Op: GEMMOp, M: 2, N: 2, K: 2, DType: F32, Acc: C32, Alpha: 1, Beta: 1i}, 1, 2*8 + 6*4},
		// α that rounds to 1 in f16 counts as 1.
		{Spec{Op: GEMMOp, M: 2, N: 2, K: 2, DType: F16, Acc: F32, Alpha: 1.0001}, 1, 2 * 8},
		{Spec{Op: GEMVOp, M: 64, N: 32, DType: F32, Acc: F32, Alpha: 1}, 3, 3 * 2 * 64 * 32},
		{Spec{Op: GEROp, M: 64, N: 32, DType: F32, Acc: F32, Alpha: 1, Beta: 1}, 1, 2 * 64 * 32},
		{Spec{Op: GEROp, M: 8, N: 4, DType: C32, Acc: C32, Alpha: 0.5, Beta: 0}, 1, 8*32 + 6*32},
	} {
		if got := c.s.flops(c.batch); got != c.want {
			t.Errorf("%s batch %d: %d flops, want %d", c.s.Name(), c.batch, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want int64 // per entry
	}{
		{Spec{Op: GEMMOp, M: 64, N: 64, K: 32, DType: F16, Acc: F32, Layout: Strided, Alpha: 1},
			(64*32+32*64)*2 + 64*64*4},
		{Spec{Op: GEMMOp, M: 64, N: 64, K: 32, DType: F16, Acc: F32, Layout: Strided, Alpha: 1, Beta: 1},
			(64*32+32*64)*2 + 2*64*64*4},
		{Spec{Op: GEMMOp, M: 4, N: 4, K: 4, DType: C64, Acc: C64, Layout: Group, Alpha: 1, Beta: 1, Atomic: true},
			(16+16)*16 + 2*16*16 + 3*8},
		{Spec{Op: GEMVOp, M: 64, N: 32, DType: BF16, Acc: F32, Layout: Strided, Alpha: 1}, (64*32+32)*2 + 64*4},
		{Spec{Op: GEROp, M: 64, N: 32, DType: F64, Acc: F64, Layout: Group, Alpha: 1, Beta: 0.5}, (64+32)*8 + 2*64*32*8 + 3*8},
	} {
		if got := c.s.bytes(5); got != 5*c.want {
			t.Errorf("%s: %d bytes for 5 entries, want %d", c.s.Name(), got, 5*c.want)
		}
	}
}

// The promotion rule of this package must be the language's, as the
// compiler's IR implements it independently.
func TestPromotesToMatchesIR(t *testing.T) {
	for _, a := range DTypes {
		for _, b := range DTypes {
			want := ir.Promotable(ir.BasicByName(a.String()), ir.BasicByName(b.String()))
			if got := a.PromotesTo(b); got != want {
				t.Errorf("%v ⪯ %v: got %v, the IR says %v", a, b, got, want)
			}
		}
	}
}

func TestHostMemory(t *testing.T) {
	gemm := Spec{Op: GEMMOp, M: 64, N: 32, K: 16, DType: F16, Acc: F32, Layout: Strided, Alpha: 1}
	entry := int64((64*16+16*32)*2 + 64*32*4) // A, B, C as the device holds them
	expected := int64(64 * 32 * 16)           // C as complex128
	scratch := int64(16 * (64*16 + 16*32 + 64*32))
	if got, want := gemm.HostMemory(8, 2), 8*(entry+expected)+2*scratch; got != want {
		t.Errorf("8 entries on 2 workers: %d bytes, want %d", got, want)
	}
	if got, want := gemm.HostMemory(1, 16), entry+expected+scratch; got != want {
		t.Errorf("1 entry: %d bytes, want %d (one worker's scratch)", got, want)
	}
	// The largest shapes overflow no int64 (65536² elements an operand).
	huge := Spec{Op: GEMMOp, M: 65536, N: 65536, K: 65536, DType: C64, Acc: C64, Layout: Strided, Alpha: 1}
	if got := huge.HostMemory(8, 128); got < 8*3*65536*65536*16 {
		t.Errorf("65536³ c64: %d bytes, less than its inputs", got)
	}
}
