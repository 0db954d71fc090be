package kernels

import (
	"fmt"
	"testing"

	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/compiler/tuning"
)

// parse parses a recipe's source, which must hold exactly one function.
func parse(t *testing.T, s Spec, p tuning.Params) *ir.Func {
	t.Helper()
	src, err := s.source(p)
	if err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
	prog, errs := syntax.Parse([]byte(src))
	if len(errs) > 0 || len(prog.Funcs) != 1 {
		t.Fatalf("%s: %d functions, errors:\n%v\n%s", s.Name(), len(prog.Funcs), errs, src)
	}
	return prog.Funcs[0]
}

// decodeParams reads a configuration back from a function's attributes the
// way the package documentation tells the compiler to.
func decodeParams(f *ir.Func) (tuning.Params, error) {
	var p tuning.Params
	if sg, ok := f.SubgroupSize(); ok {
		p.SubgroupSize = int(sg)
	}
	if wg, ok := f.WorkGroupSize(); ok {
		p.WorkGroupSize = [2]int{int(wg[0]), int(wg[1])}
	}
	a, ok := f.Attrs.Lookup(ParamsAttr)
	if !ok {
		return p, nil
	}
	if a.Kind != ir.AttrDict {
		return p, fmt.Errorf("%s is not a dictionary", ParamsAttr)
	}
	d := a.Dict
	ints := func(name string, dst []int) {
		if vs, ok := d.Ints(name); ok && len(vs) == len(dst) {
			for i, v := range vs {
				dst[i] = int(v)
			}
		}
	}
	ints("tile", p.Tile[:])
	ints("coopmatrix", p.Coopmatrix[:])
	if u, ok := d.Int("unroll"); ok {
		p.Unroll = int(u)
	}
	if b, ok := d.Int("batch_per_group"); ok {
		p.BatchPerGroup = int(b)
	}
	p.StageLocal, _ = d.Bool("stage_local")
	return p, nil
}

// Every variant parses, and its configuration survives the trip through the
// attributes, whether fully chosen, partly chosen or left to the compiler.
func TestEveryVariantParses(t *testing.T) {
	configs := []tuning.Params{tuned, {}, {SubgroupSize: 16, WorkGroupSize: [2]int{32, 4}}, {Unroll: 4, StageLocal: true}}
	vs := variants()
	if len(vs) < 1000 {
		t.Fatalf("only %d variants: the enumeration lost some", len(vs))
	}
	for i, s := range vs {
		p := configs[i%len(configs)]
		f := parse(t, s, p)
		got, err := decodeParams(f)
		if err != nil || got != p {
			t.Fatalf("%s: params %v decode as %v (%v)", s.Name(), p, got, err)
		}
	}
}

// interpArgs views a recipe's buffers as interpreter arguments sharing
// their bytes, so the interpreter writes the output in place.
func interpArgs(s Spec, in *Inputs) []interp.Arg {
	args := make([]interp.Arg, len(in.Args))
	for i, b := range in.Args {
		buf := &interp.Buffer{Elem: ir.BasicByName(b.Type.String()), Data: b.Data}
		shape := make([]int64, len(b.Shape))
		for k, d := range b.Shape {
			shape[k] = int64(d)
		}
		if s.Layout == Strided {
			full := append(shape, int64(b.Batch))
			args[i].Memref = &interp.Memref{Buf: buf, Shape: full, Stride: ir.PackedStride(full)}
			continue
		}
		g := &interp.Group{}
		for e := range b.Batch {
			g.Memrefs = append(g.Memrefs, &interp.Memref{Buf: buf, Offset: int64(e * b.EntryElements()),
				Shape: shape, Stride: ir.PackedStride(shape)})
		}
		args[i].Group = g
	}
	return args
}

// The reference interpreter, the semantics oracle of the project, runs every
// variant's kernel; its result must pass verification against this package's
// host reference, both when it accumulates in f64 and when it rounds every
// operation in the declared types (a legitimate low-precision device).
func TestInterpreterAgreesWithReference(t *testing.T) {
	const batch = 3
	for _, s := range variants() {
		f := parse(t, s, tuned)
		for _, acc64 := range []bool{true, false} {
			in, x := inputsAndReference(t, s, batch)
			if err := interp.Run(f, interpArgs(s, in), interp.Options{Groups: batch, Accumulate64: acc64}); err != nil {
				t.Fatalf("%s: interpreter: %v", s.Name(), err)
			}
			v, err := x.Check(in.Output())
			if err != nil || !v.OK {
				t.Fatalf("%s (Accumulate64=%v): %v %v", s.Name(), acc64, v, err)
			}
		}
	}
}
