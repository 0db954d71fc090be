package interp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/numeric"
)

// Small collectives worked out by hand.
func TestCollectivesByHand(t *testing.T) {
	for _, c := range []struct {
		name, inst string
		a, b       *Memref // inputs (b may be nil)
		out        *Memref
		alpha      float64
		beta       float64
		want       []any
	}{
		// A = [1 3; 2 4], B = [5 7; 6 8] (column-major); A·Bᵀ = [26 30; 38 44]
		{"gemm.n.t", "gemm.n.t %alpha, %A, %B, %beta, %C", mat(2, 2, 1, 2, 3, 4), mat(2, 2, 5, 6, 7, 8), mat(2, 2, 1, 1, 1, 1), 2, 1,
			[]any{53.0, 77.0, 61.0, 89.0}},
		// Aᵀ·B = [1·5+2·6 1·7+2·8; 3·5+4·6 3·7+4·8] = [17 23; 39 53]
		{"gemm.t.n", "gemm.t.n %alpha, %A, %B, %beta, %C", mat(2, 2, 1, 2, 3, 4), mat(2, 2, 5, 6, 7, 8), mat(2, 2, 1, 1, 1, 1), 1, 0,
			[]any{17.0, 39.0, 23.0, 53.0}},
		// A·b with b = (1, -1): (1-3, 2-4)
		{"gemv.n", "gemv.n %alpha, %A, %B, %beta, %C", mat(2, 2, 1, 2, 3, 4), mat(2, 1, 1, -1), mat(2, 1, 10, 20), 1, 1,
			[]any{8.0, 18.0}},
		// a·bᵀ with a = (1, 2), b = (3, 4, 5)
		{"ger", "ger %alpha, %A, %B, %beta, %C", mat(2, 1, 1, 2), mat(3, 1, 3, 4, 5), mat(2, 3, 0, 0, 0, 0, 0, 0), -1, 0,
			[]any{-3.0, -6.0, -4.0, -8.0, -5.0, -10.0}},
		{"hadamard_product", "hadamard_product %alpha, %A, %B, %beta, %C", mat(3, 1, 1, 2, 3), mat(3, 1, 4, 5, 6), mat(3, 1, 1, 1, 1), 1, 2,
			[]any{6.0, 12.0, 20.0}},
		// B := 2·Aᵀ + B
		{"axpby.t", "axpby.t %alpha, %A, %beta, %C", mat(2, 2, 1, 2, 3, 4), nil, mat(2, 2, 1, 1, 1, 1), 2, 1,
			[]any{3.0, 7.0, 5.0, 9.0}},
		// row sums of A = [1 3; 2 4]: (4, 6); of Aᵀ: (3, 7)
		{"sum.n", "sum.n %alpha, %A, %beta, %C", mat(2, 2, 1, 2, 3, 4), nil, mat(2, 1, 0, 0), 1, 0, []any{4.0, 6.0}},
		{"sum.t", "sum.t %alpha, %A, %beta, %C", mat(2, 2, 1, 2, 3, 4), nil, mat(2, 1, 0, 0), 1, 0, []any{3.0, 7.0}},
		// cumulative sums along mode 1 of [1 3 5; 2 4 6]: [1 4 9; 2 6 12]
		{"cumsum", "cumsum %alpha, %A, 1, %beta, %C", mat(2, 3, 1, 2, 3, 4, 5, 6), nil, mat(2, 3, 0, 0, 0, 0, 0, 0), 1, 0,
			[]any{1.0, 2.0, 4.0, 6.0, 9.0, 12.0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			params := []string{"%alpha: f32", "%A: " + typeOf(c.a)}
			args := []Arg{{Float: c.alpha}, {Memref: c.a}}
			if c.b != nil {
				params = append(params, "%B: "+typeOf(c.b))
				args = append(args, Arg{Memref: c.b})
			}
			params = append(params, "%beta: f32", "%C: "+typeOf(c.out))
			args = append(args, Arg{Float: c.beta}, Arg{Memref: c.out})
			src := fmt.Sprintf("func @t(%s) {\n  %s\n}", strings.Join(params, ", "), c.inst)
			if err := Run(parseFunc(t, src), args, Options{}); err != nil {
				t.Fatal(err)
			}
			checkBuffer(t, "out", c.out.Buf, c.want...)
		})
	}
}

