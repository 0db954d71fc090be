package interp

import (
	"context"
	"errors"
	"fmt"

	"tltune/compiler/ir"
)

// exec is one thread of control: the collective thread of a work-group
// (item == nil) or one work-item inside an SPMD region.
type exec struct {
	m     *machine
	group int64
	item  *workItem
}

// instError is an error located at an instruction; nested regions pass it
// through unchanged so the innermost position is reported.
type instError struct {
	pos  ir.Pos
	mnem string
	err  error
}

func (e *instError) Error() string { return fmt.Sprintf("%s: %s: %v", e.pos, e.mnem, e.err) }
func (e *instError) Unwrap() error { return e.err }

func locate(in *ir.Inst, err error) error {
	var ie *instError
	if err == nil || errors.As(err, &ie) || errors.Is(err, errAborted) {
		return err
	}
	return &instError{pos: in.Pos, mnem: in.Mnemonic(), err: err}
}

// region executes the instructions of r in env and returns the values of its
// closing yield (nil if none).
func (e *exec) region(r *ir.Region, env *env) ([]value, error) {
	if e.m.stopped.Load() {
		return nil, fmt.Errorf("interp: stopped: %w", context.Cause(e.m.ctx))
	}
	for _, in := range r.Insts {
		if in.Op == ir.OpYield {
			out := make([]value, len(in.Operands))
			for i, v := range in.Operands {
				out[i] = env.get(v)
			}
			return out, nil
		}
		if err := locate(in, e.inst(in, env)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// inst executes one instruction other than yield.
func (e *exec) inst(in *ir.Inst, env *env) error {
	op := func(i int) value { return env.get(in.Operands[i]) }
	typ := func(i int) *ir.Type { return in.Operands[i].Type }
	def := func(v value) error { env.set(in.Result(), v); return nil }
	switch in.Op {
	case ir.OpConstant:
		return def(e.constant(in))
	case ir.OpArith:
		return e.elementwise2(in, env, func(t *ir.Type, a, b value) (value, error) { return arith(in.Arith, t, a, b) })
	case ir.OpArithUnary:
		return e.elementwise1(in, env, func(a value) value { return unary(in.Unary, typ(0).ScalarOf(), a) })
	case ir.OpMath:
		return def(mathFunc(in.Math, typ(0), op(0)))
	case ir.OpCmp:
		return def(boolVal(compare(in.Cmp, typ(0), op(0), op(1))))
	case ir.OpCast:
		from, to := typ(0).ScalarOf(), in.Result().Type.ScalarOf()
		return e.elementwise1(in, env, func(a value) value { return convert(a, from, to) })
	case ir.OpBuiltin:
		return def(intVal(e.builtin(in.Builtin)))
	case ir.OpBarrier:
		if e.item != nil {
			_, err := e.item.meet(in, nil)
			return err
		}
		return nil // the collective thread is the whole work-group
	case ir.OpLifetimeStop:
		return nil
	case ir.OpSize:
		return def(intVal(size(op(0), in.Mode)))
	case ir.OpLoad:
		return e.load(in, env)
	case ir.OpStore:
		return e.store(in, env)
	case ir.OpVectorLoad:
		return e.vectorLoad(in, env)
	case ir.OpVectorStore:
		return e.vectorStore(in, env)
	case ir.OpAsyncCopy:
		return e.asyncCopy(in, env)
	case ir.OpAsyncCommit:
		return e.asyncCommit()
	case ir.OpAsyncWait:
		return e.asyncWait(in)
	case ir.OpSubview:
		return e.subview(in, env)
	case ir.OpExpand:
		return e.expand(in, env)
	case ir.OpFuse:
		return e.fuse(in, env)
	case ir.OpAlloca:
		return def(value{ref: alloca(in)})
	case ir.OpFor:
		return e.forLoop(in, env)
	case ir.OpIf:
		return e.ifElse(in, env)
	case ir.OpParallel:
		return e.spmd(func(w *exec) error {
			_, err := w.region(in.Body(), env.child())
			return err
		})
	case ir.OpForeach:
		return e.foreach(in, env)
	case ir.OpForeachTile:
		return e.foreachTile(in, env)
	case ir.OpGemm, ir.OpGemv, ir.OpGer, ir.OpHadamardProduct, ir.OpAxpby, ir.OpSum, ir.OpCumsum:
		return e.blas(in, env)
	case ir.OpCoopMatrixMulAdd:
		return def(value{ref: e.mulAdd(in, env)})
	case ir.OpCoopMatrixScale:
		s := op(0)
		return def(value{ref: op(1).ref.(*coopMatrix).apply(func(a value) value {
			v, _ := arith(ir.Mul, typ(0), s, a)
			return v
		})})
	case ir.OpCoopMatrixLoad, ir.OpCoopMatrixStore, ir.OpSubgroupBroadcast,
		ir.OpSubgroupAdd, ir.OpSubgroupMax, ir.OpSubgroupMin, ir.OpSubgroupShuffleXor:
		return e.subgroupOp(in, env)
	}
	if done, err := e.releasedInst(in, env); done {
		return err
	}
	return fmt.Errorf("the interpreter does not implement %s", in.Mnemonic())
}

func (e *exec) constant(in *ir.Inst) value {
	t := in.Result().Type
	if t.Kind() == ir.KindCoopmatrix {
		return value{ref: newCoopMatrix(t, constant(in.Const, t.Elem()))}
	}
	return constant(in.Const, t)
}

// elementwise1 applies f to a scalar operand or to every entry of a
// cooperative matrix.
func (e *exec) elementwise1(in *ir.Inst, env *env, f func(a value) value) error {
	a := env.get(in.Operands[0])
	if cm, ok := a.ref.(*coopMatrix); ok {
		r := cm.apply(f)
		r.typ = in.Result().Type
		env.set(in.Result(), value{ref: r})
		return nil
	}
	env.set(in.Result(), f(a))
	return nil
}

// elementwise2 applies f to two scalars of the same type or entry by entry
// to two cooperative matrices of the same shape.
func (e *exec) elementwise2(in *ir.Inst, env *env, f func(t *ir.Type, a, b value) (value, error)) error {
	a, b := env.get(in.Operands[0]), env.get(in.Operands[1])
	t := in.Operands[0].Type
	if ca, ok := a.ref.(*coopMatrix); ok {
		cb := b.ref.(*coopMatrix)
		r := &coopMatrix{typ: in.Result().Type, rows: ca.rows, cols: ca.cols, data: make([]value, len(ca.data))}
		for i := range ca.data {
			v, err := f(t.Elem(), ca.data[i], cb.data[i])
			if err != nil {
				return err
			}
			r.data[i] = v
		}
		env.set(in.Result(), value{ref: r})
		return nil
	}
	v, err := f(t, a, b)
	if err != nil {
		return err
	}
	env.set(in.Result(), v)
	return nil
}

// builtin returns a builtin's value. Work-groups form one row in x (the
// launch of docs/abi.md), so the group id is 0 and the number of groups 1
// in y and z; subgroups form a grid of work_group_size[0]/subgroup_size
// columns and work_group_size[1] rows, the linear id x fastest.
func (e *exec) builtin(b ir.BuiltinKind) int64 {
	nsx := int64(e.m.wg[0] / e.m.sgSize)
	switch b {
	case ir.GroupID:
		return e.group
	case ir.GroupSize:
		return int64(e.m.groups)
	case ir.GroupIDY, ir.GroupIDZ:
		return 0
	case ir.GroupSizeY, ir.GroupSizeZ, ir.NumSubgroupsZ:
		return 1
	case ir.SubgroupIDZ:
		return 0
	case ir.NumSubgroups:
		return int64(e.m.numSubgroups())
	case ir.NumSubgroupsX:
		return nsx
	case ir.NumSubgroupsY:
		return int64(e.m.wg[1])
	case ir.SubgroupSize:
		return int64(e.m.sgSize)
	case ir.SubgroupID:
		return int64(e.item.sg)
	case ir.SubgroupIDX:
		return int64(e.item.sg) % nsx
	case ir.SubgroupIDY:
		return int64(e.item.sg) / nsx
	}
	return int64(e.item.lane)
}

func size(v value, mode int64) int64 {
	if g, ok := v.ref.(*Group); ok {
		return int64(len(g.Memrefs))
	}
	return v.ref.(*Memref).Shape[mode]
}

// indices reads the index operands in.Operands[from:].
func indices(in *ir.Inst, env *env, from int) []int64 {
	idx := make([]int64, len(in.Operands)-from)
	for i := range idx {
		idx[i] = env.get(in.Operands[from+i]).i
	}
	return idx
}

func (e *exec) load(in *ir.Inst, env *env) error {
	src := env.get(in.Operands[0])
	idx := indices(in, env, 1)
	if g, ok := src.ref.(*Group); ok {
		i := idx[0]
		if i < 0 || i >= int64(len(g.Memrefs)) {
			return fmt.Errorf("group index %d out of bounds of a group of %d", i, len(g.Memrefs))
		}
		m := *g.Memrefs[i]
		m.Offset += groupOffset(in.Operands[0].Type, g)
		env.set(in.Result(), value{ref: &m})
		return nil
	}
	v, err := src.ref.(*Memref).get(idx...)
	if err != nil {
		return err
	}
	env.set(in.Result(), v)
	return nil
}

func (e *exec) store(in *ir.Inst, env *env) error {
	x := env.get(in.Operands[0])
	m := env.get(in.Operands[1]).ref.(*Memref)
	idx := indices(in, env, 2)
	if in.Atomic > ir.Atomic {
		// Work-items never run concurrently, so fetch-add is simply atomic.
		old, err := m.get(idx...)
		if err != nil {
			return err
		}
		x, _ = arith(in.Atomic.Op(), in.Operands[0].Type, old, x)
	}
	return m.set(x, idx...)
}

func (e *exec) vectorLoad(in *ir.Inst, env *env) error {
	m := env.get(in.Operands[0]).ref.(*Memref)
	a, err := m.vectorAddr(indices(in, env, 1), len(in.Results))
	if err != nil {
		return err
	}
	for k, r := range in.Results {
		env.set(r, m.Buf.load(a+int64(k)))
	}
	return nil
}

func (e *exec) vectorStore(in *ir.Inst, env *env) error {
	xs, mv, _ := in.VectorStoreOperands()
	m := env.get(mv).ref.(*Memref)
	a, err := m.vectorAddr(indices(in, env, len(xs)+1), len(xs))
	if err != nil {
		return err
	}
	for k, x := range xs {
		m.Buf.store(a+int64(k), env.get(x))
	}
	return nil
}

// alloca returns a fresh local buffer filled with 0xff bytes: NaN for every
// floating type and -1 for integers, so that reading memory before writing
// it shows in the result. It is aligned as its alignment attribute says, or
// to its element size, as a back end declares it.
func alloca(in *ir.Inst) *Memref {
	t := in.Result().Type
	m := NewMemref(t.Elem(), append([]int64(nil), t.Shape()...)...)
	m.Stride = append([]int64(nil), t.Stride()...)
	lo, hi := m.span()
	m.Buf = NewBuffer(t.Elem(), int(max(hi-lo+1, 0)))
	m.Buf.Align = t.Elem().Size()
	if a, ok := in.Attrs.Int(ir.AttrAlignment); ok {
		m.Buf.Align = a
	}
	for i := range m.Buf.Data {
		m.Buf.Data[i] = 0xff
	}
	return m
}

func extent(x ir.Extent, env *env) int64 {
	if x.Value != nil {
		return env.get(x.Value).i
	}
	return x.Static
}

func (e *exec) subview(in *ir.Inst, env *env) error {
	src := env.get(in.Operands[0]).ref.(*Memref)
	offsets, sizes := in.SubviewSlices()
	r := &Memref{Buf: src.Buf, Offset: src.Offset}
	for k := range offsets {
		off, n := extent(offsets[k], env), extent(sizes[k], env)
		dropped := sizes[k].Value == nil && n == 0
		switch {
		case sizes[k].Value != nil && n <= 0:
			return fmt.Errorf("dynamic size %d of mode %d is not positive", n, k)
		case off < 0 || off+max(n, 1) > src.Shape[k]:
			return fmt.Errorf("slice %d:%d of mode %d exceeds its size %d", off, n, k, src.Shape[k])
		}
		r.Offset += off * src.Stride[k]
		if !dropped {
			r.Shape = append(r.Shape, n)
			r.Stride = append(r.Stride, src.Stride[k])
		}
	}
	env.set(in.Result(), value{ref: r})
	return nil
}

func (e *exec) expand(in *ir.Inst, env *env) error {
	src := env.get(in.Operands[0]).ref.(*Memref)
	k := in.Mode
	r := &Memref{Buf: src.Buf, Offset: src.Offset}
	r.Shape = append(r.Shape, src.Shape[:k]...)
	r.Stride = append(r.Stride, src.Stride[:k]...)
	n, stride := int64(1), src.Stride[k]
	for _, x := range in.ExpandShape() {
		s := extent(x, env)
		r.Shape = append(r.Shape, s)
		r.Stride = append(r.Stride, stride)
		stride *= s
		n *= s
	}
	if n != src.Shape[k] {
		return fmt.Errorf("expand shape %v of mode %d has %d elements, the mode has %d", r.Shape[k:len(r.Shape)], k, n, src.Shape[k])
	}
	r.Shape = append(r.Shape, src.Shape[k+1:]...)
	r.Stride = append(r.Stride, src.Stride[k+1:]...)
	env.set(in.Result(), value{ref: r})
	return nil
}

func (e *exec) fuse(in *ir.Inst, env *env) error {
	src := env.get(in.Operands[0]).ref.(*Memref)
	from, to := in.Mode, in.ModeTo
	n := int64(1)
	for k := from; k <= to; k++ {
		if k < to && src.Stride[k]*src.Shape[k] != src.Stride[k+1] {
			return fmt.Errorf("modes %d and %d cannot be fused: stride %d · size %d ≠ stride %d",
				k, k+1, src.Stride[k], src.Shape[k], src.Stride[k+1])
		}
		n *= src.Shape[k]
	}
	r := &Memref{Buf: src.Buf, Offset: src.Offset}
	r.Shape = append(append(append(r.Shape, src.Shape[:from]...), n), src.Shape[to+1:]...)
	r.Stride = append(append(append(r.Stride, src.Stride[:from]...), src.Stride[from]), src.Stride[to+1:]...)
	env.set(in.Result(), value{ref: r})
	return nil
}

func (e *exec) forLoop(in *ir.Inst, env *env) error {
	from, to, step, init := in.LoopBounds()
	body := in.Body()
	ivType := body.Args[0].Type
	lo, hi, st := env.get(from).i, env.get(to).i, int64(1)
	if step != nil {
		st = env.get(step).i
	}
	if st <= 0 {
		return fmt.Errorf("loop step %d is not positive", st)
	}
	carried := make([]value, len(init))
	for i, v := range init {
		carried[i] = env.get(v)
	}
	for iv := lo; iv < hi; iv = wrap(ivType, iv+st) {
		inner := env.child()
		inner.set(body.Args[0], intVal(iv))
		for i, v := range carried {
			inner.set(body.Args[1+i], v)
		}
		out, err := e.region(body, inner)
		if err != nil {
			return err
		}
		if len(carried) > 0 {
			carried = out
		}
		if iv > hi-st { // the next step would overflow the loop type
			break
		}
	}
	for i, r := range in.Results {
		env.set(r, carried[i])
	}
	return nil
}

func (e *exec) ifElse(in *ir.Inst, env *env) error {
	r := in.Regions[0]
	if env.get(in.Operands[0]).i == 0 {
		if len(in.Regions) < 2 {
			return nil
		}
		r = in.Regions[1]
	}
	out, err := e.region(r, env.child())
	if err != nil {
		return err
	}
	for i, res := range in.Results {
		env.set(res, out[i])
	}
	return nil
}

// foreach distributes the points of the iteration space (first loop variable
// fastest) round-robin over the work-items: point t goes to work-item
// t mod numItems, each work-item taking its points in order. The reference
// leaves the mapping to the implementation.
func (e *exec) foreach(in *ir.Inst, env *env) error {
	fromV, toV := in.ForeachBounds()
	body := in.Body()
	lo, shape := make([]int64, len(fromV)), make([]int64, len(fromV))
	total := int64(1)
	for i := range fromV {
		lo[i] = env.get(fromV[i]).i
		shape[i] = max(env.get(toV[i]).i-lo[i], 0)
		total *= shape[i]
	}
	return e.spmd(func(w *exec) error {
		for t := int64(w.item.id); t < total; t += int64(w.m.numItems) {
			inner := env.child()
			rest := t
			for i, a := range body.Args {
				inner.set(a, intVal(wrap(a.Type, lo[i]+rest%shape[i])))
				rest /= shape[i]
			}
			if _, err := w.region(body, inner); err != nil {
				return err
			}
		}
		return nil
	})
}

// foreachTile distributes the tiles (first mode fastest) round-robin over
// the subgroups: tile t goes to subgroup t mod numSubgroups, whose lanes
// all run it, so the tile offsets and sizes are dynamically uniform. The
// reference leaves the mapping to the implementation.
func (e *exec) foreachTile(in *ir.Inst, env *env) error {
	fromV, toV := in.ForeachBounds()
	args := in.Body().Args
	n := len(fromV)
	lo, tiles := make([]int64, n), make([]int64, n)
	total := int64(1)
	for i := range n {
		lo[i] = env.get(fromV[i]).i
		extent := max(env.get(toV[i]).i-lo[i], 0)
		tiles[i] = (extent + in.Static[i] - 1) / in.Static[i]
		total *= tiles[i]
	}
	return e.spmd(func(w *exec) error {
		for t := int64(w.item.sg); t < total; t += int64(w.m.numSubgroups()) {
			inner := env.child()
			rest := t
			for i := range n {
				off := lo[i] + rest%tiles[i]*in.Static[i]
				rest /= tiles[i]
				inner.set(args[i], intVal(wrap(args[i].Type, off)))
				inner.set(args[n+i], intVal(wrap(args[i].Type, min(in.Static[i], env.get(toV[i]).i-off))))
			}
			if _, err := w.region(in.Body(), inner); err != nil {
				return err
			}
		}
		return nil
	})
}
