// Package opencl writes OpenCL C for a lowered tensor-language program.
//
// Its input is SPMD code: collective linear algebra and foreach have been
// lowered by compiler/lower; what remains are scalar and memref
// instructions, control flow, parallel regions, subgroup operations and
// cooperative matrices. Cooperative matrices are laid out here, per target:
// a matrix of R rows is spread over the lanes of a subgroup row by row (lane
// l holds rows l, l+sgs, ...), so with subgroup size 1 a work-item holds the
// whole matrix in private memory, and mul_add broadcasts the B operand from
// the lane that holds it.
//
// Every function becomes one kernel; its argument list follows docs/abi.md
// and is returned as Kernel.Args.
package opencl

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Launch is the launch configuration the lowering chose for one function.
type Launch struct {
	SubgroupSize  int
	WorkGroupSize [2]int // [wx, wy]
	BatchPerGroup int    // logical work-groups per physical work-group (≥ 1)
	// Split is the number of work-groups in y that share each logical
	// work-group (tuning.Params.Split; 0 and 1: one).
	Split int
	// Batch is the argument extent holding the number of logical
	// work-groups, which a kernel with BatchPerGroup > 1 needs; nil means
	// the launch gives it (BatchPerGroup times the number of work-groups).
	Batch *ir.BatchExtent
}

// ArgRole says what an OpenCL kernel argument carries.
type ArgRole string

// Argument roles (see docs/abi.md).
const (
	RoleScalar      ArgRole = "scalar"        // a scalar parameter
	RoleData        ArgRole = "data"          // memref data pointer
	RoleShape       ArgRole = "shape"         // dynamic shape entry Mode of a memref
	RoleStride      ArgRole = "stride"        // dynamic stride entry Mode of a memref
	RoleGroupBase   ArgRole = "group_base"    // one buffer holding every memref of a group
	RoleGroupOffset ArgRole = "group_offsets" // per-entry element offsets into the base buffer
	RoleGroupShape  ArgRole = "group_shape"   // per-entry dynamic shape entry Mode (array of long)
	RoleGroupStride ArgRole = "group_stride"  // per-entry dynamic stride entry Mode (array of long)
	RoleGroupSize   ArgRole = "group_size"    // dynamic number of group entries
	RoleGroupElemOf ArgRole = "group_offset"  // dynamic element offset applied to every entry
)

// Arg is one OpenCL kernel argument.
type Arg struct {
	Name  string  // C parameter name
	CType string  // C type as declared, e.g. "global float*", "long"
	Role  ArgRole // what it carries
	Param int     // index of the tensor-language parameter
	Mode  int     // shape/stride mode for the shape and stride roles
	Elem  string  // element type name for pointers to tensor data ("f32", ...), scalar type name for scalars
}

// Kernel describes one emitted kernel.
type Kernel struct {
	Name string // the function's name, without "@": how hosts and reports name the kernel
	// Symbol is the kernel's name in the compiled program, the one to look
	// up (clCreateKernel, zeKernelCreate): Name, unless Name is reserved
	// in OpenCL C (KernelSymbol; docs/abi.md).
	Symbol string
	Args   []Arg
	Launch
}

// GlobalSize returns the OpenCL global work size for groups logical
// work-groups (batch entries): ceil(groups / BatchPerGroup) work-groups in
// x, Split in y.
func (k *Kernel) GlobalSize(groups int64) [3]int64 {
	b := int64(max(k.BatchPerGroup, 1))
	phys := (groups + b - 1) / b
	return [3]int64{phys * int64(k.WorkGroupSize[0]), int64(k.WorkGroupSize[1]) * int64(max(k.Split, 1)), 1}
}

// LocalSize returns the OpenCL local work size.
func (k *Kernel) LocalSize() [3]int64 {
	return [3]int64{int64(k.WorkGroupSize[0]), int64(k.WorkGroupSize[1]), 1}
}

// Output is the emitted translation unit.
type Output struct {
	Source  string
	Kernels []Kernel
}

// Emit writes OpenCL C for prog. launch gives each function's launch
// configuration.
func Emit(prog *ir.Program, t *target.Target, launch map[*ir.Func]Launch) (*Output, error) {
	s := getWorkspace()
	u := &s.unit
	u.reset(t)
	out := &Output{Kernels: make([]Kernel, 0, len(prog.Funcs))}
	texts := make([]kernelText, 0, len(prog.Funcs))
	defer func() {
		for _, k := range texts {
			putCode(k.head)
			putCode(k.body)
		}
		putWorkspace(s) // the program is copied out: nothing refers to its text
	}()
	for _, f := range prog.Funcs {
		l, err := launchOf(launch, f)
		if err != nil {
			return nil, err
		}
		text, err := u.emitFunc(f, l, s, out)
		if err != nil {
			return nil, fmt.Errorf("@%s: %w", f.Name, err)
		}
		texts = append(texts, text)
	}
	// The preamble depends on every kernel; each kernel's text is copied
	// once, into the program.
	pre := &s.preamble
	pre.n = 0
	u.writePreamble(pre)
	n := pre.Len()
	for _, k := range texts {
		n += k.len()
	}
	var src strings.Builder
	src.Grow(n)
	src.Write(pre.Bytes())
	for _, k := range texts {
		k.writeTo(&src)
	}
	out.Source = src.String()
	return out, nil
}