// TestCollectivesRefuseMisfitShapes: sizes known only at run time that do
// not fit the operation are the program's error, at its position, not a
// read beyond an operand.
func TestCollectivesRefuseMisfitShapes(t *testing.T) {
	for _, c := range []struct {
		inst     string
		a, b     *Memref
		out      *Memref
		complain string
	}{
		{"gemm.n.n %A, %B, %C", mat(2, 3), mat(2, 2), mat(2, 2), "columns(op(A)) (3) must equal rows(op(B)) (2)"},
		{"gemm.t.n %A, %B, %C", mat(3, 2), mat(3, 4), mat(3, 4), "rows(C) (3) must equal rows(op(A)) (2)"},
		{"gemm.n.t %A, %B, %C", mat(2, 2), mat(4, 2), mat(2, 3), "columns(C) (3) must equal columns(op(B)) (4)"},
		{"gemv.n %A, %B, %C", mat(2, 3), mat(4, 1), mat(2, 1), "columns(op(A)) (3) must equal rows(b) (4)"},
		{"ger %A, %B, %C", mat(2, 1), mat(3, 1), mat(2, 2), "columns(C) (2) must equal rows(b) (3)"},
		{"hadamard_product %A, %B, %C", mat(3, 1), mat(3, 1), mat(4, 1), "the shape of c [4] must equal the shape of a [3]"},
		{"axpby.t %A, %C", mat(2, 3), nil, mat(2, 3), "the shape of B [2 3] must equal the shape of op(A) [3 2]"},
		{"sum.n %A, %C", mat(2, 3), nil, mat(3, 1), "rows(b) (3) must equal rows(op(A)) (2)"},
		{"cumsum %A, 0, %C", mat(2, 3), nil, mat(3, 2), "the shape of B [3 2] must equal the shape of A [2 3]"},
	} {
		params := []string{"%A: " + typeOf(c.a)}
		args := []Arg{{Memref: c.a}}
		if c.b != nil {
			params = append(params, "%B: "+typeOf(c.b))
			args = append(args, Arg{Memref: c.b})
		}
		params = append(params, "%C: "+typeOf(c.out))
		args = append(args, Arg{Memref: c.out})
		mnemonic, operands, _ := strings.Cut(c.inst, " ")
		inst := mnemonic + " %one, " + strings.Replace(operands, ", %C", ", %one, %C", 1)
		src := fmt.Sprintf("func @t(%s) {\n  %%one = constant 1.0 : f32\n  %s\n}", strings.Join(params, ", "), inst)
		err := Run(parseFunc(t, src), args, Options{})
		if err == nil || !strings.Contains(err.Error(), c.complain) || !strings.Contains(err.Error(), "3:3: "+mnemonic) {
			t.Errorf("%s: %v; want an error at 3:3 that %s", c.inst, err, c.complain)
		}
	}
}

// mat returns a packed f32 memref (a vector when cols is 1) with the given
// column-major values.
func mat(rows, cols int64, xs ...float64) *Memref {
	m := NewMemref(ir.F32, rows, cols)
	if cols == 1 {
		m = NewMemref(ir.F32, rows)
	}
	for i, x := range xs {
		m.Buf.SetFloat(i, x)
	}
	return m
}

// typeOf spells a memref type with the argument's element type, all sizes
// and strides dynamic.
func typeOf(m *Memref) string {
	var b strings.Builder
	b.WriteString("memref<" + m.Buf.Elem.String())
	for range m.Shape {
		b.WriteString("x?")
	}
	if len(m.Shape) > 0 {
		b.WriteString(",strided<" + strings.TrimSuffix(strings.Repeat("?,", len(m.Shape)), ",") + ">")
	}
	return b.String() + ">"
}

// The property tests check each collective against its naive definition,
// recomputed here with the rounding of the compute type after every
// operation, over random shapes (empty ones included), strides and offsets,
// transposes, alpha and beta (beta = 0 on a NaN-poisoned output), atomic
// flags and element types. Buffers are compared whole, so writes outside
// the view are caught too.
func TestCollectivesMatchDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for trial := range 600 {
		p := randomProblem(r)
		name := fmt.Sprintf("trial %d: %s on %s", trial, p.inst, p.elem)
		for _, acc64 := range []bool{false, true} {
			want := p.reference(acc64)
			got := p.run(t, acc64)
			for i := range want.Len() {
				if !same(got, i, element(want, i)) {
					t.Fatalf("%s (acc64=%v): element %d = %v, want %v\n%s", name, acc64, i, element(got, i), element(want, i), p.src)
				}
			}
		}
	}
}

type problem struct {
	op, inst, src string
	elem          *ir.Type
	trans         [2]bool
	atomic        bool // beta is then a constant 0 or 1 in the source
	mode          int
	alpha, beta   float64
	ins           []*Memref
	out           *Memref
}

