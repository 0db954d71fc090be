package check_test

import (
	"strings"
	"testing"

	"tltune/compiler/check"
	"tltune/compiler/ir"
	"tltune/compiler/printer"
)

// pvc is a device like the Data Center GPU Max: subgroups of 16 and 32,
// 1024 work-items, 128 KiB of local memory.
var pvc = &check.Target{SubgroupSizes: []int64{16, 32}, MaxWorkGroupSize: 1024, LocalMemory: 128 << 10}

func TestTargetLimits(t *testing.T) {
	for _, c := range []struct {
		name, attrs, body string
		target            *check.Target
		want              string // "" for no error
	}{
		{"supported", "subgroup_size=16, work_group_size=[64, 4]", "", pvc, ""},
		{"unsupported subgroup", "subgroup_size=8", "", pvc, "subgroup_size 8 is not supported by the target (supported: [16 32])"},
		{"no subgroup, fits one", "work_group_size=[48, 2]", "", pvc, ""},
		{"no subgroup, fits none", "work_group_size=[24, 2]", "", pvc, "must be a multiple of a subgroup size the target supports"},
		{"too many work-items", "subgroup_size=32, work_group_size=[64, 32]", "", pvc, "has more work-items than the target allows (1024)"},
		{"local memory fits", "", "%t = alloca : memref<f32x128x128, local>", pvc, ""},
		{"local memory exceeded", "", "%t = alloca : memref<f64x128x128, local>\n%u = alloca : memref<f32x8, local>", pvc, "need 131104 bytes of local memory, the target has 131072"},
		{"no target, no limits", "subgroup_size=8, work_group_size=[8, 1024]", "%t = alloca : memref<f64x1024x1024, local>", nil, ""},
		{"generic target", "subgroup_size=16", "", &check.Target{SubgroupSizes: []int64{1}}, "subgroup_size 16 is not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "func @k()"
			if c.attrs != "" {
				src += " attributes {" + c.attrs + "}"
			}
			src += " {\n" + c.body + "\n}\n"
			errs := frontEnd([]byte(src), c.target)
			switch {
			case c.want == "" && len(errs) > 0:
				t.Errorf("unexpected errors: %v", errs)
			case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Msg, c.want)):
				t.Errorf("got %v, want one error containing %q", errs, c.want)
			}
		})
	}
}

// TestMalformedIR feeds the verifier IR that only a buggy pass could build;
// it must report, never panic.
func TestMalformedIR(t *testing.T) {
	build := func(edit func(f *ir.Func, b *ir.Builder)) *ir.Program {
		f := ir.NewFunc("k", []string{"a", "m"}, []*ir.Type{ir.F32, ir.Memref(ir.F32, []int64{4, 4}, nil, ir.Global)})
		edit(f, ir.NewBuilder(f.Body))
		return &ir.Program{Funcs: []*ir.Func{f}}
	}
	for _, c := range []struct {
		name string
		edit func(f *ir.Func, b *ir.Builder)
		want string
	}{
		{"operand from an inner region", func(f *ir.Func, b *ir.Builder) {
			p := b.Parallel()
			inner := ir.NewBuilder(p.Body()).Builtin(ir.SubgroupID)
			b.Cast(inner, ir.I64)
		}, "not visible here"},
		{"use before definition", func(f *ir.Func, b *ir.Builder) {
			x := ir.NewInst(ir.OpArith, []*ir.Value{f.Params[0], f.Params[0]}, ir.F32)
			x.Arith = ir.Add
			b.Arith(ir.Add, x.Result(), x.Result())
			b.Insert(x)
		}, "not visible here"},
		{"missing operands", func(f *ir.Func, b *ir.Builder) {
			b.Insert(ir.NewInst(ir.OpGemm, []*ir.Value{f.Params[0]}))
		}, "gemm.n.n takes 5 operands, found 1"},
		{"nil operand", func(f *ir.Func, b *ir.Builder) {
			b.Insert(ir.NewInst(ir.OpLifetimeStop, []*ir.Value{nil}))
		}, "operand 1 of lifetime_stop is missing"},
		{"subview without slices", func(f *ir.Func, b *ir.Builder) {
			b.Insert(ir.NewInst(ir.OpSubview, []*ir.Value{f.Params[1], f.Params[0]}, ir.Memref(ir.F32, []int64{4}, nil, ir.Global)))
		}, "offsets, sizes and dynamic operands do not match"},
		{"for without region", func(f *ir.Func, b *ir.Builder) {
			b.Insert(ir.NewInst(ir.OpFor, []*ir.Value{f.Params[0], f.Params[0]}))
		}, "for needs 1 regions, found 0"},
		{"foreach with odd bounds", func(f *ir.Func, b *ir.Builder) {
			in := ir.NewInst(ir.OpForeach, []*ir.Value{f.Params[0]})
			in.AddRegion(ir.NewRegion(ir.RegionSPMD, ir.Index))
			b.Insert(in)
		}, "one lower and one upper bound per loop variable"},
		{"instruction not linked", func(f *ir.Func, b *ir.Builder) {
			in := ir.NewInst(ir.OpBarrier, nil)
			f.Body.Insts = append(f.Body.Insts, in)
		}, "not linked to its region"},
		{"invalid opcode", func(f *ir.Func, b *ir.Builder) {
			b.Insert(ir.NewInst(ir.OpInvalid, nil))
		}, "invalid opcode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := check.Program(build(c.edit), nil)
			found := false
			for _, e := range errs {
				found = found || strings.Contains(e.Msg, c.want)
			}
			if !found {
				t.Errorf("got %v, want an error containing %q", errs, c.want)
			}
		})
	}
}

// TestBuiltProgramVerifies checks that IR built with the Builder, as the
// lowering passes do, is accepted.
func TestBuiltProgramVerifies(t *testing.T) {
	f := ir.NewFunc("k", []string{"x"}, []*ir.Type{ir.Memref(ir.F32, []int64{ir.Dynamic}, nil, ir.Global)})
	b := ir.NewBuilder(f.Body)
	zero, one := b.IntConst(0, ir.Index), b.IntConst(1, ir.Index)
	n := b.Insert(ir.NewInst(ir.OpSize, []*ir.Value{f.Params[0]}, ir.Index)).Result()
	acc := b.FloatConst(0, ir.F32)
	loop := b.For(zero, n, one, acc)
	body := ir.NewBuilder(loop.Body())
	v := body.Load(f.Params[0], loop.Body().Args[0])
	body.Yield(body.Arith(ir.Add, loop.Body().Args[1], v))
	b.Store(ir.NotAtomic, loop.Result(), f.Params[0], zero)
	p := &ir.Program{Funcs: []*ir.Func{f}}
	if errs := check.Program(p, nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	// The printed program parses and verifies too.
	if errs := frontEnd([]byte(printer.String(p)), nil); len(errs) > 0 {
		t.Fatal(errs)
	}
}
