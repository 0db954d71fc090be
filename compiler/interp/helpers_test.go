package interp

import (
	"fmt"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"tltune/compiler/check"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
)

// parseFunc parses src, which must hold one function, and fails the test on
// a syntax error.
func parseFunc(t testing.TB, src string) *ir.Func {
	t.Helper()
	prog, errs := syntax.Parse([]byte(src))
	if len(errs) == 0 {
		errs = check.Program(prog, nil)
	}
	if len(errs) > 0 {
		t.Fatalf("front end:\n%v\nsource:\n%s", errs, src)
	}
	if len(prog.Funcs) != 1 {
		t.Fatalf("want one function, got %d", len(prog.Funcs))
	}
	return prog.Funcs[0]
}

// vec returns a packed vector memref of elem holding xs (float64, int64 or
// complex128 each).
func vec(elem *ir.Type, xs ...any) *Memref {
	m := NewMemref(elem, int64(len(xs)))
	for i, x := range xs {
		setAny(m.Buf, i, x)
	}
	return m
}

func setAny(b *Buffer, i int, x any) {
	switch x := x.(type) {
	case int:
		b.SetInt(i, int64(x))
	case int64:
		b.SetInt(i, x)
	case float64:
		b.SetFloat(i, x)
	case complex128:
		b.SetComplex(i, x)
	default:
		panic(fmt.Sprintf("setAny: %T", x))
	}
}

// same compares element i of b with want exactly (NaN equals NaN).
func same(b *Buffer, i int, want any) bool {
	switch w := want.(type) {
	case int:
		return b.Int(i) == int64(w)
	case int64:
		return b.Int(i) == w
	case float64:
		got := b.Float(i)
		return got == w && math.Signbit(got) == math.Signbit(w) || math.IsNaN(got) && math.IsNaN(w)
	case complex128:
		return b.Complex(i) == w || cmplx.IsNaN(b.Complex(i)) && cmplx.IsNaN(w)
	}
	return false
}

func element(b *Buffer, i int) any {
	switch {
	case b.Elem.IsInteger():
		return b.Int(i)
	case b.Elem.IsComplex():
		return b.Complex(i)
	}
	return b.Float(i)
}

// checkBuffer compares a whole buffer with want.
func checkBuffer(t *testing.T, name string, b *Buffer, want ...any) {
	t.Helper()
	if b.Len() != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, b.Len(), len(want))
	}
	for i, w := range want {
		if !same(b, i, w) {
			t.Errorf("%s[%d] = %v, want %v", name, i, element(b, i), w)
		}
	}
}

// resultKernel wraps body, which defines %r0, %r1, ..., into a kernel
// storing each %rK to %out[K].
func resultKernel(elem string, n int, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "func @t(%%out: memref<%sx%d>) {\n%s\n", elem, n, body)
	for k := range n {
		fmt.Fprintf(&b, "  %%idx%d = constant %d : index\n  store %%r%d, %%out[%%idx%d]\n", k, k, k, k)
	}
	b.WriteString("}\n")
	return b.String()
}