func randomProblem(r *rand.Rand) *problem {
	p := &problem{elem: []*ir.Type{ir.F64, ir.F32, ir.I32, ir.F16}[r.IntN(4)]}
	dim := func() int64 { return int64(r.IntN(5)) + 1 }
	p.trans = [2]bool{r.IntN(2) == 1, r.IntN(2) == 1}
	tr := func(i int) string {
		if p.trans[i] {
			return "t"
		}
		return "n"
	}
	swap := func(i int, s []int64) []int64 {
		if p.trans[i] && len(s) == 2 {
			return []int64{s[1], s[0]}
		}
		return s
	}
	m, n, k := dim(), dim(), int64(r.IntN(5)) // k = 0: an empty sum
	var inShapes [][]int64
	var outShape []int64
	switch p.op = []string{"gemm", "gemv", "ger", "hadamard_product", "axpby", "sum", "cumsum"}[r.IntN(7)]; p.op {
	case "gemm":
		p.inst = "gemm." + tr(0) + "." + tr(1)
		inShapes, outShape = [][]int64{swap(0, []int64{m, k}), swap(1, []int64{k, n})}, []int64{m, n}
	case "gemv":
		p.inst = "gemv." + tr(0)
		inShapes, outShape = [][]int64{swap(0, []int64{m, k}), {k}}, []int64{m}
	case "ger":
		p.inst = "ger"
		inShapes, outShape = [][]int64{{m}, {n}}, []int64{m, n}
	case "hadamard_product":
		p.inst = "hadamard_product"
		outShape = []int64{m, n}[:1+r.IntN(2)]
		inShapes = [][]int64{outShape, outShape}
	case "axpby":
		p.inst = "axpby." + tr(0)
		outShape = []int64{m, n}[:r.IntN(3)]
		inShapes = [][]int64{swap(0, outShape)}
	case "sum":
		p.inst = "sum." + tr(0)
		outShape = []int64{m}[:r.IntN(2)]
		inShapes = [][]int64{swap(0, append([]int64{m, n}[:len(outShape)], k))}
	case "cumsum":
		outShape = []int64{m, n, k}[:1+r.IntN(3)]
		p.mode = r.IntN(len(outShape))
		p.inst = "cumsum"
		inShapes = [][]int64{outShape}
	}
	p.alpha, p.beta = p.randScalar(r), p.randScalar(r)
	switch r.IntN(4) {
	case 0:
		p.beta = 0
	case 1:
		p.inst += ".atomic"
		p.atomic = true
		p.beta = float64(r.IntN(2))
	}
	for _, s := range inShapes {
		p.ins = append(p.ins, p.randMemref(r, s, false))
	}
	p.out = p.randMemref(r, outShape, p.beta == 0)
	p.src = p.source()
	return p
}

func (p *problem) randScalar(r *rand.Rand) float64 {
	if p.elem.IsInteger() {
		return float64(r.IntN(7) - 3)
	}
	return convert(floatVal(2*r.Float64()-1), ir.F64, p.elem).f
}

// randMemref returns a view with random strides (gaps between modes, an
// element stride of 1 or 2) at a random offset into a random buffer; the
// output of a beta = 0 problem is poisoned with NaN.
func (p *problem) randMemref(r *rand.Rand, shape []int64, poison bool) *Memref {
	m := &Memref{Shape: append([]int64(nil), shape...), Offset: int64(r.IntN(3))}
	s := int64(1 + r.IntN(2))
	for _, n := range shape {
		m.Stride = append(m.Stride, s)
		s = s*n + int64(r.IntN(3))
	}
	m.Buf = NewBuffer(p.elem, int(m.Offset+s+1))
	for i := range m.Buf.Len() {
		switch {
		case poison && !p.elem.IsInteger():
			m.Buf.SetFloat(i, math.NaN())
		case p.elem.IsInteger():
			m.Buf.SetInt(i, int64(r.IntN(11)-5))
		default:
			m.Buf.SetFloat(i, 2*r.Float64()-1)
		}
	}
	return m
}

func (p *problem) source() string {
	params := []string{"%alpha: " + p.elem.String()}
	names := []string{"%alpha"}
	for i, m := range p.ins {
		params = append(params, fmt.Sprintf("%%in%d: %s", i, typeOf(m)))
		names = append(names, fmt.Sprintf("%%in%d", i))
	}
	if p.op == "cumsum" {
		names = append(names, fmt.Sprint(p.mode))
	}
	body := ""
	if p.atomic {
		lit := fmt.Sprint(p.beta)
		if !p.elem.IsInteger() {
			lit += ".0"
		}
		body = fmt.Sprintf("  %%beta = constant %s : %s\n", lit, p.elem)
	} else {
		params = append(params, "%beta: "+p.elem.String())
	}
	params = append(params, "%out: "+typeOf(p.out))
	names = append(names, "%beta", "%out")
	return fmt.Sprintf("func @t(%s) {\n%s  %s %s\n}\n", strings.Join(params, ", "), body, p.inst, strings.Join(names, ", "))
}

