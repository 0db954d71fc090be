package ir

import "fmt"

// A Misfit is a broken size rule of a collective instruction: Got, the size
// of one mode of an operand or, with Shapes, its whole shape, must equal
// Want. The verifier looks for misfits among static sizes and the
// interpreter among the sizes of a run; the rules live here so that the two
// cannot drift apart.
type Misfit struct {
	Got, Want []int64
	// GotWhat and WantWhat say what the sizes are, in the notation of the
	// specification: "columns(op(A))", "rows(b)"; with Shapes, the operands
	// or views whose shapes they are: "B", "op(A)".
	GotWhat, WantWhat string
	Shapes            bool
	// At is the operand that a report of the misfit points at, an index
	// into Inst.Operands.
	At int
	// View tells that Want is the shape of op(A), which has no name in
	// the program, rather than that of A itself (Operands[1]).
	View bool
}

// String words a misfit without naming the instruction, in the
// specification's notation (a shape as a Go slice).
func (m Misfit) String() string {
	if m.Shapes {
		return fmt.Sprintf("the shape of %s %v must equal the shape of %s %v", m.GotWhat, m.Got, m.WantWhat, m.Want)
	}
	return fmt.Sprintf("%s (%d) must equal %s (%d)", m.GotWhat, m.Got[0], m.WantWhat, m.Want[0])
}

// fits reports whether the rule may hold: a Dynamic size is unknown and
// fits any size.
func (m Misfit) fits() bool {
	if len(m.Got) != len(m.Want) {
		return false
	}
	for i, g := range m.Got {
		if w := m.Want[i]; g != w && g != Dynamic && w != Dynamic {
			return false
		}
	}
	return true
}

// Misfits returns the size rules of collective op that the shapes of its
// tensor inputs and of its output break, in the order of the rules.
// The orders of the operands must already be those op requires (sum's
// output and input orders differ by one), which the shapes alone do not
// settle.
func Misfits(op Op, transA, transB Transpose, inputs [][]int64, out []int64) []Misfit {
	var broken []Misfit
	for _, r := range sizeRules(op, transA, transB, inputs, out) {
		if !r.fits() {
			broken = append(broken, r)
		}
	}
	return broken
}

// sizeRules returns every size rule of collective op, broken or not, each
// as the Misfit it is when broken. The inputs are Operands[1],
// Operands[2], ...; the output follows beta.
func sizeRules(op Op, transA, transB Transpose, inputs [][]int64, out []int64) []Misfit {
	outAt := len(inputs) + 2
	a := transA.Of(inputs[0])
	switch op {
	case OpGemm:
		b := transB.Of(inputs[1])
		return []Misfit{
			sizeRule(2, a[1], "columns(op(A))", b[0], "rows(op(B))"),
			sizeRule(outAt, out[0], "rows(C)", a[0], "rows(op(A))"),
			sizeRule(outAt, out[1], "columns(C)", b[1], "columns(op(B))"),
		}
	case OpGemv:
		return []Misfit{
			sizeRule(2, a[1], "columns(op(A))", inputs[1][0], "rows(b)"),
			sizeRule(outAt, out[0], "rows(c)", a[0], "rows(op(A))"),
		}
	case OpGer:
		return []Misfit{
			sizeRule(outAt, out[0], "rows(C)", inputs[0][0], "rows(a)"),
			sizeRule(outAt, out[1], "columns(C)", inputs[1][0], "rows(b)"),
		}
	case OpHadamardProduct:
		return []Misfit{
			shapeRule(2, inputs[1], "b", inputs[0], "a"),
			shapeRule(outAt, out, "c", inputs[0], "a"),
		}
	case OpAxpby:
		r := shapeRule(outAt, out, "B", a, "op(A)")
		r.View = true
		return []Misfit{r}
	case OpSum:
		if len(out) == 1 { // a scalar b, the sum of a vector, has no rows
			return []Misfit{sizeRule(outAt, out[0], "rows(b)", a[0], "rows(op(A))")}
		}
	case OpCumsum:
		return []Misfit{shapeRule(outAt, out, "B", inputs[0], "A")}
	}
	return nil
}

// sizeRule is the rule that one mode's size got equals want, reported at
// operand at.
func sizeRule(at int, got int64, gotWhat string, want int64, wantWhat string) Misfit {
	return Misfit{At: at, Got: []int64{got}, GotWhat: gotWhat, Want: []int64{want}, WantWhat: wantWhat}
}

// shapeRule is the rule that the shape of operand at equals want.
func shapeRule(at int, got []int64, gotWhat string, want []int64, wantWhat string) Misfit {
	return Misfit{At: at, Got: got, GotWhat: gotWhat, Want: want, WantWhat: wantWhat, Shapes: true}
}
