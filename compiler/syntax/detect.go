package syntax

import (
	"strings"

	"tltune/compiler/ir"
)

// Detect returns the dialect of src by the spellings only one dialect has:
// released tinytc's unprefixed mnemonics (add, less_than, group_id.x,
// subgroup_reduce_add, hadamard, ...) and compile-time variables, and the
// legacy reference's alloca -> memref, bare group_id, yield %v : type,
// foreach %i = ..., function attributes work_group_size(m, n) and
// constants as operands. Each of them is a syntax error in the current
// dialect, so a valid current program is always detected as current. With
// released spellings present the file is released, else with legacy ones
// legacy, else current.
func Detect(src []byte) Dialect {
	var s scanner
	s.init(string(src), func(ir.Pos, string) {})
	released, legacy := 0, 0
	var prev [2]token // the two tokens before the current one, latest first
	prevLit := ""
	line := int32(0)
	braces, nest := 0, 0 // depth of '{', and of '(' '[' '<' inside an instruction
	inst := ""           // mnemonic of the instruction being read, "" when none
	for {
		tok, pos, lit := s.next()
		if tok == tEOF {
			break
		}
		first := pos.Line != line
		line = pos.Line
		switch tok {
		case tLBrace:
			braces++
			inst = ""
		case tRBrace:
			braces--
			inst = ""
		case tLParen, tLBrack, tLess:
			nest++
		case tRParen, tRBrack, tGreater:
			nest--
		case tColon:
			inst = "" // a type follows
		}
		if first {
			inst, nest = "", 0
		}
		switch {
		case tok == tDef, tok == tWord && lit == "!calc":
			released++
		case tok == tWord && braces > 0 && (first || prev[0] == tEqual && prev[1] == tLocal):
			inst = lit
			released += releasedMnemonic(lit)
			if lit == "group_id" || lit == "group_size" {
				legacy++
			}
		case tok == tArrow && prevLit == "alloca",
			tok == tLParen && (prevLit == "work_group_size" || prevLit == "subgroup_size") && braces == 0,
			(tok == tLocal || tok == tColon) && prevLit == "yield",
			tok == tLocal && prevLit == "foreach",
			(tok == tInt || tok == tFloat) && nest == 0 && literalOperand(inst, prev[0], prevLit):
			legacy++
		}
		prev = [2]token{tok, prev[0]}
		prevLit = lit
	}
	switch {
	case released > 0:
		return Released
	case legacy > 0:
		return Legacy
	}
	return Current
}

// literalOperand reports whether a number after the token prev (spelled
// lit) of instruction inst, outside brackets, is an operand, which only the
// legacy dialect allows: right after the mnemonic or after a comma of an
// instruction other than constant, cumsum and cooperative_matrix_prefetch
// (which have numbers of their own), or
// as a bound of for and foreach.
func literalOperand(inst string, prev token, lit string) bool {
	switch {
	case inst == "" || inst == "constant" || strings.HasPrefix(inst, "cumsum") || strings.HasPrefix(inst, "cooperative_matrix_prefetch"):
		return false
	case prev == tWord:
		return lit == inst
	}
	return prev == tComma || prev == tEqual && (inst == "for" || inst == "foreach")
}

// releasedMnemonic returns 1 for an instruction word only the released
// dialect spells so.
func releasedMnemonic(word string) int {
	name, rest, _ := strings.Cut(word, ".")
	switch name {
	case "group_id", "num_groups", "num_subgroups", "subgroup_id":
		// These need a mode (.x); bare group_id is the legacy spelling.
		if rest != "" {
			return 1
		}
	case "gemm", "gemv", "axpby", "sum":
		// The released modifiers put .atomic before the transposes and
		// may leave the transposes out.
		if rest == "" || strings.HasPrefix(rest, "atomic") {
			return 1
		}
	default:
		if releasedOnly(name) {
			return 1
		}
	}
	return 0
}
