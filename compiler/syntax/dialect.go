package syntax

import (
	"fmt"
	"strings"

	"tltune/compiler/diag"
	"tltune/compiler/ir"
)

// Dialect is a concrete syntax of the tensor language. Every dialect is
// read by the same parser into the same IR; they differ in spellings and
// in a few productions (docs/language.md, Dialects).
type Dialect uint8

// The dialects.
const (
	// Current is tltune's: the language reference (tensor-language.rst)
	// with tltune's extensions. The printer writes it.
	Current Dialect = iota
	// Released is the language of the released tinytc (v0.4 and later):
	// unprefixed arithmetic, comparisons and builtins (add, less_than,
	// group_id.x), hadamard, subgroup_reduce_add, ..., compile-time
	// variables ($name = ...) and !calc.
	Released
	// Legacy is the language of the legacy reference: types after a colon
	// on every instruction, constants as operands, alloca -> memref,
	// group_id, yield %v : type, foreach %i = 0, n, work_group_size(m, n).
	Legacy
	// Auto reads a file in the dialect its spellings give away (Detect).
	Auto
)

var dialectNames = [...]string{Current: "current", Released: "released", Legacy: "legacy", Auto: "auto"}

func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return "invalid"
}

// DialectByName returns the dialect called name (current, released,
// legacy, auto).
func DialectByName(name string) (Dialect, error) {
	for d, n := range dialectNames {
		if n == name {
			return Dialect(d), nil
		}
	}
	return 0, fmt.Errorf("unknown dialect %q (use %s)", name, strings.Join(dialectNames[:], ", "))
}

// Read parses src in dialect d; Auto detects the dialect first (Detect).
// Like Parse, it returns every error found, sorted.
func Read(src []byte, d Dialect) (*ir.Program, diag.List) {
	if d == Auto {
		d = Detect(src)
	}
	return parse(src, d)
}
