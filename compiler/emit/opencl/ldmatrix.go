package opencl

import (
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// Packed fragment loads. A packed A or B fragment (packedValues) is loaded
// with ldmatrix where the memory allows, else element by element as bits.
//
// ldmatrix.x4 (x2) gives each lane, for each of four (two) 8×8 matrices of
// 16-bit elements whose rows are 16 contiguous bytes, the pair of elements
// (row lane/4, columns 2·(lane%4), +1); with .trans, of the transposed
// matrix. An A fragment (16×16) is four such matrices at (0,0), (8,0),
// (0,8), (8,8) and pairs columns; a B fragment (16×8) two at (0,0), (8,0)
// and pairs rows. So a matrix row is read along the memory's contiguous
// mode, and the transpose is needed when that mode runs along the fragment
// element pairs' other direction: for A when memory is contiguous along
// the fragment's rows, for B when it is contiguous along its columns. Lane
// l gives the address of row l%8 of matrix l/8.

// ldmatrixOK reports whether the packed load in can use ldmatrix: local
// memory, no bounds checks, and 16-byte aligned matrix rows — a memref
// aligned to 16 bytes, the contiguous-mode index a multiple of 8 elements
// and the other mode's stride a multiple of 8 elements.
func (e *fn) ldmatrixOK(in *ir.Inst) bool {
	m := in.Operands[0]
	t := m.Type
	return t.Space() == ir.Local && in.Checked == ir.Unchecked && t.Order() == 2 &&
		t.Stride()[0] == 1 && t.Stride()[1] != ir.Dynamic && t.Stride()[1]%8 == 0 &&
		e.alignment(m)%16 == 0 && ir.Divisible(in.Operands[1], 8)
}

func (e *fn) packedLoad(in *ir.Inst) {
	if e.ldmatrixOK(in) {
		e.ldmatrix(in)
		return
	}
	e.packedBitsLoad(in)
}

// ldmatrix loads the fragment's blocks with ldmatrix.x4: one 16×16 A block,
// or two 16×8 B blocks side by side (.x2 for a lone one). In either case
// matrix j of an instruction sits at (8·(j%2), 8·(j/2)) from the first
// block's origin.
func (e *fn) ldmatrix(in *ir.Inst) {
	v := in.Result()
	t := v.Type
	m := e.memref(in.Operands[0])
	x, y := e.value(in.Operands[1]), e.value(in.Operands[2])
	name, _ := e.coopDecl(v)
	fr := e.frags[t.Use()]
	trans := in.TransA == ir.Trans
	// Memory runs along the fragment's rows unless the load transposes.
	alongRows := !trans
	isA := t.Use() == ir.MatrixA
	suffix := ""
	if alongRows == isA {
		suffix = ".trans"
	}
	// Lane l addresses row l%8 of matrix l/8, a row running across the
	// fragment's columns when memory runs along its rows.
	rowOff, colOff := "8 * (tl_mj & 1)", "8 * (tl_mj >> 1) + tl_mq"
	if !alongRows {
		rowOff, colOff = "8 * (tl_mj & 1) + tl_mq", "8 * (tl_mj >> 1)"
	}
	blocksM := int(t.Rows()) / fr.br
	blocksN := int(t.Cols()) / fr.bc
	e.line("{")
	e.indent++
	e.line("const int tl_mj = tl_lane >> 3, tl_mq = tl_lane & 7;")
	// An instruction per block, or per pair of B blocks side by side.
	for bn := 0; bn < blocksN; {
		n := 1 // blocks an instruction loads
		if !isA && bn+1 < blocksN {
			n = 2
		}
		for bm := range blocksM {
			b := bm + bn*blocksM
			r := e.text.join(decimal((b%blocksM)*fr.br), " + ", rowOff)
			c := e.text.join(decimal((b/blocksM)*fr.bc), " + ", colOff)
			memRow, memCol := e.add(x, r), e.add(y, c)
			if trans {
				memRow, memCol = e.add(x, c), e.add(y, r)
			}
			addr := e.elemAddr(m, e.add(memRow, e.mul(memCol, m.stride[1])))
			blocks := [2]int{b, b + blocksM}
			e.ldmatrixLine(suffix, name, blocks[:n], fr.per/2, addr)
		}
		bn += n
	}
	e.indent--
	e.line("}")
}

// ldmatrixLine writes one ldmatrix of the registers of blocks, regs each,
// of the fragment variable name, from the lane's row address addr. It is
// written from its parts: formatted, its operand lists were most of the
// objects the emitter allocated for a pipelined GEMM.
func (e *fn) ldmatrixLine(suffix, name string, blocks []int, regs int, addr string) {
	n := len(blocks) * regs
	var room [48]string
	parts := append(room[:0], `__asm__ volatile("ldmatrix.sync.aligned.m8n8.x`, e.text.itoa(int64(n)), suffix,
		".shared.b16 ", ldmatrixOperands(n), `;" : `)
	out := e.text.join(`"=r"(`, name, ".v[")
	for i, blk := range blocks {
		for k := range regs {
			if i > 0 || k > 0 {
				parts = append(parts, ", ")
			}
			parts = append(parts, out, e.text.itoa(int64(blk*regs+k)), "])")
		}
	}
	e.put(append(parts, ` : "r"((uint)(ulong)`, addr, "));")...)
}

// ldmatrixOperands is the operand list of an ldmatrix of n registers,
// "{%0,%1}, [%2]": spelled once for the counts ldmatrix has.
func ldmatrixOperands(n int) string {
	if n < len(ldmatrixLists) && ldmatrixLists[n] != "" {
		return ldmatrixLists[n]
	}
	return spellOperands(n)
}

var ldmatrixLists = [...]string{1: spellOperands(1), 2: spellOperands(2), 4: spellOperands(4)}

func spellOperands(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("%" + strconv.Itoa(i))
	}
	b.WriteString("}, [%" + strconv.Itoa(n) + "]")
	return b.String()
}

// packedBitsLoad loads a packed fragment element by element: the 16 bits
// of each element as they are in memory, two to a register (bounds checks
// as the load asks, zero outside).
func (e *fn) packedBitsLoad(in *ir.Inst) {
	v := in.Result()
	m := e.memref(in.Operands[0])
	x, y := e.value(in.Operands[1]), e.value(in.Operands[2])
	name, _ := e.coopDecl(v)
	e.coopElems(v)
	off, cond := e.coopAccess(m, x, y, in.TransA == ir.Trans, in.Checked)
	ptr, idx := e.elemAt(m, off)
	// Joined, not formatted: a packed fragment's load is written for every
	// piece of a panel.
	bits := e.text.join("(uint)((", m.space, " const ushort*)", ptr, ")[", idx, "]")
	if cond != "" {
		bits = e.text.join("(", cond, " ? ", bits, " : 0u)")
	}
	// Slot k holds element k: the low half of register k/2 for even k.
	e.put("if ((tl_k & 1) == 0) ", name, ".v[tl_k >> 1] = ", bits, "; else ", name, ".v[tl_k >> 1] |= ", bits, " << 16;")
	e.closeElems()
}
