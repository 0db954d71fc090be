package ptx_test

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/ptx"
	"tltune/compiler/tuning"
	"tltune/internal/golden"
	"tltune/kernels"
)

// compilePTX compiles src with opts and returns its PTX, failing the test
// when the compiler wrote none.
func compilePTX(t *testing.T, name string, src []byte, opts compiler.Options) string {
	t.Helper()
	res, err := compiler.Compile(src, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.PTXErr != nil {
		t.Fatalf("%s: no PTX: %v\n%s", name, res.PTXErr, src)
	}
	if err := checkStructure(res.PTX); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, res.PTX)
	}
	return res.PTX
}

// TestCoverage: every sampled configuration the pruner keeps of the
// shipped gemv and ger spaces compiles to PTX for the real dtypes, on a
// square shape and a ragged one (scalar tails, checked rows).
func TestCoverage(t *testing.T) {
	reals := []kernels.DType{kernels.F16, kernels.BF16, kernels.F32, kernels.F64}
	ps := problems(256, 256, reals...)
	ps = append(ps, problems(100, 60, reals...)...)
	n := 0
	for _, p := range ps {
		count := 40
		if p.m != 256 {
			count = 10
		}
		samples, opts := sampled(t, p, count)
		for _, s := range samples {
			compilePTX(t, s.name, s.src, opts)
			n++
		}
	}
	t.Logf("%d configurations compiled to PTX", n)
}

// TestComplexCoverage reports how many sampled configurations of the
// complex dtypes compile to PTX: the writer supports some, the rest say
// what is missing.
func TestComplexCoverage(t *testing.T) {
	n, written := 0, 0
	defer func() { t.Logf("%d of %d configurations compiled to PTX", written, n) }()
	for _, p := range problems(256, 256, kernels.C32, kernels.C64) {
		samples, opts := sampled(t, p, 10)
		for _, s := range samples {
			n++
			res, err := compiler.Compile(s.src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.PTXErr != nil {
				if !errors.Is(res.PTXErr, ptx.ErrUnsupported) {
					t.Errorf("%s: %v is not ErrUnsupported", s.name, res.PTXErr)
				}
				continue
			}
			if err := checkStructure(res.PTX); err != nil {
				t.Errorf("%s: %v", s.name, err)
			}
			written++
		}
	}
}

// TestUnsupported: what the writer lacks is ErrUnsupported, the OpenCL C
// is still written, and other targets have no PTX.
func TestUnsupported(t *testing.T) {
	// A GEMM updating C atomically: the writer has no atomics.
	r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1, Atomic: true})
	if err != nil {
		t.Fatal(err)
	}
	src, err := r.Source(tuning.Params{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tgt := range []string{"nvidia", "generic"} {
		res, err := compiler.Compile([]byte(src), compiler.Options{Target: tgt, PTX: true})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res.PTXErr, ptx.ErrUnsupported) || res.PTX != "" || res.OpenCL == "" {
			t.Errorf("gemm on %s: PTX %d bytes, error %v, OpenCL C %d bytes; want no PTX, ErrUnsupported, OpenCL C",
				tgt, len(res.PTX), res.PTXErr, len(res.OpenCL))
		}
	}
}

// goldenCases are a few GEMV and GER kernels whose PTX is kept in
// testdata: both transposes, splits, several entries per work-group,
// vector widths 1, 2, 4 and 8, f16, bf16, f32 and f64, an inner loop
// unrolled.
var goldenCases = []struct {
	name   string
	spec   kernels.Spec
	params tuning.Params
}{
	{"gemv-n-f16-v4-b4-split4", gemv(kernels.F16, false), params(32, 4, 32, 4, 32, 4, 4)},
	{"gemv-t-f64-v2-b2-split2", gemv(kernels.F64, true), params(32, 2, 16, 8, 64, 2, 2)},
	{"gemv-t-bf16-v8", gemv(kernels.BF16, true), params(32, 8, 8, 32, 64, 1, 1)},
	{"gemv-n-f16-v1-unrolled", gemv(kernels.F16, false), params(32, 1, 1, 32, 32, 1, 1)},
	{"ger-f16-v1", ger(kernels.F16), params(32, 1, 2, 16, 64, 1, 1)},
	{"ger-f32-v4-b2-split2", ger(kernels.F32), params(32, 4, 32, 4, 32, 2, 2)},
	{"ger-f64-v2-b4", ger(kernels.F64), params(32, 2, 16, 8, 64, 4, 1)},
}

func gemv(dt kernels.DType, trans bool) kernels.Spec {
	acc := dt
	if dt == kernels.F16 || dt == kernels.BF16 {
		acc = kernels.F32
	}
	return kernels.Spec{Op: kernels.GEMVOp, M: 256, N: 256, DType: dt, Acc: acc, TransA: trans,
		Layout: kernels.Strided, Alpha: 1, Beta: 0.5}
}

