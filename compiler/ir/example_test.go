package ir_test

import (
	"fmt"

	"tltune/compiler/ir"
)

// Build a kernel that scales a vector, as a lowering pass would.
func ExampleBuilder() {
	vec := ir.Memref(ir.F32, []int64{ir.Dynamic}, nil, ir.Global)
	f := ir.NewFunc("scale", []string{"alpha", "x"}, []*ir.Type{ir.F32, vec})
	b := ir.NewBuilder(f.Body)
	zero := b.IntConst(0, ir.Index)
	n := b.Insert(ir.NewInst(ir.OpSize, []*ir.Value{f.Params[1]}, ir.Index)).Result() // Mode 0
	loop := b.Foreach([]*ir.Value{zero}, []*ir.Value{n})
	body := ir.NewBuilder(loop.Body())
	i := loop.Body().Args[0]
	v := body.Load(f.Params[1], i)
	body.Store(ir.NotAtomic, body.Arith(ir.Mul, v, f.Params[0]), f.Params[1], i)

	f.Body.Walk(func(in *ir.Inst) bool {
		fmt.Println(in.Mnemonic(), len(in.Operands), "operands", in.Class())
		return true
	})
	// Output:
	// constant 0 operands mixed
	// size 1 operands mixed
	// foreach 2 operands collective
	// load 2 operands mixed
	// arith.mul 2 operands mixed
	// store 3 operands mixed
}

// Read the operands of a for loop and rewrite its uses.
func ExampleInst_LoopBounds() {
	f := ir.NewFunc("sum", []string{"a"}, []*ir.Type{ir.F32})
	b := ir.NewBuilder(f.Body)
	lo, hi := b.IntConst(0, ir.Index), b.IntConst(8, ir.Index)
	loop := b.For(lo, hi, nil, f.Params[0])
	acc := loop.Body().Args[1]
	body := ir.NewBuilder(loop.Body())
	body.Yield(body.Arith(ir.Add, acc, f.Params[0]))

	from, to, step, init := loop.LoopBounds()
	fmt.Println(from == lo, to == hi, step == nil, init[0] == f.Params[0])

	two := b.FloatConst(2, ir.F32)
	fmt.Println(loop.Body().ReplaceUses(f.Params[0], two), "use replaced inside the loop")
	// Output:
	// true true true true
	// 1 use replaced inside the loop
}
