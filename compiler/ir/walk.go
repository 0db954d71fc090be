package ir

import "slices"

// Walk calls fn for every instruction of r in program order, depth first:
// an instruction is visited before the instructions of its regions. If fn
// returns false the regions of that instruction are skipped. fn may modify
// the instruction it is given, but must not insert or remove instructions of
// the region being walked (collect them and edit afterwards).
func (r *Region) Walk(fn func(in *Inst) bool) {
	for _, in := range r.Insts {
		if fn(in) {
			for _, sub := range in.Regions {
				sub.Walk(fn)
			}
		}
	}
}

// Walk calls fn for every instruction of the program (see Region.Walk).
func (p *Program) Walk(fn func(f *Func, in *Inst) bool) {
	for _, f := range p.Funcs {
		f.Body.Walk(func(in *Inst) bool { return fn(f, in) })
	}
}

// ReplaceUses replaces every use of old by new in r and its nested regions
// and returns the number of operands changed.
func (r *Region) ReplaceUses(old, new *Value) int {
	n := 0
	r.Walk(func(in *Inst) bool {
		for i, v := range in.Operands {
			if v == old {
				in.Operands[i] = new
				n++
			}
		}
		return true
	})
	return n
}

// Uses returns the instructions of r (nested regions included) that use v,
// once per instruction.
func (r *Region) Uses(v *Value) []*Inst {
	var users []*Inst
	r.Walk(func(in *Inst) bool {
		if slices.Contains(in.Operands, v) {
			users = append(users, in)
		}
		return true
	})
	return users
}

// Clone returns a deep copy of r. Values defined inside r (arguments,
// results) are copied; uses of values defined outside r stay as they are
// unless vmap maps them. vmap, if not nil, receives the mapping from every
// original value defined in r to its copy, so callers can remap further
// code.
func (r *Region) Clone(vmap map[*Value]*Value) *Region {
	if vmap == nil {
		vmap = map[*Value]*Value{}
	}
	return cloneRegion(r, vmap)
}

func cloneRegion(r *Region, vmap map[*Value]*Value) *Region {
	c := &Region{Kind: r.Kind, EndComments: slices.Clone(r.EndComments)}
	for _, a := range r.Args {
		na := c.AddArg(a.Type)
		na.Name, na.Pos = a.Name, a.Pos
		vmap[a] = na
	}
	for _, in := range r.Insts {
		c.Append(cloneInst(in, vmap))
	}
	return c
}

// Clone returns a deep copy of in (regions included) whose operands are
// remapped through vmap; its results are new values recorded in vmap.
func (in *Inst) Clone(vmap map[*Value]*Value) *Inst {
	if vmap == nil {
		vmap = map[*Value]*Value{}
	}
	return cloneInst(in, vmap)
}

func cloneInst(in *Inst, vmap map[*Value]*Value) *Inst {
	c := *in
	c.Parent = nil
	if in.Extra != nil {
		c.Extra = in.Extra.clone()
	}
	c.Operands = make([]*Value, len(in.Operands))
	for i, v := range in.Operands {
		if nv, ok := vmap[v]; ok {
			v = nv
		}
		c.Operands[i] = v
	}
	// Regions first: a region cannot see the results of its own instruction,
	// but cloning them first keeps the mapping order identical to program
	// order.
	c.Regions = nil
	for _, r := range in.Regions {
		c.AddRegion(cloneRegion(r, vmap))
	}
	c.Results = make([]*Value, len(in.Results))
	for i, v := range in.Results {
		nv := &Value{Name: v.Name, Type: v.Type, Pos: v.Pos, Def: &c, Index: int32(i)}
		c.Results[i] = nv
		vmap[v] = nv
	}
	return &c
}

// clone returns a deep copy of e.
func (e *Extra) clone() *Extra {
	c := &Extra{}
	if e.ConstAttr != nil {
		c.ConstAttr = &ConstAttr{Const: e.Const}
	}
	if e.ModeAttrs != nil {
		modes := *e.ModeAttrs
		c.ModeAttrs = &modes
	}
	if e.Lists != nil {
		c.Lists = &Lists{Static: slices.Clone(e.Static), Offsets: slices.Clone(e.Offsets),
			Sizes: slices.Clone(e.Sizes), Attrs: slices.Clone(e.Attrs)}
	}
	if e.src != nil {
		src := *e.src
		src.OperandPos, src.Comments = slices.Clone(src.OperandPos), slices.Clone(src.Comments)
		c.src = &src
	}
	return c
}

// Clone returns a deep copy of f.
func (f *Func) Clone() *Func {
	vmap := map[*Value]*Value{}
	c := *f
	c.Attrs = slices.Clone(f.Attrs)
	c.ParamAttrs = slices.Clone(f.ParamAttrs)
	c.Comments = slices.Clone(f.Comments)
	c.Params = make([]*Value, len(f.Params))
	for i, p := range f.Params {
		np := *p
		c.Params[i] = &np
		vmap[p] = &np
	}
	c.Body = cloneRegion(f.Body, vmap)
	return &c
}