func ger(dt kernels.DType) kernels.Spec {
	s := gemv(dt, false)
	s.Op = kernels.GEROp
	return s
}

// params is an nvidia configuration: subgroup size, vector width, tile,
// work-group width, batch entries per work-group and split.
func params(sgs, vw, tm, tn, wx, b, split int) tuning.Params {
	return tuning.Params{SubgroupSize: sgs, VectorWidth: vw, Tile: [2]int{tm, tn}, WorkGroupSize: [2]int{wx, 1},
		Unroll: 1, BatchPerGroup: b, Split: split}
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			r, err := kernels.New(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			src, err := r.Source(c.params)
			if err != nil {
				t.Fatal(err)
			}
			text := compilePTX(t, c.name, []byte(src), compiler.Options{Target: "nvidia", PTX: true})
			golden.Check(t, "testdata/"+c.name+".ptx", []byte(text))
		})
	}
}

// TestCheckStructure: the structural check catches what it is for.
func TestCheckStructure(t *testing.T) {
	good := ".entry k(\n)\n{\n\t.reg .b32 \t%r<3>;\n\t.reg .pred \t%p<2>;\n\tmov.b32\t%r2, 0;\n$L_1:\n\tadd.s32\t%r1, %r2, 1;\n" +
		"\tsetp.lt.s32\t%p1, %r1, 4;\n\t@%p1 bra\t$L_1;\n\tret;\n}\n"
	if err := checkStructure(good); err != nil {
		t.Fatalf("a well-formed entry: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(good, "%r2", "%r3", 1),                       // past the declared registers
		strings.Replace(good, "add.s32\t%r1", "add.s32\t%p1", 1),     // a predicate written by add.s32
		strings.Replace(good, "@%p1 bra\t$L_1", "@%p1 bra\t$L_2", 1), // no such label
		strings.Replace(good, "\tret;\n}\n", "\tret;\n", 1),          // unbalanced
		strings.Replace(good, "%r1, %r2, 1", "%rd1, %r2, 1", 1),      // undeclared class
		strings.Replace(good, "\tmov.b32\t%r2, 0;\n", "", 1),         // %r2 read, never written
		strings.Replace(good, "%r2, 1;", "%r1, 1;", 1),               // %r1 read as it is first written
	} {
		if checkStructure(bad) == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}

var (
	regDecl  = regexp.MustCompile(`^\s*\.reg \.(\w+)\s+%(\w+)<(\d+)>;$`)
	register = regexp.MustCompile(`%(fd|rd|rs|p|r|f)(\d+)\b`)
	label    = regexp.MustCompile(`^(\$L_\d+):$`)
	branchTo = regexp.MustCompile(`\bbra(?:\.uni)?\s+(\$L_\d+);`)
	// classTypes: the PTX types each register class's declaration admits
	// as an instruction's destination type (bit types of the same size
	// take either class of that size).
	classTypes = map[string][]string{
		"pred": {"pred"}, "b16": {"b16", "f16", "bf16", "u16", "s16"}, "b32": {"b32", "u32", "s32"},
		"b64": {"b64", "u64", "s64"}, "f32": {"f32", "b32"}, "f64": {"f64", "b64"},
	}
)

// checkStructure is a cheap check of an emitted module: braces balance,
// every register is declared (its class and a number below the declared
// count), every instruction's destination register has a class its type
// admits, and every branch target is a label of the module.
func checkStructure(text string) error {
	if strings.Count(text, "{") != strings.Count(text, "}") || strings.Count(text, "(") != strings.Count(text, ")") {
		return fmt.Errorf("unbalanced braces or parentheses")
	}
	decls := map[string]struct {
		typ string
		n   int
	}{}
	labels := map[string]bool{}
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if m := regDecl.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[3])
			decls[m[2]] = struct {
				typ string
				n   int
			}{m[1], n}
			continue
		}
		if m := label.FindStringSubmatch(line); m != nil {
			labels[m[1]] = true
			continue
		}
		if strings.HasPrefix(line, "\t") && strings.HasSuffix(line, ";") {
			lines = append(lines, line)
		}
	}
	for _, line := range lines {
		for _, m := range register.FindAllStringSubmatch(line, -1) {
			d, ok := decls[m[1]]
			n, _ := strconv.Atoi(m[2])
			if !ok || n >= d.n {
				return fmt.Errorf("register %s not declared: %q", m[0], line)
			}
		}
		if m := branchTo.FindStringSubmatch(line); m != nil && !labels[m[1]] {
			return fmt.Errorf("no label %s: %q", m[1], line)
		}
		if err := checkDestination(line, decls); err != nil {
			return err
		}
	}
	return checkWrittenFirst(lines)
}

