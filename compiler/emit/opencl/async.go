package opencl

import (
	"fmt"
	"strconv"

	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Asynchronous copies. On a target with cp.async (nvidia) an async_copy of
// 4, 8 or 16 bytes is one cp.async from global to shared memory, with the
// count of valid bytes as its source size (cp.async fills the rest with
// zeros), and async_commit / async_wait are commit_group / wait_group.
// Everywhere else, and for narrower copies, the copy is done when issued:
// a synchronous copy is one of the executions the semantics allow.

// rawScalar is the C type holding one element's bits.
func rawScalar(si *scalarInfo) string {
	typ, _ := rawVector(si, 1)
	if si.kind == kindComplex {
		return typ
	}
	return typ[:len(typ)-1] // "ushort1" -> "ushort"
}

func (e *fn) asyncCopy(in *ir.Inst) {
	srcV, srcIdx, dstV, dstIdx, validV := in.AsyncCopyOperands()
	dst := e.memref(dstV)
	si := e.u.scalar(srcV.Type.Elem())
	n := int(in.Count)
	// The line in parts, the addresses unjoined: a pipelined GEMM writes
	// dozens of copies. Its first part, the helper, comes last: adding it
	// after the addresses' (a swizzled destination's) keeps the preamble's
	// order. The source is global, never swizzled.
	var room [64]string
	parts := e.addrOf(append(room[:0], "", "("), dstV, dstIdx)
	dstEnd := len(parts)
	parts = e.addrOf(append(parts, ", "), srcV, srcIdx)
	valid := e.value(validV)
	full := isLiteralInt(validV, int64(n))
	bytes := n * si.size
	if e.u.target.Async == target.AsyncPTX && (bytes == 4 || bytes == 8 || bytes == 16) {
		parts[0] = e.u.helpers.cpAsync(bytes)
		size := strconv.Itoa(bytes)
		if !full {
			size = e.text.join("(uint)(", valid, ") * ", decimal(si.size))
		}
		e.put(append(parts, ", ", size, ");")...)
		return
	}
	dstAt, srcAt := e.text.join(parts[2:dstEnd]...), e.text.join(parts[dstEnd+1:]...)
	raw := rawScalar(si)
	if full && n > 1 {
		vec, _ := rawVector(si, n)
		e.put("*(", dst.space, " ", vec, "*)", dstAt, " = *(global const ", vec, "*)", srcAt, ";")
		return
	}
	if full {
		e.put("*(", dst.space, " ", raw, "*)", dstAt, " = *(global const ", raw, "*)", srcAt, ";")
		return
	}
	e.line("for (int tl_k = 0; tl_k < %d; ++tl_k)", n)
	e.line("    ((%s %s*)%s)[tl_k] = tl_k < %s ? ((global const %s*)%s)[tl_k] : (%s)0;", dst.space, raw, dstAt, valid, raw, srcAt, raw)
}

// isLiteralInt reports whether v is the integer constant x.
func isLiteralInt(v *ir.Value, x int64) bool {
	return v.Def != nil && v.Def.Op == ir.OpConstant && v.Def.Const.Kind == ir.ConstInt && v.Def.Const.Int == x
}

func (e *fn) asyncCommit() {
	if e.u.target.Async == target.AsyncPTX {
		e.line(`__asm__ volatile("cp.async.commit_group;" ::: "memory");`)
	}
}

func (e *fn) asyncWait(in *ir.Inst) {
	if e.u.target.Async == target.AsyncPTX {
		e.put(`__asm__ volatile("cp.async.wait_group `, e.text.itoa(in.Count), `;" ::: "memory");`)
	}
}

// cpAsync returns the helper issuing one cp.async of bytes (4, 8 or 16)
// from global to local memory, of which only the first src are read. Local
// pointers of NVIDIA's OpenCL are shared-window addresses: their low 32
// bits are what cp.async takes. 16-byte copies bypass L1 (.cg), the
// narrower ones cannot (.ca).
func (h *helperSet) cpAsync(bytes int) string {
	name := cpAsyncNames[bytes]
	cache := "ca"
	if bytes == 16 {
		cache = "cg"
	}
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline void %s(local void* dst, global const void* src, uint src_bytes) {
    __asm__ volatile("cp.async.%s.shared.global [%%0], [%%1], %d, %%2;" :: "r"((uint)(ulong)dst), "l"(src), "r"(src_bytes) : "memory");
}`, name, cache, bytes)
	})
}

// cpAsyncNames are the cp.async helpers' names by bytes copied: every copy
// asks, and joining the name was an allocation each.
var cpAsyncNames = [...]string{4: "tl_cp_async_4", 8: "tl_cp_async_8", 16: "tl_cp_async_16"}
