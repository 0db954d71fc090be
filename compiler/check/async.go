package check

import "tltune/compiler/ir"

// asyncCopy checks an async_copy: a global source and a local destination
// of one element type, one index per mode on each side, both contiguous in
// mode 0, a valid width and an index count of valid elements.
func (c *checker) asyncCopy(in *ir.Inst, _ ir.RegionKind) {
	src, srcIdx, dst, dstIdx, valid := in.AsyncCopyOperands()
	if src == nil || dst == nil || valid == nil || len(in.Results) != 0 {
		c.errorf(in.OpPos(), "%s takes a source memref with its indices, a destination memref with its indices and the count of valid elements", in.Mnemonic())
		return
	}
	if err := ir.ValidCopyWidth(int(in.Count), src.Type.Elem()); err != nil {
		c.errorf(in.OpPos(), "%s: %v", in.Mnemonic(), err)
	}
	side := func(m *ir.Value, idx []*ir.Value, space ir.AddrSpace, role string) {
		t := m.Type
		if t.Space() != space {
			c.errorf(in.OpPos(), "%s: the %s %s must be a %s memref, found %s", in.Mnemonic(), role, name(m), space, t)
		}
		if len(idx) != t.Order() {
			c.errorf(in.OpPos(), "%s: %s (order %d) needs %d indices, found %d", in.Mnemonic(), name(m), t.Order(), t.Order(), len(idx))
		}
		if t.Order() == 0 || t.Stride()[0] != 1 {
			c.errorf(in.OpPos(), "%s needs memrefs whose mode 0 has the static stride 1; %s is %s", in.Mnemonic(), name(m), t)
		}
	}
	side(src, srcIdx, ir.Global, "source")
	side(dst, dstIdx, ir.Local, "destination")
	if src.Type.Elem() != dst.Type.Elem() {
		c.errorf(in.OpPos(), "%s copies %s elements into a memref of %s", in.Mnemonic(), src.Type.Elem(), dst.Type.Elem())
	}
	for i := 1; i < len(in.Operands); i++ {
		if v := in.Operands[i]; v != dst {
			c.wantIndex(in, i)
		}
	}
}

// asyncCommit and asyncWait take no operands; async_wait's count of groups
// left in flight is not negative.
func (c *checker) asyncCommit(in *ir.Inst, _ ir.RegionKind) { c.count(in, 0, 0) }

func (c *checker) asyncWait(in *ir.Inst, _ ir.RegionKind) {
	c.count(in, 0, 0)
	if in.Count < 0 {
		c.errorf(in.OpPos(), "%s: the number of copy groups left in flight must not be negative", in.Mnemonic())
	}
}
