package main

import (
	stdctx "context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"tltune/compiler/diag"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/device"
	"tltune/internal/npy"
	"tltune/internal/speak"
	"tltune/kernels"
)

func init() {
	register(&command{
		name:    "run",
		summary: "run a kernel on given arguments (reference interpreter, or compiled on a device and compared with it)",
		usage:   "FILE [--func NAME] --arg NAME=SPEC ... [--shape NAME=AxBx..] [--groups N] [--device ref|D [--precision exact|tf32]] [--timeout D] [--save DIR] [--dialect D]",
		run:     runKernel,
	})
}

// listFlag collects the values of a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

type runFlags struct {
	file, fn, device, save string
	precision              string // "" exact, or speak.TF32 (kernels.ParsePrecision)
	args, shapes           listFlag
	groups                 int
	acc64, asJSON          bool
	dialect                *syntax.Dialect
	timeout                time.Duration
}

func runKernel(c *context, args []string) int {
	var f runFlags
	fs := c.flags()
	fs.StringVar(&f.fn, "func", "", "function to run (default: the file's only function)")
	fs.Var(&f.args, "arg", "argument NAME=SPEC, SPEC a scalar literal, rand[:seed], zeros or FILE.npy (repeatable)")
	fs.Var(&f.shapes, "shape", "shape NAME=AxBx.. of a dynamically shaped argument; a group's last entry is its size (repeatable)")
	fs.IntVar(&f.groups, "groups", 0, "number of work-groups (default: last mode of the first dynamically sized argument, else 1); also fills an unknown last mode")
	// The default stays the interpreter: it is the oracle, and running
	// compiled code on a device (and comparing) is asked for explicitly.
	fs.StringVar(&f.device, "device", device.Reference, "where to run: ref (the reference interpreter), or a device to compile for, run on and compare with the interpreter: "+deviceUsage)
	fs.StringVar(&f.save, "save", "", "write every memref and group argument after the run to DIR/NAME.npy (with a device: the device's results)")
	fs.StringVar(&f.precision, "precision", speak.ExactPrecision, "with a device: exact, or tf32: f32 gemm inputs rounded to tf32 on the matrix engine (nvidia only), f32 results compared with the interpreter within the tf32 error bound that tuning verifies with")
	fs.BoolVar(&f.acc64, "acc64", false, "accumulate collectives in float64 (reference precision; the oracle of a device run always does)")
	fs.BoolVar(&f.asJSON, "json", false, "print the arguments after the run (and a device's comparison) as JSON (docs/json.md)")
	f.dialect = dialectFlag(fs, "dialect")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "stop a run (the interpreter's, the build, the device's) that takes longer, with an error")
	// Flags may come before and after FILE.
	for {
		if status, ok := c.parse(fs, args); !ok {
			return status
		}
		if fs.NArg() == 0 {
			break
		}
		if f.file != "" {
			return c.usageError("more than one FILE: %q and %q", f.file, fs.Arg(0))
		}
		f.file, args = fs.Arg(0), fs.Args()[1:]
	}
	if f.file == "" {
		return c.usageError("missing FILE, the tensor-language source to run")
	}
	if f.timeout <= 0 {
		return c.usageError("--timeout %v must be a positive duration", f.timeout)
	}
	if err := f.checkPrecision(); err != nil {
		return c.usageError("%v", err)
	}
	src, err := readSource(f.file)
	if err != nil {
		return c.fail(err)
	}
	if *f.dialect == syntax.Auto {
		*f.dialect = syntax.Detect(src)
	}
	prog, errs := frontEnd(f.file, src, *f.dialect)
	if len(errs) > 0 {
		diag.Print(c.stderr, f.file, src, errs)
		return exitUsage
	}
	fn, err := pickFunc(prog, f.fn)
	if err != nil {
		return c.usageError("%v", err)
	}
	binder, err := newArgBinder(fn, &f)
	if err != nil {
		return c.usageError("%v", err)
	}
	if err := binder.readArrays(); err != nil {
		return c.fail(err)
	}
	bound, err := binder.bind()
	if err != nil {
		return c.usageError("%v", err)
	}
	if f.device != device.Reference {
		return runCompiled(c, &f, src, fn, binder, bound)
	}
	opts := interp.Options{Groups: binder.groups, Accumulate64: f.acc64}
	if err := f.interpret(fn, bound, opts); err != nil {
		return c.fail(err)
	}
	return binder.report(c, &f, bound)
}