// Kernels describes the kernels Emit writes for prog (their symbols,
// arguments and launches) without writing their C: the ABI that a writer
// of another form of the program (compiler/emit/ptx) keeps to, when the C
// is not wanted.
func Kernels(prog *ir.Program, t *target.Target, launch map[*ir.Func]Launch) ([]Kernel, error) {
	s := getWorkspace()
	defer putWorkspace(s) // the kernels' names are not the workspace's
	u := &s.unit
	u.reset(t)
	ks := make([]Kernel, 0, len(prog.Funcs))
	for _, f := range prog.Funcs {
		l, err := launchOf(launch, f)
		if err != nil {
			return nil, err
		}
		_, k, err := u.describe(f, l, s)
		if err != nil {
			return nil, fmt.Errorf("@%s: %w", f.Name, err)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// launchOf is f's launch configuration in launch.
func launchOf(launch map[*ir.Func]Launch, f *ir.Func) (Launch, error) {
	l, ok := launch[f]
	if !ok {
		return l, fmt.Errorf("opencl: no launch configuration for @%s", f.Name)
	}
	return l, nil
}

// unit is the state shared by the kernels of one translation unit.
type unit struct {
	target   *target.Target
	helpers  helperSet
	fp64     bool // a kernel uses double
	fp16     bool // a kernel computes in half (native f16 targets)
	int64At  bool // 64-bit atomics are used
	int64Ext bool // 64-bit atomic max and min are used
	// structs are the struct types the kernels use, in first-use order;
	// coopNames caches coopStruct's names.
	structs   declarations
	coopNames []coopName
}

// named is a declaration and the name it declares.
type named struct{ name, text string }

// declarations are a program's helpers or struct types in the order they
// were first needed: a program has a handful, looked up in order.
type declarations []named

// has reports whether a declaration of name is in ds.
func (ds declarations) has(name string) bool {
	for _, d := range ds {
		if d.name == name {
			return true
		}
	}
	return false
}

// add appends d unless a declaration of its name is in ds.
func (ds *declarations) add(d named) {
	if !ds.has(d.name) {
		*ds = append(*ds, d)
	}
}

// coopName is the name of a coopmatrix struct.
type coopName struct {
	key  coopKey
	name string
}

// reset readies u for a program for target t, keeping its tables' room
// (a unit is part of a workspace).
func (u *unit) reset(t *target.Target) {
	helpers, structs, coops := u.helpers.list[:0], u.structs[:0], u.coopNames[:0]
	clear(helpers[:cap(helpers)]) // so that the pool keeps no program's text alive
	clear(structs[:cap(structs)])
	clear(coops[:cap(coops)])
	*u = unit{target: t, helpers: helperSet{list: helpers}, structs: structs, coopNames: coops}
}

func (u *unit) writePreamble(b *code) {
	b.WriteString("/* generated by tltune for target ")
	b.WriteString(u.target.Name)
	b.WriteString(" */\n")
	if u.fp64 {
		b.WriteString("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
	}
	if u.fp16 {
		b.WriteString("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n")
	}
	if u.int64At {
		b.WriteString("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n")
	}
	if u.int64Ext {
		b.WriteString("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n")
	}
	b.WriteString("\n")
	for _, t := range u.structs {
		b.WriteString(t.text)
		b.WriteString("\n")
	}
	u.helpers.write(b)
}

// scalar returns the C view of scalar type t and records the extensions it
// needs.
func (u *unit) scalar(t *ir.Type) *scalarInfo {
	si, err := lookupScalar(t, u.target.NativeF16)
	if err != nil {
		panic(err) // the verifier only lets scalar types reach here
	}
	switch {
	case strings.HasPrefix(si.reg, "double"):
		u.fp64 = true
	case si.reg == "half":
		u.fp16 = true
	}
	return si
}

// coopStruct returns the C struct type holding perLane elements of the
// scalar type elem: one lane's share of a cooperative matrix. Structs,
// unlike arrays, can be assigned, which loop-carried values need.
func (u *unit) coopStruct(elem *ir.Type, perLane int) string {
	key := coopKey{elem, perLane}
	for _, c := range u.coopNames {
		if c.key == key {
			return c.name // every use of a coopmatrix asks; naming it once saves formatting
		}
	}
	si := u.scalar(elem)
	t := spelledOnce(&typeDecls, typeKey{elem.Kind(), si.reg, perLane}, func() named {
		n := strconv.Itoa(perLane)
		name := "tl_cm_" + elem.String() + "_" + n
		return named{name, "typedef struct { " + si.reg + " v[" + n + "]; } " + name + ";"}
	})
	u.coopNames = append(u.coopNames, coopName{key, t.name})
	u.structs.add(t)
	return t.name
}

// coopKey is a coopmatrix struct's element type and elements per lane.
type coopKey struct {
	elem    *ir.Type
	perLane int
}

// packedStruct declares the struct of n 32-bit registers holding a packed
// fragment (two 16-bit elements each).
func (u *unit) packedStruct(n int) string {
	t := spelledOnce(&typeDecls, typeKey{perLane: n}, func() named {
		name := "tl_pk_" + strconv.Itoa(n)
		return named{name, "typedef struct { uint v[" + strconv.Itoa(n) + "]; } " + name + ";"}
	})
	u.structs.add(t)
	return t.name
}

// typeKey is what spells a struct type: the kind and C type of its
// elements (none for a packed fragment) and their number.
type typeKey struct {
	kind    ir.Kind
	reg     string
	perLane int
}

// typeDecls caches the struct types of every program, which many share:
// spelled anew, they were allocations of every compile.
var typeDecls sync.Map // typeKey → named

// spelledOnce returns what spell returns for k, spelled once per process
// and kept in m (many programs share it) for every later call.
func spelledOnce[K comparable, V any](m *sync.Map, k K, spell func() V) V {
	if v, ok := m.Load(k); ok {
		return v.(V)
	}
	v := spell()
	m.Store(k, v)
	return v
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