func clone(m *Memref) *Memref {
	c := *m
	c.Buf = &Buffer{Elem: m.Buf.Elem, Data: append([]byte(nil), m.Buf.Data...)}
	return &c
}

func (p *problem) run(t *testing.T, acc64 bool) *Buffer {
	out := clone(p.out)
	args := []Arg{p.scalarArg(p.alpha)}
	for _, m := range p.ins {
		args = append(args, Arg{Memref: m})
	}
	if !p.atomic {
		args = append(args, p.scalarArg(p.beta))
	}
	args = append(args, Arg{Memref: out})
	if err := Run(parseFunc(t, p.src), args, Options{Accumulate64: acc64}); err != nil {
		t.Fatalf("%v\n%s", err, p.src)
	}
	return out.Buf
}

func (p *problem) scalarArg(x float64) Arg {
	if p.elem.IsInteger() {
		return Arg{Int: int64(x)}
	}
	return Arg{Float: x}
}

// reference evaluates the definition naively in float64, rounding to the
// compute type after every operation: the output type, or (acc64) f64 with
// one rounding at the end. Integer values stay small enough to be exact.
func (p *problem) reference(acc64 bool) *Buffer {
	round := func(x float64) float64 {
		switch p.elem.Kind() {
		case ir.KindF32:
			return numeric.RoundF32(x)
		case ir.KindF16:
			return numeric.RoundF16(x)
		case ir.KindI32:
			return float64(numeric.Wrap(int64(x), 32))
		}
		return x
	}
	final := round
	if acc64 {
		round = func(x float64) float64 { return x }
	}
	get := func(m *Memref, idx ...int64) float64 {
		a := m.Offset
		for k, i := range idx {
			a += i * m.Stride[k]
		}
		return m.Buf.Float(int(a))
	}
	op := func(i int, idx ...int64) float64 { // element of op(input i)
		if p.transposes(i) && len(idx) == 2 {
			idx = []int64{idx[1], idx[0]}
		}
		return get(p.ins[i], idx...)
	}
	dot := func(n int64, term func(k int64) float64) float64 {
		acc := 0.0
		for k := range n {
			acc = round(acc + term(k))
		}
		return acc
	}
	want := clone(p.out)
	elements(p.out.Shape, func(idx []int64) error {
		var v float64
		switch p.op {
		case "gemm":
			v = dot(p.opCols(0), func(k int64) float64 { return round(op(0, idx[0], k) * op(1, k, idx[1])) })
		case "gemv":
			v = dot(p.opCols(0), func(k int64) float64 { return round(op(0, idx[0], k) * get(p.ins[1], k)) })
		case "ger":
			v = round(get(p.ins[0], idx[0]) * get(p.ins[1], idx[1]))
		case "hadamard_product":
			v = round(get(p.ins[0], idx...) * get(p.ins[1], idx...))
		case "axpby":
			v = op(0, idx...)
		case "sum":
			if len(idx) == 0 {
				v = dot(p.ins[0].Shape[0], func(k int64) float64 { return get(p.ins[0], k) })
			} else {
				v = dot(p.opCols(0), func(k int64) float64 { return op(0, idx[0], k) })
			}
		case "cumsum":
			src := append([]int64(nil), idx...)
			v = dot(idx[p.mode]+1, func(k int64) float64 { src[p.mode] = k; return get(p.ins[0], src...) })
		}
		v = round(p.alpha * v)
		if p.beta != 0 {
			v = round(v + round(p.beta*get(p.out, idx...)))
		}
		a := p.out.Offset
		for k, i := range idx {
			a += i * p.out.Stride[k]
		}
		want.Buf.SetFloat(int(a), final(v))
		return nil
	})
	return want.Buf
}

// transposes reports whether input i enters the operation transposed.
func (p *problem) transposes(i int) bool {
	switch p.op {
	case "gemm":
		return p.trans[i]
	case "gemv", "axpby", "sum":
		return i == 0 && p.trans[0]
	}
	return false
}

// opCols is the number of columns of op(input i), a matrix.
func (p *problem) opCols(i int) int64 {
	s := p.ins[i].Shape
	if p.trans[i] {
		return s[0]
	}
	return s[1]
}

