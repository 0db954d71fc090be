package lower

import (
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
)

// The alignment proof follows parameters, groups, subviews and allocas,
// and vectorWidth takes the widest vector every access of the shape can use.
func TestVectorWidthProof(t *testing.T) {
	prog, errs := syntax.Parse([]byte(`func @k(%A: memref<f32x64x8x?> {alignment=16}, %B: memref<f32x63x8x?> {alignment=16},
        %G: group<memref<f16x24x3>x?> {alignment=16}, %H: memref<f64x16>, %D: memref<f32x?x4>) {
    %g = builtin.group_id : index
    %a = subview %A[0:64, 0:8, %g] : memref<f32x64x8>
    %a2 = subview %A[2:60, 0:8, %g] : memref<f32x60x8>
    %a4 = subview %A[4:60, 0:8, %g] : memref<f32x60x8>
    %b = subview %B[0:63, 0:8, %g] : memref<f32x63x8>
    %e = load %G[%g] : memref<f16x24x3>
    %l = alloca {alignment=8} : memref<f32x8x2, local>
}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f := prog.Funcs[0]
	vals := map[string]*ir.Value{}
	for _, p := range f.Params {
		vals[p.Name] = p
	}
	for _, in := range f.Body.Insts {
		if r := in.Result(); r != nil {
			vals[r.Name] = r
		}
	}
	for _, c := range []struct {
		name       string
		align      int64
		width, got int
	}{
		{"a", 16, 8, 4},  // 128 bits of f32
		{"a2", 8, 4, 2},  // two floats in: 8-byte aligned
		{"a4", 16, 4, 4}, // four floats in
		{"b", 16, 4, 1},  // entries 504 floats apart, columns 63
		{"e", 16, 16, 8}, // f16 members of a 16-byte aligned group
		{"l", 8, 4, 2},   // local memory as its attribute says
		{"H", 8, 2, 1},   // no attribute: the element size
		{"D", 4, 4, 1},   // a dynamic stride proves nothing
		{"a", 16, 1, 1},  // scalar asked: scalar
	} {
		v := vals[c.name]
		if got := ir.Alignment(f, v); got != c.align {
			t.Errorf("alignment of %%%s = %d, want %d", c.name, got, c.align)
		}
		if got := vectorWidth(f, v, c.width); got != c.got {
			t.Errorf("vectorWidth(%%%s, %d) = %d, want %d", c.name, c.width, got, c.got)
		}
	}
}

// newTiling fits any tile to the subgroup; MatvecTile reports the result.
func TestMatvecTile(t *testing.T) {
	for _, c := range []struct {
		sgs, w int
		tile   [2]int
		want   [2]int
		l0     int
	}{
		{32, 4, [2]int{64, 8}, [2]int{64, 8}, 16},       // 16 lanes down, 2 across, 4 columns each
		{32, 4, [2]int{512, 1}, [2]int{512, 1}, 32},     // 4 vectors per lane
		{32, 8, [2]int{8, 1}, [2]int{8, 32}, 1},         // one vector down: 32 lanes across
		{32, 4, [2]int{100, 3}, [2]int{128, 4}, 16},     // rounded up: whole vectors and lanes
		{1, 4, [2]int{2, 5}, [2]int{4, 5}, 1},           // one lane: at least one vector
		{16, 1, [2]int{1 << 20, 4}, [2]int{256, 4}, 16}, // at most 16 vectors per lane
	} {
		if got := MatvecTile(c.sgs, c.w, c.tile); got != c.want {
			t.Errorf("MatvecTile(%d, %d, %v) = %v, want %v", c.sgs, c.w, c.tile, got, c.want)
		}
		if tl := newTiling(c.sgs, c.w, c.tile); tl.l0 != c.l0 || tl.l0*tl.l1 != c.sgs {
			t.Errorf("newTiling(%d, %d, %v): lanes %dx%d, want %d down", c.sgs, c.w, c.tile, tl.l0, tl.l1, c.l0)
		}
	}
}

// The heuristic gives gemv and ger 128-bit vectors and a tile the lowering
// takes as it is.
func TestMatvecHeuristic(t *testing.T) {
	for _, c := range []struct {
		src  string
		want tuning.Params
	}{
		{`func @k(%x: memref<f32x64>, %y: memref<f32x64>, %C: memref<f32x64x64>) {
    %one = constant 1.0 : f32
    ger %one, %x, %y, %one, %C
}`, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 4}, Tile: [2]int{64, 8}, Unroll: 1, BatchPerGroup: 1, VectorWidth: 4}},
		{`func @k(%A: memref<f16x256x64>, %x: memref<f16x64>, %y: memref<f32x256>) {
    %one = constant 1.0 : f16
    %b = constant 0.0 : f32
    gemv.n %one, %A, %x, %b, %y
}`, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{256, 4}, Unroll: 1, BatchPerGroup: 1, VectorWidth: 8}},
	} {
		prog, errs := syntax.Parse([]byte(c.src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		f := prog.Funcs[0]
		got := heuristic(f, mainCollective(f), target.Nvidia())
		if got != c.want {
			t.Errorf("got %v, want %v", got, c.want)
		}
		if MatvecTile(got.SubgroupSize, got.VectorWidth, got.Tile) != got.Tile {
			t.Errorf("%v: the lowering would change the tile", got)
		}
	}
}
