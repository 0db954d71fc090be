package ir

import "testing"

func TestTypesAreInterned(t *testing.T) {
	a := Memref(F32, []int64{4, 8}, nil, Global)
	b := Memref(F32, []int64{4, 8}, []int64{1, 4}, Global)
	if a != b {
		t.Fatalf("packed layout spelled out gives a different type: %v vs %v", a, b)
	}
	if got := a.String(); got != "memref<f32x4x8>" {
		t.Errorf("String = %q", got)
	}
	c := Memref(F32, []int64{4, Dynamic}, []int64{1, 8}, Local)
	if got := c.String(); got != "memref<f32x4x?, strided<1,8>, local>" {
		t.Errorf("String = %q", got)
	}
	g := Group(c, Dynamic, Dynamic)
	if got := g.String(); got != "group<memref<f32x4x?, strided<1,8>, local>x?, offset: ?>" {
		t.Errorf("String = %q", got)
	}
	if Memref(F32, []int64{5, 6, 7}, nil, Global) != Memref(F32, []int64{5, 6, 7}, []int64{1, 5, 30}, Global) {
		t.Error("memref<f32x5x6x7> and memref<f32x5x6x7,strided<1,5,30>> differ")
	}
	if Coopmatrix(F16, 8, 16, MatrixA) != Coopmatrix(F16, 8, 16, MatrixA) {
		t.Error("coopmatrix types are not interned")
	}
}

func TestPackedStrideAfterDynamicMode(t *testing.T) {
	got := PackedStride([]int64{4, Dynamic, 3})
	want := []int64{1, 4, Dynamic}
	if !equalInts(got, want) {
		t.Errorf("PackedStride = %v, want %v", got, want)
	}
}

func TestPromote(t *testing.T) {
	for _, c := range []struct{ a, b, want *Type }{
		{I8, F16, F16}, {F16, I16, nil}, {BF16, F16, nil}, {I32, F32, nil},
		{I32, F64, F64}, {F64, C32, nil}, {C32, F32, C32}, {I64, Index, Index},
	} {
		if got := Promote(c.a, c.b); got != c.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestFormatFloatRoundTrips(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 0.5: "0.5", 1e300: "1.0e+300", -2.5e-7: "-2.5e-07"} {
		if got := FormatFloat(f); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// buildLoop builds: for %i = %0, %1 init(%acc = %c) -> (f32) { %s = add; yield }.
func buildLoop() (*Func, *Inst) {
	f := NewFunc("k", []string{"a"}, []*Type{F32})
	b := NewBuilder(f.Body)
	lo, hi := b.IntConst(0, Index), b.IntConst(8, Index)
	loop := b.For(lo, hi, nil, f.Params[0])
	body := NewBuilder(loop.Body())
	s := body.Arith(Add, loop.Body().Args[1], f.Params[0])
	body.Yield(s)
	return f, loop
}

func TestCloneRemapsInnerValues(t *testing.T) {
	f, _ := buildLoop()
	g := f.Clone()
	p, q := &Program{Funcs: []*Func{f}}, &Program{Funcs: []*Func{g}}
	if d := Diff(p, q); d != "" {
		t.Fatalf("clone differs: %s", d)
	}
	cloop := g.Body.Insts[2]
	add := cloop.Body().Insts[0]
	if add.Operands[0] != cloop.Body().Args[1] || add.Operands[1] != g.Params[0] {
		t.Error("clone still uses the original's values")
	}
	if add.Parent != cloop.Body() || cloop.Body().Parent != cloop {
		t.Error("clone has stale parent links")
	}
}

func TestReplaceUsesAndDiff(t *testing.T) {
	f, loop := buildLoop()
	g := f.Clone()
	b := &Builder{Region: f.Body, At: 0}
	zero := b.FloatConst(0, F32)
	if n := f.Body.ReplaceUses(f.Params[0], zero); n != 2 {
		t.Fatalf("ReplaceUses changed %d operands, want 2", n)
	}
	if got := len(f.Body.Uses(zero)); got != 2 {
		t.Errorf("Uses = %d instructions, want 2", got)
	}
	if Diff(&Program{Funcs: []*Func{f}}, &Program{Funcs: []*Func{g}}) == "" {
		t.Error("Diff misses an inserted instruction")
	}
	if loop.Mnemonic() != "for" {
		t.Errorf("Mnemonic = %q", loop.Mnemonic())
	}
}

func TestMnemonic(t *testing.T) {
	in := NewInst(OpCoopMatrixStore, nil)
	in.Checked, in.Atomic = RowsChecked, AtomicAdd
	if got := in.Mnemonic(); got != "cooperative_matrix_store.rows_checked.atomic_add" {
		t.Errorf("Mnemonic = %q", got)
	}
	g := NewInst(OpGemm, nil)
	g.TransB, g.Atomic = Trans, Atomic
	if got := g.Mnemonic(); got != "gemm.n.t.atomic" {
		t.Errorf("Mnemonic = %q", got)
	}
}