// checkPrecision reads --precision: tf32 is how a device compiles, so it
// needs one.
func (f *runFlags) checkPrecision() error {
	p, err := kernels.ParsePrecision(f.precision)
	switch {
	case err != nil:
		return fmt.Errorf("--precision: %v", err)
	case p == speak.TF32 && f.device == device.Reference:
		return fmt.Errorf("--precision %s compiles for a device, and the interpreter (--device %s) computes exactly; name a device with --device", speak.TF32, device.Reference)
	}
	f.precision = p
	return nil
}

// interpret runs fn in the reference interpreter, within --timeout.
func (f *runFlags) interpret(fn *ir.Func, a *boundArgs, opts interp.Options) error {
	ctx, cancel := stdctx.WithTimeout(stdctx.Background(), f.timeout)
	defer cancel()
	opts.Context = ctx
	err := interp.Run(fn, a.args, opts)
	switch {
	case errors.Is(err, stdctx.DeadlineExceeded):
		// The kernel's doing, as every error the interpreter finds.
		return inputError{fmt.Errorf("%s: @%s did not finish within --timeout %v in the interpreter", f.file, fn.Name, f.timeout)}
	case err != nil:
		return inputError{fmt.Errorf("%s:%v", f.file, err)}
	}
	return nil
}

// report prints the summary of the arguments after a run and saves them
// when asked.
func (b *argBinder) report(c *context, f *runFlags, a *boundArgs) int {
	if f.save != "" {
		if err := b.save(f.save, a); err != nil {
			return c.fail(err)
		}
	}
	if f.asJSON {
		if f.device != device.Reference {
			return exitOK // with the comparison, after it
		}
		return c.writeJSON(runJSON{File: f.file, Function: "@" + b.fn.Name, Device: device.Reference, Arguments: b.summaries(a)})
	}
	b.summarize(c.stdout, a)
	return exitOK
}

// runJSON is the output of run --json.
type runJSON struct {
	File       string        `json:"file"`
	Function   string        `json:"function"`
	Device     string        `json:"device"`              // "ref", or the device's name
	Target     string        `json:"target,omitempty"`    // with a device: the code-generation target
	Precision  string        `json:"precision,omitempty"` // "tf32" with --precision tf32; absent: exact
	Arguments  []argSummary  `json:"arguments"`           // after the run (with a device: the device's results)
	Comparison []argCompared `json:"comparison,omitempty"`
	Agrees     *bool         `json:"agrees,omitempty"` // with a device: every argument within tolerance of the interpreter
}

// argSummary is one memref or group argument after the run.
type argSummary struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Shape  []int64  `json:"shape"`
	Sum    string   `json:"sum"`     // a number, or "(re+imi)" for complex types
	MaxAbs *float64 `json:"max_abs"` // null when not finite
	maxAbs float64
}

// writeJSON prints v as JSON and returns the exit status.
func (c *context) writeJSON(v any) int {
	if err := speak.WriteJSON(c.stdout, v); err != nil {
		return c.fail(err)
	}
	return exitOK
}

func pickFunc(prog *ir.Program, name string) (*ir.Func, error) {
	names := make([]string, len(prog.Funcs))
	for i, fn := range prog.Funcs {
		names[i] = "@" + fn.Name
	}
	switch {
	case name != "":
		if fn := prog.Func(strings.TrimPrefix(name, "@")); fn != nil {
			return fn, nil
		}
		return nil, fmt.Errorf("no function %q in the file (it has %s)", name, strings.Join(names, ", "))
	case len(prog.Funcs) == 1:
		return prog.Funcs[0], nil
	case len(prog.Funcs) == 0:
		return nil, errors.New("the file defines no function")
	}
	return nil, fmt.Errorf("the file has several functions (%s); choose one with --func", strings.Join(names, ", "))
}