// checkWrittenFirst checks that every register an instruction reads is
// written by an instruction above it. The writer lays out loops with
// their carried values and variables set before the head, ifs with
// their results set in both branches, so text order is the order of
// definitions; an instruction hoisted in front of a loop (affine.go)
// above the definition of what it reads breaks it.
func checkWrittenFirst(lines []string) error {
	written := map[string]bool{}
	for _, line := range lines {
		fields := strings.SplitN(strings.TrimSpace(line), "\t", 2)
		opcode := fields[0]
		if strings.HasPrefix(opcode, "@") { // a guard: read it, then the instruction
			guard, rest, _ := strings.Cut(opcode, " ")
			if !written[strings.TrimPrefix(strings.TrimPrefix(guard, "@"), "!")] {
				return fmt.Errorf("%s read before it is written: %q", guard, line)
			}
			opcode = rest
		}
		if len(fields) < 2 {
			continue
		}
		args := strings.TrimSuffix(fields[1], ";")
		var dest string
		if !writesNothing(opcode) {
			dest, args = firstOperand(args)
		}
		for _, m := range register.FindAllString(args, -1) {
			if !written[m] {
				return fmt.Errorf("%s read before it is written: %q", m, line)
			}
		}
		for _, m := range register.FindAllString(dest, -1) {
			written[m] = true
		}
	}
	return nil
}

// writesNothing reports whether the instruction of opcode writes no
// register (its first operand, if any, is read).
func writesNothing(opcode string) bool {
	for _, p := range []string{"st.", "cp.async", "bra", "bar.", "membar", "ret", ".pragma"} {
		if strings.HasPrefix(opcode, p) {
			return true
		}
	}
	return false
}

// firstOperand splits an operand list after its first operand, a
// register, an address or a brace list.
func firstOperand(args string) (first, rest string) {
	if strings.HasPrefix(args, "{") {
		end := strings.Index(args, "}")
		return args[:end+1], args[end+1:]
	}
	first, rest, _ = strings.Cut(args, ",")
	return first, rest
}

// checkDestination checks the class of the register an instruction
// writes against the instruction's destination type.
func checkDestination(line string, decls map[string]struct {
	typ string
	n   int
}) error {
	fields := strings.SplitN(strings.TrimSpace(line), "\t", 2)
	if len(fields) != 2 || strings.HasPrefix(fields[0], "@") || strings.HasPrefix(fields[0], "st.") {
		return nil
	}
	opcode, dest := fields[0], strings.SplitN(fields[1], ",", 2)[0]
	typ := destType(opcode)
	m := register.FindStringSubmatch(dest)
	if typ == "" || m == nil || strings.HasPrefix(dest, "{") && strings.HasPrefix(opcode, "mov.") {
		return nil // no type, no register, or a mov unpacking a wider register
	}
	class := decls[m[1]].typ
	for _, ok := range classTypes[class] {
		if ok == typ {
			return nil
		}
	}
	return fmt.Errorf("%s (.%s) written by a .%s instruction: %q", m[0], class, typ, line)
}

// destType is the type of what opcode writes: setp's predicate, cvt's
// first type, mul.wide's doubled type, ldmatrix's pairs of 16-bit
// elements, else its last type.
func destType(opcode string) string {
	parts := strings.Split(opcode, ".")
	var types []string
	for _, p := range parts[1:] {
		if len(p) >= 2 && strings.ContainsRune("subfp", rune(p[0])) && (p == "pred" || isDigits(p[1:]) || p == "bf16") {
			types = append(types, p)
		}
	}
	switch {
	case parts[0] == "setp":
		return "pred"
	case parts[0] == "ldmatrix":
		return "b32"
	case len(types) == 0:
		return ""
	case parts[0] == "cvt":
		return types[0]
	case parts[0] == "mul" && parts[1] == "wide":
		n, _ := strconv.Atoi(types[0][1:])
		return types[0][:1] + strconv.Itoa(2*n)
	}
	return types[len(types)-1]
}

func isDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// TestGemmCoverage: every sampled configuration the pruner keeps of the
// f16 and bf16 GEMM spaces compiles to PTX, on a square shape and a
// ragged one (checked loads and stores), A and B transposed or not, α
// and β as the samples vary them.
func TestGemmCoverage(t *testing.T) {
	ps := append(gemms(64, 64, 32, kernels.F16, kernels.BF16, kernels.F32), gemms(100, 60, 40, kernels.F16, kernels.F32)...)
	n := 0
	for _, p := range ps {
		samples, opts := sampled(t, p, 16)
		for _, s := range samples {
			compilePTX(t, s.name, s.src, opts)
			n++
		}
	}
	t.Logf("%d configurations compiled to PTX", n)
}
