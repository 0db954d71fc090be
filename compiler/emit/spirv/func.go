package spirv

import (
	"fmt"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// fn is the state of one kernel being written.
type fn struct {
	u      *unit
	b      *spv.Builder
	f      *ir.Func
	launch opencl.Launch
	block  spv.ID // the block instructions are appended to

	vals   ir.ValueMap[spv.ID]    // scalar values
	coops  map[*ir.Value][]spv.ID // coopmatrix values: this lane's elements (few: a map)
	mems   ir.ValueMap[*memref]
	groups map[*ir.Value]*group
	yields map[*ir.Region]*yieldSink

	// What the kernel's values are made of, carved from chunks the unit
	// keeps (chunks.go): dims, lists of dims (shapes, strides, indices),
	// lists of ids (a coopmatrix's elements), memrefs and the parts of
	// coopmatrix accesses.
	dims     chunks[dim]
	dimLists chunks[*dim]
	idLists  chunks[spv.ID]
	memrefs  chunks[memref]
	parts    chunks[accessPart]

	// frag reports the coopmatrix values held in DPAS fragments (dpas.go);
	// nil: none, every value's rows over lanes.
	frag func(*ir.Value) bool
	// halfBits is a private 16-bit variable through which an f16 held in
	// an f32 register becomes bits (bits16); 0 until needed.
	halfBits spv.ID

	sgid, lane spv.ID // i32: subgroup id and lane of the work-item
	gid        spv.ID // i64: logical work-group id
	numGroups  spv.ID // i64: the number of logical work-groups (builtin.group_size)
	part       spv.ID // i64: the work-group's part of a split logical group (splitGroups); 0 without a split
}

// yieldSink collects the values a region yields and the block that yields
// them (the predecessor edge of the phis that receive them).
type yieldSink struct {
	vals  [][]spv.ID // per yielded value, its ids (one, or a coopmatrix's elements)
	block spv.ID
}

func (u *unit) emitFunc(f *ir.Func, l opencl.Launch) (*opencl.Kernel, error) {
	if l.SubgroupSize < 1 || l.WorkGroupSize[0]%l.SubgroupSize != 0 {
		return nil, fmt.Errorf("spirv: work-group size %v is not a multiple of subgroup size %d", l.WorkGroupSize, l.SubgroupSize)
	}
	if l.SubgroupSize > 1 && u.target.Shuffle != 0 && !u.target.SupportsSubgroupSize(l.SubgroupSize) {
		return nil, fmt.Errorf("spirv: subgroup size %d is not one of target %s", l.SubgroupSize, u.target.Name)
	}
	l.BatchPerGroup = max(l.BatchPerGroup, 1)
	e := u.newFn(f, l)
	// SPIR-V entry points are free strings: every kernel keeps its name.
	k := &opencl.Kernel{Name: f.Name, Symbol: f.Name, Launch: l}
	sig := e.signature(k)
	id := u.b.NewID()
	u.b.Name(id, f.Name)
	entry := u.b.NewID()
	params := u.b.BeginFunction(id, u.void(), u.b.Type(spv.OpTypeFunction, append([]uint32{uint32(u.void())}, idWords(sig.types)...)...), sig.types, entry)
	e.block = entry
	sig.bind(params)
	if err := e.body(); err != nil {
		return nil, err
	}
	u.b.EndFunction()
	var iface []spv.ID
	for _, bi := range []spv.BuiltIn{spv.BuiltInLocalInvocationId, spv.BuiltInWorkgroupId, spv.BuiltInNumWorkgroups} {
		if v, ok := u.inputs[bi]; ok {
			iface = append(iface, v)
		}
	}
	u.b.EntryPoint(spv.ExecutionModelKernel, id, f.Name, iface)
	u.b.ExecutionMode(id, spv.ExecutionModeLocalSize, uint32(l.WorkGroupSize[0]), uint32(l.WorkGroupSize[1]), 1)
	if u.target.ReqdSubgroupSize {
		u.b.ExecutionMode(id, spv.ExecutionModeSubgroupSize, uint32(l.SubgroupSize))
	}
	return k, nil
}

// newFn returns the state for writing f: the unit's, emptied of the
// previous kernel's.
func (u *unit) newFn(f *ir.Func, l opencl.Launch) *fn {
	e := &u.work
	e.clear()
	// The value maps made at the function's size: grown from nothing,
	// they were an allocation per doubling.
	e.vals.Reset(f.NumValues)
	e.mems.Reset(f.NumValues)
	if e.coops == nil {
		e.coops, e.groups, e.yields = map[*ir.Value][]spv.ID{}, map[*ir.Value]*group{}, map[*ir.Region]*yieldSink{}
	}
	e.u, e.b, e.f, e.launch = u, u.b, f, l
	e.chooseEngine()
	return e
}

// clear empties e's tables and chunks and forgets the kernel: nothing
// made for it may be used after.
func (e *fn) clear() {
	e.vals.Reset(0)
	e.mems.Reset(0)
	clear(e.coops)
	clear(e.groups)
	clear(e.yields)
	e.dims.reset()
	e.dimLists.reset()
	e.idLists.reset()
	e.memrefs.reset()
	e.parts.reset()
	*e = fn{vals: e.vals, mems: e.mems, coops: e.coops, groups: e.groups, yields: e.yields,
		dims: e.dims, dimLists: e.dimLists, idLists: e.idLists, memrefs: e.memrefs, parts: e.parts}
}

func idWords(ids []spv.ID) []uint32 {
	w := make([]uint32, len(ids))
	for i, id := range ids {
		w[i] = uint32(id)
	}
	return w
}

// body writes the prologue and the function body. As in the OpenCL C back
// end, a physical work-group runs BatchPerGroup logical work-groups one
// after the other, stopping at the number of logical work-groups; the bounds
// are uniform over the work-group, so barriers inside stay legal.
//
// Known runtime problem: PoCL 3.1, through cl_khr_spir, computes some
// kernels with several barrier-separated regions wrongly (or aborts
// compiling them) when that loop exists (BatchPerGroup > 1); the OpenCL C
// back end's kernel does the same when compiled by clang -O0 to SPIR-V, so
// the fault is the runtime's SPIR path. The GEMM, GEMV and GER recipes run.
func (e *fn) body() error {
	u, l := e.u, e.launch
	local := e.loadBuiltin(spv.BuiltInLocalInvocationId)
	lx := e.op(spv.OpUConvert, u.intT(32), e.extract(u.intT(64), local, 0))
	ly := e.op(spv.OpUConvert, u.intT(32), e.extract(u.intT(64), local, 1))
	sgs := u.i32(int64(l.SubgroupSize))
	e.sgid = e.op(spv.OpIAdd, u.intT(32), e.op(spv.OpUDiv, u.intT(32), lx, sgs), e.op(spv.OpIMul, u.intT(32), ly, u.i32(int64(l.WorkGroupSize[0]/l.SubgroupSize))))
	e.lane = e.op(spv.OpUMod, u.intT(32), lx, sgs)
	group := e.extract(u.intT(64), e.loadBuiltin(spv.BuiltInWorkgroupId), 0)
	if l.Split > 1 {
		group = e.splitGroups()
	}
	if l.BatchPerGroup > 1 || e.f.UsesBuiltin(ir.GroupSize) {
		e.numGroups = e.logicalGroups()
	}
	if l.BatchPerGroup == 1 {
		// One logical group per work-group: the launch never has more
		// work-groups than groups, so there is nothing to skip.
		e.gid = group
		if err := e.region(e.f.Body); err != nil {
			return err
		}
		e.b.Emit(spv.OpReturn, 0)
		return nil
	}
	first := e.op(spv.OpIMul, u.intT(64), group, u.i64(int64(l.BatchPerGroup)))
	spec := loopSpec{ivType: u.intT(64), from: u.i64(0), to: u.i64(int64(l.BatchPerGroup)), step: u.i64(1),
		cond: func(j spv.ID) spv.ID {
			e.gid = e.op(spv.OpIAdd, u.intT(64), first, j)
			return e.op(spv.OpSLessThan, u.boolT(), e.gid, e.numGroups)
		}}
	_, err := e.loop(spec, func(spv.ID, []spv.ID) ([]spv.ID, error) {
		if err := e.region(e.f.Body); err != nil {
			return nil, err
		}
		// The next logical group reuses local memory.
		e.barrier(ir.FenceGlobal | ir.FenceLocal)
		return nil, nil
	})
	if err != nil {
		return err
	}
	e.b.Emit(spv.OpReturn, 0)
	return nil
}

// splitGroups numbers the work-groups of a split launch as the OpenCL C
// back end's splitGroups does (the parts of one logical work-group
// dispatched one after the other): it sets e.part (builtin.group_id.y) and
// returns the logical group.
func (e *fn) splitGroups() spv.ID {
	u := e.u
	ids, counts := e.loadBuiltin(spv.BuiltInWorkgroupId), e.loadBuiltin(spv.BuiltInNumWorkgroups)
	x, y := e.extract(u.intT(64), ids, 0), e.extract(u.intT(64), ids, 1)
	nx, ny := e.extract(u.intT(64), counts, 0), e.extract(u.intT(64), counts, 1)
	order := e.op(spv.OpIAdd, u.intT(64), e.op(spv.OpIMul, u.intT(64), y, nx), x)
	e.part = e.op(spv.OpUMod, u.intT(64), order, ny)
	return e.op(spv.OpUDiv, u.intT(64), order, ny)
}

// logicalGroups is the number of logical work-groups as in the OpenCL C
// back end: the launch's work-groups with one per work-group, else the
// batch extent of the arguments, else the launch's work-groups times
// BatchPerGroup (docs/abi.md).
func (e *fn) logicalGroups() spv.ID {
	u, l := e.u, e.launch
	x := l.Batch
	switch {
	case l.BatchPerGroup > 1 && x != nil && x.Mode == ir.GroupSizeMode:
		return e.dimID(e.groups[e.f.Params[x.Param]].size)
	case l.BatchPerGroup > 1 && x != nil:
		return e.dimID(e.memref(e.f.Params[x.Param]).shape[x.Mode])
	}
	launched := e.extract(u.intT(64), e.loadBuiltin(spv.BuiltInNumWorkgroups), 0)
	if l.BatchPerGroup > 1 {
		return e.op(spv.OpIMul, u.intT(64), launched, u.i64(int64(l.BatchPerGroup)))
	}
	return launched
}

func (e *fn) loadBuiltin(bi spv.BuiltIn) spv.ID {
	v := e.u.builtinVector(bi)
	return e.op(spv.OpLoad, e.u.vec(e.u.intT(64), 3), v)
}

// op appends an instruction with a result of type t and id operands.
func (e *fn) op(op spv.Op, t spv.ID, operands ...spv.ID) spv.ID {
	return e.b.EmitIDs(op, t, operands)
}

// appendIDs appends ids to w as words.
func appendIDs(w []uint32, ids []spv.ID) []uint32 {
	for _, id := range ids {
		w = append(w, uint32(id))
	}
	return w
}

func (e *fn) extract(t, composite spv.ID, index uint32) spv.ID {
	return e.b.Emit(spv.OpCompositeExtract, t, uint32(composite), index)
}

func (e *fn) ext(t spv.ID, inst spv.CLExtInst, args ...spv.ID) spv.ID {
	var buf [8]uint32
	return e.b.Emit(spv.OpExtInst, t, appendIDs(append(buf[:0], uint32(e.u.clStd), uint32(inst)), args)...)
}

// label starts block id.
func (e *fn) label(id spv.ID) {
	e.b.EmitWithID(spv.OpLabel, 0, id)
	e.block = id
}

func (e *fn) branch(to spv.ID) { e.b.Emit(spv.OpBranch, 0, uint32(to)) }

// loopSpec describes a counted loop "for iv = from; iv < to (&& cond(iv));
// iv += step" of integer type ivType, with loop-carried ids init of types
// types (a coopmatrix contributes one id per element).
type loopSpec struct {
	ivType, from, to, step spv.ID
	init, types            []spv.ID
	cond                   func(iv spv.ID) spv.ID // extra condition computed in the header, or nil
}

// loop writes a loop: one phi per carried id in the header, the body (which
// gets the loop variable and the carried phis and returns the ids for the
// next iteration), an increment block as the continue target. The carried
// phis are the loop's results.
func (e *fn) loop(s loopSpec, body func(iv spv.ID, carried []spv.ID) ([]spv.ID, error)) ([]spv.ID, error) {
	u := e.u
	pre := e.block
	header, bodyL, cont, merge := e.b.NewID(), e.b.NewID(), e.b.NewID(), e.b.NewID()
	e.branch(header)
	e.label(header)
	iv := e.b.NewID()
	ivSlot := e.b.Reserve(spv.OpPhi, s.ivType, iv, 4)
	phis := e.idLists.take(len(s.init))
	slots := make([]int, len(s.init))
	for i := range s.init {
		phis[i] = e.b.NewID()
		slots[i] = e.b.Reserve(spv.OpPhi, s.types[i], phis[i], 4)
	}
	c := e.op(spv.OpSLessThan, u.boolT(), iv, s.to)
	if s.cond != nil {
		c = e.op(spv.OpLogicalAnd, u.boolT(), c, s.cond(iv))
	}
	e.b.Emit(spv.OpLoopMerge, 0, uint32(merge), uint32(cont), uint32(spv.LoopControlNone))
	e.b.Emit(spv.OpBranchConditional, 0, uint32(c), uint32(bodyL), uint32(merge))
	e.label(bodyL)
	nexts, err := body(iv, phis)
	if err != nil {
		return nil, err
	}
	e.branch(cont)
	e.label(cont)
	ivNext := e.op(spv.OpIAdd, s.ivType, iv, s.step)
	e.branch(header)
	e.b.Patch(ivSlot, uint32(s.from), uint32(pre), uint32(ivNext), uint32(cont))
	for i := range s.init {
		e.b.Patch(slots[i], uint32(s.init[i]), uint32(pre), uint32(nexts[i]), uint32(cont))
	}
	e.label(merge)
	return phis, nil
}

// region writes the instructions of r.
func (e *fn) region(r *ir.Region) error {
	for _, in := range r.Insts {
		if err := e.inst(in); err != nil {
			return fmt.Errorf("%s: %w", in.Mnemonic(), err)
		}
	}
	return nil
}

// forLoop writes a for instruction.
func (e *fn) forLoop(in *ir.Inst) error {
	from, to, step, init := in.LoopBounds()
	body := in.Body()
	ivType := e.u.reg(from.Type)
	stepID := e.u.constInt(from.Type.Bits(), 1)
	if step != nil {
		stepID = e.value(step)
	}
	initIDs, types := e.flatten(init)
	sink := &yieldSink{}
	e.yields[body] = sink
	spec := loopSpec{ivType: ivType, from: e.value(from), to: e.value(to), step: stepID, init: initIDs, types: types}
	phis, err := e.loop(spec, func(iv spv.ID, carried []spv.ID) ([]spv.ID, error) {
		e.vals.Set(body.Args[0], iv)
		e.unflatten(body.Args[1:], carried)
		if err := e.region(body); err != nil {
			return nil, err
		}
		return e.flat(sink.vals), nil
	})
	if err != nil {
		return err
	}
	e.unflatten(in.Results, phis)
	return nil
}

// ifElse writes an if instruction as a selection construct; its results
// are phis in the merge block.
func (e *fn) ifElse(in *ir.Inst) error {
	then, els := e.b.NewID(), e.b.NewID()
	merge := e.b.NewID()
	hasElse := len(in.Regions) > 1 && len(in.Regions[1].Insts) > 0
	falseL := merge
	if hasElse {
		falseL = els
	}
	e.b.Emit(spv.OpSelectionMerge, 0, uint32(merge), uint32(spv.SelectionControlNone))
	e.b.Emit(spv.OpBranchConditional, 0, uint32(e.value(in.Operands[0])), uint32(then), uint32(falseL))
	var sinks []*yieldSink
	for i, r := range in.Regions {
		if i == 1 && !hasElse {
			break
		}
		e.label([]spv.ID{then, els}[i])
		sink := &yieldSink{}
		e.yields[r] = sink
		if err := e.region(r); err != nil {
			return err
		}
		sink.block = e.block
		sinks = append(sinks, sink)
		e.branch(merge)
	}
	e.label(merge)
	if len(in.Results) == 0 {
		return nil
	}
	if !hasElse {
		return fmt.Errorf("spirv: if with results needs an else region")
	}
	a, b := e.flat(sinks[0].vals), e.flat(sinks[1].vals)
	types := e.typesOf(in.Results)
	ids := e.idLists.take(len(a))
	for i := range a {
		ids[i] = e.b.Emit(spv.OpPhi, types[i], uint32(a[i]), uint32(sinks[0].block), uint32(b[i]), uint32(sinks[1].block))
	}
	e.unflatten(in.Results, ids)
	return nil
}

// yield records the yielded values for the enclosing for or if.
func (e *fn) yield(in *ir.Inst) {
	sink := e.yields[in.Parent]
	if sink == nil {
		return
	}
	sink.vals = nil
	for _, v := range in.Operands {
		sink.vals = append(sink.vals, e.ids(v))
	}
}

// ids returns the ids of a scalar (one) or coopmatrix (its elements) value.
func (e *fn) ids(v *ir.Value) []spv.ID {
	if v.Type.Kind() == ir.KindCoopmatrix {
		return e.coop(v)
	}
	id := e.idLists.take(1)
	id[0] = e.value(v)
	return id
}

// width is the number of ids of values (see flatten).
func (e *fn) width(vs []*ir.Value) int {
	n := 0
	for _, v := range vs {
		if v.Type.Kind() == ir.KindCoopmatrix {
			n += e.perLane(v)
		} else {
			n++
		}
	}
	return n
}

// flatten returns the ids and types of values, a coopmatrix contributing
// one id per element.
func (e *fn) flatten(vs []*ir.Value) (ids, types []spv.ID) {
	ids = e.idLists.take(e.width(vs))[:0]
	for _, v := range vs {
		if v.Type.Kind() == ir.KindCoopmatrix {
			ids = append(ids, e.coop(v)...)
		} else {
			ids = append(ids, e.value(v))
		}
	}
	return ids, e.typesOf(vs)
}

func (e *fn) typesOf(vs []*ir.Value) []spv.ID {
	types := e.idLists.take(e.width(vs))[:0]
	for _, v := range vs {
		if v.Type.Kind() == ir.KindCoopmatrix {
			t := e.u.reg(v.Type.Elem())
			for range e.perLane(v) {
				types = append(types, t)
			}
			continue
		}
		types = append(types, e.u.reg(v.Type))
	}
	return types
}

// unflatten binds values to consecutive ids (see flatten).
func (e *fn) unflatten(vs []*ir.Value, ids []spv.ID) {
	for _, v := range vs {
		if v.Type.Kind() == ir.KindCoopmatrix {
			n := e.perLane(v)
			e.coops[v] = ids[:n]
			ids = ids[n:]
			continue
		}
		e.vals.Set(v, ids[0])
		ids = ids[1:]
	}
}

// flat joins lists of ids.
func (e *fn) flat(vals [][]spv.ID) []spv.ID {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	out := e.idLists.take(n)[:0]
	for _, v := range vals {
		out = append(out, v...)
	}
	return out
}

// value returns the id of a scalar value.
func (e *fn) value(v *ir.Value) spv.ID {
	if id, ok := e.vals.Get(v); ok {
		return id
	}
	panic(fmt.Sprintf("spirv: value %%%s used before it was written", v.Name))
}