// argBinder turns the command line's argument specifications into the
// interpreter's arguments.
type argBinder struct {
	fn     *ir.Func
	specs  map[string]string
	shapes map[string][]int64
	arrays map[string]*npy.Array
	groups int
	bytes  int64 // allocated by the current bind, against hostMemory
}

// hostMemory is what a command may allocate for the data of one kernel:
// half the host's memory. It bounds the bytes of one set of `tltune run`
// arguments and a tuning run's verification inputs and reference, so
// that a large --groups, --shape or problem is an error, not a crash.
var hostMemory = func() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 4 << 30
	}
	return int64(min(si.Totalram*uint64(si.Unit)/2, math.MaxInt64))
}()

// boundArgs are the interpreter's arguments of one run. The binder can
// make several sets from the same specifications (the same seeds and
// arrays), for the interpreter and for a device.
type boundArgs struct {
	args  []interp.Arg
	views [][]*interp.Memref // per parameter: the memrefs as the kernel sees them
}

func newArgBinder(fn *ir.Func, f *runFlags) (*argBinder, error) {
	b := &argBinder{fn: fn, specs: map[string]string{}, shapes: map[string][]int64{}, arrays: map[string]*npy.Array{}}
	params := map[string]bool{}
	for _, p := range fn.Params {
		params[p.Name] = true
	}
	for _, a := range f.args {
		name, spec, err := b.nameValue(a, params, "--arg")
		if err != nil {
			return nil, err
		}
		b.specs[name] = spec
	}
	for _, s := range f.shapes {
		name, spec, err := b.nameValue(s, params, "--shape")
		if err != nil {
			return nil, err
		}
		if b.shapes[name], err = parseShape(spec); err != nil {
			return nil, fmt.Errorf("--shape %s: %v", s, err)
		}
	}
	var missing []string
	for _, p := range fn.Params {
		if _, ok := b.specs[p.Name]; !ok {
			missing = append(missing, "%"+p.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no --arg for %s (SPEC: a scalar literal, rand[:seed], zeros or FILE.npy)", strings.Join(missing, ", "))
	}
	if f.groups < 0 {
		return nil, fmt.Errorf("--groups %d is negative", f.groups)
	}
	b.groups = f.groups
	return b, nil
}

// nameValue splits "NAME=VALUE" and checks that NAME is a parameter.
func (b *argBinder) nameValue(s string, params map[string]bool, flag string) (name, val string, err error) {
	name, val, ok := strings.Cut(s, "=")
	name = strings.TrimPrefix(name, "%")
	if !ok || val == "" {
		return "", "", fmt.Errorf("%s %q: want NAME=VALUE", flag, s)
	}
	if !params[name] {
		return "", "", fmt.Errorf("%s %q: @%s has no parameter %%%s", flag, s, b.fn.Name, name)
	}
	return name, val, nil
}

func parseShape(s string) ([]int64, error) {
	var shape []int64
	for _, d := range strings.Split(s, "x") {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("want sizes like 16x16x4, got %q", s)
		}
		shape = append(shape, n)
	}
	return shape, nil
}

// readArrays reads the .npy files given as arguments.
func (b *argBinder) readArrays() error {
	for _, p := range b.fn.Params {
		if spec := b.specs[p.Name]; strings.HasSuffix(spec, ".npy") {
			if p.Type.Kind() != ir.KindMemref && p.Type.Kind() != ir.KindGroup {
				return fmt.Errorf("--arg %s=%s: %%%s is a scalar of type %s; give a literal", p.Name, spec, p.Name, p.Type)
			}
			a, err := npy.ReadFile(spec)
			if err != nil {
				return err
			}
			b.arrays[p.Name] = a
		}
	}
	return nil
}

// bind builds every argument: shapes first (they fix the default number of
// groups), then the data.
func (b *argBinder) bind() (*boundArgs, error) {
	shapes := make([][]int64, len(b.fn.Params))
	for i, p := range b.fn.Params {
		if p.Type.Kind() != ir.KindMemref && p.Type.Kind() != ir.KindGroup {
			continue
		}
		var err error
		if shapes[i], err = b.shapeOf(p); err != nil {
			return nil, err
		}
		if b.groups == 0 && slices.Contains(staticShape(p), ir.Dynamic) {
			b.groups = max(int(shapes[i][len(shapes[i])-1]), 1)
		}
	}
	b.groups = max(b.groups, 1)
	b.bytes = 0
	a := &boundArgs{args: make([]interp.Arg, len(b.fn.Params)), views: make([][]*interp.Memref, len(b.fn.Params))}
	for i, p := range b.fn.Params {
		var err error
		switch p.Type.Kind() {
		case ir.KindMemref:
			a.args[i].Memref, err = b.memref(p, shapes[i], 0, 0)
			a.views[i] = []*interp.Memref{a.args[i].Memref}
		case ir.KindGroup:
			a.args[i].Group, a.views[i], err = b.group(p, shapes[i])
		default:
			a.args[i], err = scalarArg(p, b.specs[p.Name])
		}
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

// shapeOf returns the full shape of a memref argument, or the member shape
// followed by the group size for a group argument, and checks it against
// the type's static entries.
func (b *argBinder) shapeOf(p *ir.Value) ([]int64, error) {
	static := staticShape(p)
	shape, from := b.shapes[p.Name], "--shape"
	if a := b.arrays[p.Name]; a != nil {
		if want := npyType(elemType(p)); a.DType != want {
			return nil, fmt.Errorf("%%%s has element type %s: want a %s array, got %s (convert it with arr.astype('%s'))", p.Name, elemType(p), want, a.DType, want)
		}
		shape, from = make([]int64, len(a.Shape)), b.specs[p.Name]
		for k, d := range a.Shape {
			shape[k] = int64(d)
		}
	}
	if shape == nil {
		shape = append([]int64(nil), static...)
		for k, d := range shape {
			if d != ir.Dynamic {
				continue
			}
			if k == len(shape)-1 && b.groups > 0 { // the batch mode
				shape[k] = int64(b.groups)
				continue
			}
			return nil, fmt.Errorf("%%%s has type %s with a dynamic size; give --shape %s=%s or a .npy file", p.Name, p.Type, p.Name, shapeHint(static))
		}
		return shape, nil
	}
	if len(shape) != len(static) {
		return nil, fmt.Errorf("%%%s has type %s: %s gives %d modes, want %d (%s)", p.Name, p.Type, from, len(shape), len(static), shapeHint(static))
	}
	for k, d := range static {
		if d != ir.Dynamic && d != shape[k] {
			return nil, fmt.Errorf("%%%s has type %s: %s gives shape %s, want %s", p.Name, p.Type, from, formatShape(shape), shapeHint(static))
		}
	}
	return shape, nil
}

func shapeHint(static []int64) string {
	parts := make([]string, len(static))
	for k, d := range static {
		parts[k] = "N"
		if d != ir.Dynamic {
			parts[k] = strconv.FormatInt(d, 10)
		}
	}
	return strings.Join(parts, "x")
}

func formatShape(shape []int64) string {
	if len(shape) == 0 {
		return "scalar"
	}
	parts := make([]string, len(shape))
	for k, d := range shape {
		parts[k] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}

// staticShape is the type's shape of a memref parameter, or the member shape
// followed by the group size of a group parameter.
func staticShape(p *ir.Value) []int64 {
	if p.Type.Kind() == ir.KindGroup {
		return append(append([]int64(nil), p.Type.Elem().Shape()...), p.Type.GroupSize())
	}
	return p.Type.Shape()
}

// memref builds a memref of type t (p's type or its group's member type)
// with the given shape: static strides from the type, dynamic ones packed.
// Group members take their data from the array slice with last index member;
// offset elements precede the data (the group's offset).
func (b *argBinder) memref(p *ir.Value, shape []int64, member, offset int64) (*interp.Memref, error) {
	t, stride := memrefLayout(p, shape)
	n := elements(shape, stride, offset, hostMemory/t.Elem().Size())
	if err := b.claim(p, shape, n*t.Elem().Size()); err != nil {
		return nil, err
	}
	m := &interp.Memref{Buf: interp.NewBuffer(t.Elem(), int(n)), Shape: shape, Stride: stride}
	m.Offset = offset
	return m, b.fill(p, m, member)
}

// memrefLayout is the memref type of p (its member type for a group) and
// the strides of a memref of that type with the given shape: static ones
// from the type, dynamic ones packed.
func memrefLayout(p *ir.Value, shape []int64) (*ir.Type, []int64) {
	t := p.Type
	if t.Kind() == ir.KindGroup {
		t = t.Elem()
	}
	stride := make([]int64, len(shape))
	next := int64(1)
	for k := range shape {
		stride[k] = t.Stride()[k]
		if stride[k] == ir.Dynamic {
			stride[k] = next
		}
		next = stride[k] * max(shape[k], 1)
	}
	return t, stride
}

// elements is the number of elements a memref with shape and stride spans
// after offset ones, or limit+1 when that is more than limit.
func elements(shape, stride []int64, offset, limit int64) int64 {
	n := offset + 1
	for k := range shape {
		if shape[k] <= 0 {
			return offset // empty
		}
		if stride[k] > 0 && shape[k]-1 > (limit-n)/stride[k] {
			return limit + 1
		}
		n += (shape[k] - 1) * stride[k]
	}
	return min(n, limit+1)
}

// claim counts bytes of argument p (of the given shape) against
// hostMemory.
func (b *argBinder) claim(p *ir.Value, shape []int64, bytes int64) error {
	if bytes > hostMemory-b.bytes {
		return fmt.Errorf("%%%s of shape %s takes more than the %s this host can give the arguments; use a smaller --shape or --groups",
			p.Name, formatShape(shape), speak.Bytes(uint64(hostMemory)))
	}
	b.bytes += bytes
	return nil
}

// memberOverhead approximates the host memory of a group member beyond
// its data.
const memberOverhead = 256

func (b *argBinder) group(p *ir.Value, shape []int64) (*interp.Group, []*interp.Memref, error) {
	count := shape[len(shape)-1]
	offset := p.Type.GroupOffset()
	if offset == ir.Dynamic {
		offset = 0 // the dynamic offset of a command-line group is 0
	}
	// The members together, before any is allocated.
	member := shape[:len(shape)-1]
	t, stride := memrefLayout(p, member)
	each := elements(member, stride, offset, hostMemory/t.Elem().Size())*t.Elem().Size() + memberOverhead
	if count > 0 && count > (hostMemory-b.bytes)/each {
		return nil, nil, b.claim(p, shape, hostMemory+1)
	}
	g := &interp.Group{}
	var views []*interp.Memref
	for i := range count {
		m, err := b.memref(p, shape[:len(shape)-1], i, offset)
		if err != nil {
			return nil, nil, err
		}
		views = append(views, m)
		// The kernel adds the group offset itself when it loads the member.
		member := *m
		member.Offset = 0
		g.Memrefs = append(g.Memrefs, &member)
	}
	return g, views, nil
}

// fill writes the argument's initial data into m (for a group, member
// member): zeros, a constant, seeded random values or a .npy array.
func (b *argBinder) fill(p *ir.Value, m *interp.Memref, member int64) error {
	spec := b.specs[p.Name]
	switch {
	case spec == "zeros":
		return nil
	case spec == "rand" || strings.HasPrefix(spec, "rand:"):
		seed, err := randSeed(p, spec)
		if err != nil {
			return err
		}
		r := rand.New(rand.NewPCG(seed, uint64(member)))
		m.Each(func(_ []int64, i int) { setRandom(m.Buf, i, r) })
		return nil
	case b.arrays[p.Name] != nil:
		return fillFromArray(p, m, b.arrays[p.Name], member)
	}
	v, err := scalarArg(&ir.Value{Name: p.Name, Type: m.Buf.Elem}, spec)
	if err != nil {
		return err
	}
	m.Each(func(_ []int64, i int) { setScalar(m.Buf, i, v) })
	return nil
}

func randSeed(p *ir.Value, spec string) (uint64, error) {
	s, ok := strings.CutPrefix(spec, "rand:")
	if !ok {
		return uint64(p.Index) + 1, nil // distinct default seeds per parameter
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--arg %s=%s: the seed must be a non-negative integer", p.Name, spec)
	}
	return seed, nil
}

// setRandom stores a uniform random value: [-1, 1) for floating types (both
// parts of a complex), an integer in [-8, 8] otherwise.
func setRandom(buf *interp.Buffer, i int, r *rand.Rand) {
	switch {
	case buf.Elem.IsComplex():
		buf.SetComplex(i, complex(2*r.Float64()-1, 2*r.Float64()-1))
	case buf.Elem.IsFloat():
		buf.SetFloat(i, 2*r.Float64()-1)
	default:
		buf.SetInt(i, r.Int64N(17)-8)
	}
}

func setScalar(buf *interp.Buffer, i int, v interp.Arg) {
	switch {
	case buf.Elem.IsComplex():
		buf.SetComplex(i, v.Complex)
	case buf.Elem.IsFloat():
		buf.SetFloat(i, v.Float)
	default:
		buf.SetInt(i, v.Int)
	}
}

// npyType is the .npy element type that holds elem (bf16 travels as f32).
func npyType(elem *ir.Type) npy.DType {
	switch elem.Kind() {
	case ir.KindI8:
		return npy.Int8
	case ir.KindI16:
		return npy.Int16
	case ir.KindI32:
		return npy.Int32
	case ir.KindI64, ir.KindIndex:
		return npy.Int64
	case ir.KindF16:
		return npy.Float16
	case ir.KindBF16, ir.KindF32:
		return npy.Float32
	case ir.KindF64:
		return npy.Float64
	case ir.KindC32:
		return npy.Complex64
	}
	return npy.Complex128
}

// fillFromArray copies array element (i1, .., in[, member]) to memref
// element (i1, .., in).
func fillFromArray(p *ir.Value, m *interp.Memref, a *npy.Array, member int64) error {
	tmp := &interp.Buffer{Elem: m.Buf.Elem, Data: a.Data}
	if m.Buf.Elem.Kind() == ir.KindBF16 {
		tmp.Elem = ir.F32
	}
	full := make([]int, len(m.Shape), len(m.Shape)+1)
	if p.Type.Kind() == ir.KindGroup {
		full = append(full, int(member))
	}
	m.Each(func(idx []int64, dst int) {
		for k, x := range idx {
			full[k] = int(x)
		}
		copyElem(m.Buf, dst, tmp, a.Offset(full))
	})
	return nil
}

// copyElem copies element j of src into element i of dst, converting when
// the element types differ (bf16 ↔ f32).
func copyElem(dst *interp.Buffer, i int, src *interp.Buffer, j int) {
	switch {
	case dst.Elem.IsComplex():
		dst.SetComplex(i, src.Complex(j))
	case dst.Elem.IsFloat():
		dst.SetFloat(i, src.Float(j))
	default:
		dst.SetInt(i, src.Int(j))
	}
}

// scalarArg parses a scalar literal for parameter p: an integer, a floating
// constant (C syntax, hexadecimal too), [re, im] or re+imi for complex
// types, true or false for bool.
func scalarArg(p *ir.Value, spec string) (interp.Arg, error) {
	t := p.Type
	bad := func() (interp.Arg, error) {
		return interp.Arg{}, fmt.Errorf("--arg %s=%s: want a %s literal (or rand[:seed], zeros, FILE.npy for memrefs)", p.Name, spec, t)
	}
	switch {
	case t.Kind() == ir.KindBool:
		v, err := strconv.ParseBool(spec)
		if err != nil {
			return bad()
		}
		a := interp.Arg{}
		if v {
			a.Int = 1
		}
		return a, nil
	case t.IsInteger():
		v, err := strconv.ParseInt(spec, 0, 64)
		if err != nil {
			return bad()
		}
		return interp.Arg{Int: v}, nil
	case t.IsFloat():
		v, err := strconv.ParseFloat(spec, 64)
		if err != nil {
			return bad()
		}
		return interp.Arg{Float: v}, nil
	case t.IsComplex():
		if re, im, ok := strings.Cut(strings.Trim(spec, "[]"), ","); ok && strings.HasPrefix(spec, "[") {
			r, err1 := strconv.ParseFloat(strings.TrimSpace(re), 64)
			i, err2 := strconv.ParseFloat(strings.TrimSpace(im), 64)
			if err1 != nil || err2 != nil {
				return bad()
			}
			return interp.Arg{Complex: complex(r, i)}, nil
		}
		v, err := strconv.ParseComplex(spec, 128)
		if err != nil {
			return bad()
		}
		return interp.Arg{Complex: v}, nil
	}
	return bad()
}

// elemType is the element type of a memref or group parameter.
func elemType(p *ir.Value) *ir.Type {
	if p.Type.Kind() == ir.KindGroup {
		return p.Type.Elem().Elem()
	}
	return p.Type.Elem()
}

// shapeOfViews is the shape of a memref argument, or of a group argument
// with its size as last mode.
func (a *boundArgs) shapeOfViews(i int) []int64 {
	ms := a.views[i]
	var shape []int64
	if len(ms) > 0 {
		shape = append(shape, ms[0].Shape...)
	}
	if a.args[i].Group != nil {
		shape = append(shape, int64(len(ms)))
	}
	return shape
}

// summarize prints one line per memref or group argument after the run: its
// shape, the sum of its elements and the largest magnitude.
func (b *argBinder) summarize(w io.Writer, a *boundArgs) {
	for _, s := range b.summaries(a) {
		fmt.Fprintf(w, "%%%s %s [%s]: sum %s, max |x| %s\n", s.Name, s.Type, formatShape(s.Shape), s.Sum, strconv.FormatFloat(s.maxAbs, 'g', 8, 64))
	}
}

// summaries are the sum and largest magnitude of every memref and group
// argument.
func (b *argBinder) summaries(a *boundArgs) []argSummary {
	out := []argSummary{}
	for i, p := range b.fn.Params {
		if !a.isAggregate(i) {
			continue
		}
		var sum complex128
		var big float64
		for _, m := range a.views[i] {
			m.Each(func(_ []int64, j int) {
				z := m.Buf.Complex(j)
				sum += z
				if a := cmplx.Abs(z); a > big || math.IsNaN(a) {
					big = a
				}
			})
		}
		s := strconv.FormatFloat(real(sum), 'g', 8, 64)
		if elemType(p).IsComplex() {
			s = strconv.FormatComplex(sum, 'g', 8, 128)
		}
		out = append(out, argSummary{Name: p.Name, Type: p.Type.String(), Shape: a.shapeOfViews(i), Sum: s, MaxAbs: speak.Finite(big), maxAbs: big})
	}
	return out
}

// isAggregate reports whether parameter i is a memref or a group (an empty
// group has no views).
func (a *boundArgs) isAggregate(i int) bool { return a.views[i] != nil || a.args[i].Group != nil }

// save writes every memref and group argument as DIR/NAME.npy in Fortran
// order (a group's last mode indexes its members; bf16 is saved as f32).
func (b *argBinder) save(dir string, args *boundArgs) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, p := range b.fn.Params {
		if !args.isAggregate(i) {
			continue
		}
		shape := args.shapeOfViews(i)
		out := &interp.Buffer{Elem: elemType(p)}
		if out.Elem.Kind() == ir.KindBF16 {
			out.Elem = ir.F32
		}
		a := &npy.Array{DType: npyType(out.Elem), Fortran: true}
		n := 1
		for _, d := range shape {
			a.Shape = append(a.Shape, int(d))
			n *= int(d)
		}
		out.Data = make([]byte, n*int(out.Elem.Size()))
		j := 0
		for _, m := range args.views[i] {
			m.Each(func(_ []int64, k int) {
				copyElem(out, j, m.Buf, k)
				j++
			})
		}
		a.Data = out.Data
		if err := npy.WriteFile(filepath.Join(dir, p.Name+".npy"), a); err != nil {
			return err
		}
	}
	return nil
}