// Summing 4096 ones in f16 stalls at 2048 (2048 + 1 ties to even 2048);
// accumulating in f64 gives the exact 4096, which f16 represents.
func TestAccumulate64(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<f16x4096>, %b: memref<f16>) {
  %one = constant 1.0 : f16
  %zero = constant 0.0 : f16
  sum.n %one, %A, %zero, %b
}`)
	A := NewMemref(ir.F16, 4096)
	for i := range 4096 {
		A.Buf.SetFloat(i, 1)
	}
	for _, c := range []struct {
		acc64 bool
		want  float64
	}{{false, 2048}, {true, 4096}} {
		b := NewMemref(ir.F16)
		if err := Run(fn, []Arg{{Memref: A}, {Memref: b}}, Options{Accumulate64: c.acc64}); err != nil {
			t.Fatal(err)
		}
		checkBuffer(t, fmt.Sprintf("acc64=%v", c.acc64), b.Buf, c.want)
	}
}

// Every work-group adds its product into the same C with gemm.atomic.
func TestAtomicCollectiveAcrossGroups(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<i32x2x2x?>, %B: memref<i32x2x2>, %C: memref<i32x2x2>) {
  %g = builtin.group_id : index
  %a = subview %A[0:2, 0:2, %g] : memref<i32x2x2>
  %one = constant 1 : i32
  gemm.n.n.atomic %one, %a, %B, %one, %C
}`)
	// A_g = g·I, B = [1 3; 2 4]: C = C0 + (0+1+2)·B
	A := NewMemref(ir.I32, 2, 2, 3)
	for g := range 3 {
		A.Buf.SetInt(4*g, int64(g))
		A.Buf.SetInt(4*g+3, int64(g))
	}
	B := vec(ir.I32, 1, 2, 3, 4)
	B.Shape, B.Stride = []int64{2, 2}, []int64{1, 2}
	C := vec(ir.I32, 100, 100, 100, 100)
	C.Shape, C.Stride = []int64{2, 2}, []int64{1, 2}
	if err := Run(fn, []Arg{{Memref: A}, {Memref: B}, {Memref: C}}, Options{Groups: 3}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "C", C.Buf, 103, 106, 109, 112)
}

// A fused two-stage batched kernel: Y_g += α (X_g W) V with X a group, the
// intermediate product in local memory, Y a batch of matrices (last mode).
func TestFusedKernel(t *testing.T) {
	fn := parseFunc(t, `func @fused(%alpha: f32, %X: group<memref<f32x8x4>x?>, %W: memref<f32x4x6>,
              %V: memref<f32x6x8>, %Y: memref<f32x8x8x?>) {
  %g = builtin.group_id : index
  %x = load %X[%g] : memref<f32x8x4>
  %y = subview %Y[0:8, 0:8, %g] : memref<f32x8x8>
  %t = alloca : memref<f32x8x6, local>
  %zero = constant 0.0 : f32
  %one = constant 1.0 : f32
  gemm.n.n %one, %x, %W, %zero, %t
  gemm.n.n %alpha, %t, %V, %one, %y
}`)
	r := rand.New(rand.NewPCG(7, 7))
	random := func(shape ...int64) *Memref {
		m := NewMemref(ir.F32, shape...)
		for i := range m.Buf.Len() {
			m.Buf.SetFloat(i, 2*r.Float64()-1)
		}
		return m
	}
	const batch = 3
	X := &Group{}
	for range batch {
		X.Memrefs = append(X.Memrefs, random(8, 4))
	}
	W, V, Y := random(4, 6), random(6, 8), random(8, 8, batch)
	Y0 := clone(Y)
	alpha := float64(float32(0.75))
	args := []Arg{{Float: alpha}, {Group: X}, {Memref: W}, {Memref: V}, {Memref: Y}}
	if err := Run(fn, args, Options{Groups: batch, Accumulate64: true}); err != nil {
		t.Fatal(err)
	}
	at := func(m *Memref, idx ...int64) float64 { v, _ := m.get(idx...); return v.f }
	for g := range int64(batch) {
		x := X.Memrefs[g]
		for i := range int64(8) {
			for j := range int64(8) {
				acc := 0.0
				for l := range int64(6) {
					tl := 0.0
					for k := range int64(4) {
						tl += at(x, i, k) * at(W, k, l)
					}
					acc += numeric.RoundF32(tl) * at(V, l, j)
				}
				want := numeric.RoundF32(alpha*acc + at(Y0, i, j, g))
				if got := at(Y, i, j, g); got != want {
					t.Fatalf("Y[%d,%d,%d] = %g, want %g", i, j, g, got, want)
				}
			}
		}
	}
}
