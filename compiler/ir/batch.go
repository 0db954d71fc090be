package ir

import "slices"

// GroupSizeMode is BatchExtent.Mode for a group parameter: the batch is the
// number of memrefs in the group.
const GroupSizeMode = -1

// BatchExtent names the argument extent that holds a kernel's batch size:
// the size of mode Mode of parameter Param, or the group size of Param when
// Mode is GroupSizeMode. Compiled kernels that run several batch entries per
// work-group read the number of batch entries there, since their argument
// list has no place for it (docs/abi.md).
type BatchExtent struct {
	Param int
	Mode  int
}

// BatchExtent finds the extent f selects its batch entry from with the
// group id: a parameter indexed by builtin.group_id (or a cast of it) —
// one mode of a memref in a subview or load, or a group in a load. The
// first such use in program order counts; ok is false when there is none.
func (f *Func) BatchExtent() (x BatchExtent, ok bool) {
	// The group id and its casts: a kernel has one or two, so a short
	// list, where a map cost a hash per instruction looked at.
	var gidStore [4]*Value
	gid := gidStore[:0]
	isGid := func(v *Value) bool { return slices.Contains(gid, v) }
	f.Body.Walk(func(in *Inst) bool {
		if ok {
			return false // found: skip the rest
		}
		switch {
		case in.Op == OpBuiltin && in.Builtin == GroupID:
			gid = append(gid, in.Result())
		case in.Op == OpCast && isGid(in.Operands[0]):
			gid = append(gid, in.Result())
		case in.Op == OpSubview && isParam(in.Operands[0]):
			offsets, _ := in.SubviewSlices()
			for mode, off := range offsets {
				if off.Value != nil && isGid(off.Value) {
					x, ok = BatchExtent{int(in.Operands[0].Index), mode}, true
					break
				}
			}
		case in.Op == OpLoad && isParam(in.Operands[0]):
			for mode, idx := range in.Operands[1:] {
				if !isGid(idx) {
					continue
				}
				x, ok = BatchExtent{int(in.Operands[0].Index), mode}, true
				if in.Operands[0].Type.Kind() == KindGroup {
					x.Mode = GroupSizeMode
				}
				break
			}
		}
		return !ok
	})
	return x, ok
}

// isParam reports whether v is a function parameter.
func isParam(v *Value) bool { return v.Def == nil && v.Region == nil }

// UsesBuiltin reports whether f reads builtin b.
func (f *Func) UsesBuiltin(b BuiltinKind) bool {
	found := false
	f.Body.Walk(func(in *Inst) bool {
		found = found || in.Op == OpBuiltin && in.Builtin == b
		return !found
	})
	return found
}
