package opencl

import (
	"fmt"

	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// broadcast returns x (of scalar type t) as held by lane `lane` of the
// subgroup.
func (e *fn) broadcast(x string, t *ir.Type, lane string) string {
	if e.launch.SubgroupSize == 1 {
		return x
	}
	reg := e.regType(t)
	if t.IsComplex() {
		r := realOf(reg)
		return fmt.Sprintf("(%s)(%s, %s)", reg, e.shuffleReal(x+".x", r, lane), e.shuffleReal(x+".y", r, lane))
	}
	return e.shuffleReal(x, reg, lane)
}

// shuffleReal moves a non-complex register value between lanes.
func (e *fn) shuffleReal(x, reg, lane string) string {
	switch e.target().Shuffle {
	case target.ShuffleIntel:
		// intel_sub_group_shuffle, unlike sub_group_broadcast, accepts a
		// lane index that differs between lanes (scans need that).
		switch reg {
		case "char", "short", "bool":
			return e.text.join("(", reg, ")intel_sub_group_shuffle((int)(", x, "), (uint)(", lane, "))")
		}
		return e.text.join("intel_sub_group_shuffle(", x, ", (uint)(", lane, "))") // mul_add broadcasts with it: no fmt
	case target.ShufflePTX:
		return e.ptxShuffle(x, reg, lane)
	case target.ShuffleLocal:
		return e.localShuffle(x, reg, lane)
	}
	panic("opencl: subgroup size > 1 on a target without shuffles")
}

// ptxShuffle reads x from lane `lane` of the subgroup with
// shfl.sync.idx.b32; 64-bit values move as two 32-bit halves.
func (e *fn) ptxShuffle(x, reg, lane string) string {
	h := e.ptxShuffleHelper()
	switch reg {
	case "double", "long":
		as := map[string]string{"double": "as_double", "long": "as_long"}[reg]
		return fmt.Sprintf("%s((uint2)(%s(as_uint2(%s).x, %s), %s(as_uint2(%s).y, %s)))", as, h, x, lane, h, x, lane)
	case "float":
		return e.text.join("as_float(", h, "(as_uint(", x, "), ", lane, "))") // the most frequent: not formatted
	}
	return fmt.Sprintf("(%s)%s((uint)(%s), %s)", reg, h, x, lane)
}

// ptxShuffleHelper adds the helper that shuffles 32 bits within the
// subgroup and returns its name. A warp's shuffle names every lane. A
// half-warp's takes its lane within its half (the segment mask 0x10 of
// shfl.sync's c operand) and names only its half's lanes, which may
// diverge from the other half's: the two halves are two subgroups.
func (e *fn) ptxShuffleHelper() string {
	if e.launch.SubgroupSize == 32 {
		return e.u.helpers.add("tl_shfl", `static inline uint tl_shfl(uint x, int lane) {
    uint r;
    __asm__ volatile ("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(x), "r"(lane));
    return r;
}`)
	}
	return e.u.helpers.add("tl_shfl16", `static inline uint tl_shfl16(uint x, int lane) {
    uint r;
    __asm__ volatile ("{\n\t.reg .u32 tl_l, tl_m;\n\tmov.u32 tl_l, %%laneid;\n\tand.b32 tl_l, tl_l, 16;\n\tmov.u32 tl_m, 0xffff;\n\tshl.b32 tl_m, tl_m, tl_l;\n\tshfl.sync.idx.b32 %0, %1, %2, 0x100f, tl_m;\n\t}" : "=r"(r) : "r"(x), "r"(lane));
    return r;
}`)
}

// subgroupOp writes subgroup_add/max/min (reduce or scans).
func (e *fn) subgroupOp(in *ir.Inst) error {
	t := in.Result().Type
	x := e.value(in.Operands[0])
	op := map[ir.Op]ir.ArithOp{ir.OpSubgroupAdd: ir.Add, ir.OpSubgroupMax: ir.Max, ir.OpSubgroupMin: ir.Min}[in.Op]
	ident, err := e.identity(op, t)
	if err != nil {
		return err
	}
	if e.launch.SubgroupSize == 1 {
		if in.Scan == ir.ExclusiveScan {
			e.define(in.Result(), ident)
		} else {
			e.define(in.Result(), x)
		}
		return nil
	}
	if e.target().Shuffle == target.ShuffleIntel && !t.IsComplex() {
		name := map[ir.ArithOp]string{ir.Add: "add", ir.Max: "max", ir.Min: "min"}[op]
		fn := map[ir.ScanKind]string{ir.Reduce: "sub_group_reduce_", ir.InclusiveScan: "sub_group_scan_inclusive_", ir.ExclusiveScan: "sub_group_scan_exclusive_"}[in.Scan]
		reg := e.regType(t)
		e.define(in.Result(), fmt.Sprintf("(%s)%s%s(%s)", reg, fn, name, widen(x, reg)))
		return nil
	}
	e.shuffleScan(in, op, x, ident)
	return nil
}

// widen converts 8- and 16-bit integers to int, the narrowest type the
// subgroup builtins take.
func widen(x, reg string) string {
	if reg == "char" || reg == "short" {
		return "(int)(" + x + ")"
	}
	return x
}

// shuffleScan implements reduce and scans with lane shuffles: a butterfly
// for the reduction, Hillis–Steele for the scans.
func (e *fn) shuffleScan(in *ir.Inst, op ir.ArithOp, x, ident string) {
	t := in.Result().Type
	reg := e.regType(t)
	sgs := e.launch.SubgroupSize
	acc := e.fresh("scan")
	e.line("%s %s = %s;", reg, acc, x)
	comb := func(a, b string) string { s, _ := e.binary(op, t, a, b); return s }
	e.line("for (int tl_o = 1; tl_o < %d; tl_o <<= 1) {", sgs)
	e.indent++
	// The shuffled value is always bound to a variable before it is
	// combined: a shuffle inside max(a, b) or a ?: would run only on the
	// lanes that evaluate it where max is a macro (NVIDIA's OpenCL), and
	// shfl.sync and the barriers of local shuffles need every lane.
	other := e.fresh("up")
	if in.Scan == ir.Reduce {
		e.line("const %s %s = %s;", reg, other, e.broadcast(acc, t, "tl_lane ^ tl_o"))
		e.line("%s = %s;", acc, comb(acc, other))
	} else {
		e.line("const %s %s = %s;", reg, other, e.broadcast(acc, t, "max(tl_lane - tl_o, 0)"))
		e.line("if (tl_lane >= tl_o) %s = %s;", acc, comb(acc, other))
	}
	e.indent--
	e.line("}")
	if in.Scan == ir.ExclusiveScan {
		// Every lane shuffles (shfl.sync with a full mask requires it);
		// only then does lane 0 take the identity.
		prev := e.fresh("prev")
		e.line("const %s %s = %s;", reg, prev, e.broadcast(acc, t, "max(tl_lane - 1, 0)"))
		e.define(in.Result(), fmt.Sprintf("tl_lane == 0 ? %s : %s", ident, prev))
		return
	}
	e.names.Set(in.Result(), acc)
}

// identity is the neutral element of op on type t.
func (e *fn) identity(op ir.ArithOp, t *ir.Type) (string, error) {
	reg := e.regType(t)
	switch {
	case op == ir.Add:
		return e.zero(t), nil
	case t.IsComplex():
		return "", fmt.Errorf("opencl: subgroup min/max of complex %s", t)
	case t.IsFloat():
		if op == ir.Max {
			return "(" + reg + ")(-INFINITY)", nil
		}
		return "(" + reg + ")INFINITY", nil
	}
	bits := t.Bits()
	if op == ir.Max {
		return fmt.Sprintf("(%s)(-%d - 1)", reg, int64(1)<<(bits-1)-1), nil
	}
	return fmt.Sprintf("(%s)%dL", reg, int64(1)<<(bits-1)-1), nil
}

// localShuffle reads x from lane `lane` through a local scratch array of
// one 64-bit word per lane (target.ShuffleLocal): a barrier, every lane
// writes its word, a barrier, every lane reads the word it wants.
func (e *fn) localShuffle(x, reg, lane string) string {
	if !e.scratch {
		e.scratch = true
		fmt.Fprintf(e.head, "    local ulong tl_scratch[%d];\n", e.launch.SubgroupSize)
	}
	bits := map[string][2]string{ // to and from the scratch word
		"float": {"(ulong)as_uint(%s)", "as_float((uint)%s)"}, "double": {"as_ulong(%s)", "as_double(%s)"},
		"int": {"(ulong)(uint)(%s)", "(int)(uint)%s"}, "long": {"(ulong)(%s)", "(long)%s"},
	}
	via := reg
	if _, ok := bits[reg]; !ok {
		via = "int" // bool, char, short
	}
	name := "tl_lshfl_" + via
	e.u.helpers.add(name, fmt.Sprintf(`static inline %[1]s %[2]s(local ulong* s, %[1]s x, int lane, int me) {
    barrier(CLK_LOCAL_MEM_FENCE);
    s[me] = %[3]s;
    barrier(CLK_LOCAL_MEM_FENCE);
    return %[4]s;
}`, via, name, fmt.Sprintf(bits[via][0], "x"), fmt.Sprintf(bits[via][1], "s[lane]")))
	call := fmt.Sprintf("%s(tl_scratch, (%s)(%s), %s, tl_lane)", name, via, x, lane)
	if via != reg {
		return "(" + reg + ")" + call
	}
	return call
}
