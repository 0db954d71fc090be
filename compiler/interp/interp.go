// Package interp is the reference interpreter of the tensor language: the
// executable definition of its semantics and the oracle every compiled
// kernel is checked against (DESIGN.md §2).
//
// Run executes a verified function over a grid of work-groups. Each
// work-group runs its collective region once, as one thread of control:
// collective instructions (gemm, gemv, ger, axpby, sum, cumsum,
// hadamard_product) are evaluated by their mathematical definition, element
// by element, with the accumulation order fixed (ascending summation index).
// At parallel and foreach the work-group fans out into its work-items, each
// executing the SPMD region with its own values. Work-items run one at a
// time under a cooperative scheduler that switches only where work-items
// must meet: barriers (all work-items of the work-group) and subgroup
// operations (all lanes of one subgroup: broadcast, add/max/min scans and
// reductions, cooperative matrix loads and stores). Execution is therefore
// deterministic, and a missing barrier shows up as a wrong result rather
// than as a race: between meeting points a work-item runs to its next
// meeting point before the next work-item starts.
//
// Cooperative matrices are values of a whole subgroup; each lane holds the
// full matrix, and their loads and stores happen once per subgroup after
// checking that every lane passed the same (dynamically uniform) operands.
// Work-groups run in order 0, 1, ..., so atomic updates from several
// work-groups are applied in a fixed order.
//
// Arithmetic happens in the declared types: f16 and bf16 round to nearest
// even after every operation (compiler/numeric), integers wrap around,
// complex values keep their component precision. Options.Accumulate64 makes
// the collectives and cooperative_matrix_mul_add accumulate in f64 (c64,
// i64) and round once into the output, for use as a high-precision
// reference. Behaviour the language leaves undefined (out-of-bounds access,
// integer division by zero, a subgroup operation reached by only part of a
// subgroup, a barrier not reached by every work-item) is reported as an
// error instead of executed.
package interp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"tltune/compiler/ir"
)

// Options configures a run.
type Options struct {
	// Groups is the number of work-groups (the batch); 0 means 1.
	Groups int
	// SubgroupSize and WorkGroupSize apply when the function does not fix
	// them by attribute; zero values mean 16 and [SubgroupSize, 1].
	SubgroupSize  int
	WorkGroupSize [2]int
	// Accumulate64 accumulates collectives in f64, c64 or i64 and rounds
	// once into the output type.
	Accumulate64 bool
	// Context, when not nil, stops the run when it is done (a time limit,
	// say): Run returns its error. The interpreter looks each time it
	// enters a region — a loop's iteration, a branch, a work-item's body —
	// so a kernel that never ends is stopped too.
	Context context.Context
}

// Arg is the value of one function parameter. A scalar parameter reads the
// field of its type's family: Int for bool and integer types, Float for
// floating types, Complex for complex types (values are rounded to the
// parameter's type). A memref parameter reads Memref, a group parameter Group.
type Arg struct {
	Int     int64
	Float   float64
	Complex complex128
	Memref  *Memref
	Group   *Group
}

// Run executes fn over opts.Groups work-groups with the given arguments.
// Memrefs and groups are read and written in place; the caller reads the
// results back from their buffers. The error, if any, names the position of
// the failing instruction.
func Run(fn *ir.Func, args []Arg, opts Options) (err error) {
	m, err := newMachine(fn, opts)
	if err != nil {
		return err
	}
	params, err := bindArgs(fn, args)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("interp: internal error in @%s: %v", fn.Name, r)
		}
	}()
	if ctx := opts.Context; ctx != nil {
		stop := context.AfterFunc(ctx, func() { m.stopped.Store(true) })
		defer stop()
		m.ctx = ctx
	}
	for g := range m.groups {
		e := &exec{m: m, group: int64(g)}
		if _, err := e.region(fn.Body, params.child()); err != nil {
			return err
		}
	}
	return nil
}

// machine holds what is fixed for one run.
type machine struct {
	fn       *ir.Func
	groups   int
	sgSize   int
	wg       [2]int
	numItems int
	acc64    bool
	ctx      context.Context
	stopped  atomic.Bool // ctx is done
}

func newMachine(fn *ir.Func, opts Options) (*machine, error) {
	m := &machine{fn: fn, groups: max(opts.Groups, 1), acc64: opts.Accumulate64}
	m.sgSize = opts.SubgroupSize
	if s, ok := fn.SubgroupSize(); ok {
		m.sgSize = int(s)
	}
	if m.sgSize <= 0 {
		m.sgSize = 16
	}
	m.wg = opts.WorkGroupSize
	if wg, ok := fn.WorkGroupSize(); ok {
		m.wg = [2]int{int(wg[0]), int(wg[1])}
	}
	if m.wg == [2]int{} {
		m.wg = [2]int{m.sgSize, 1}
	}
	if m.wg[0] <= 0 || m.wg[1] <= 0 || m.wg[0]%m.sgSize != 0 {
		return nil, fmt.Errorf("interp: work-group size %v is not a positive multiple of the subgroup size %d in its first mode", m.wg, m.sgSize)
	}
	m.numItems = m.wg[0] * m.wg[1]
	return m, nil
}

// numSubgroups is the number of subgroups of a work-group.
func (m *machine) numSubgroups() int { return m.numItems / m.sgSize }

// bindArgs checks args against fn's parameter types and returns the
// environment binding them.
func bindArgs(fn *ir.Func, args []Arg) (*env, error) {
	if len(args) != len(fn.Params) {
		return nil, fmt.Errorf("interp: @%s takes %d arguments, got %d", fn.Name, len(fn.Params), len(args))
	}
	e := newEnv(nil)
	for i, p := range fn.Params {
		var align int64
		if i < len(fn.ParamAttrs) {
			align, _ = fn.ParamAttrs[i].Int(ir.AttrAlignment)
		}
		v, err := bindArg(p.Type, args[i], align)
		if err != nil {
			return nil, fmt.Errorf("interp: argument %d (%%%s) of @%s: %w", i, p.Name, fn.Name, err)
		}
		e.set(p, v)
	}
	return e, nil
}

// bindArg checks argument a against parameter type t and the alignment
// its attribute promises (0: none) and returns its run-time value.
func bindArg(t *ir.Type, a Arg, align int64) (value, error) {
	switch {
	case t.Kind() == ir.KindMemref:
		if a.Memref == nil {
			return value{}, errors.New("memref parameter without a memref")
		}
		return value{ref: a.Memref}, checkMemref(t, a.Memref, 0, align)
	case t.Kind() == ir.KindGroup:
		return value{ref: a.Group}, checkGroup(t, a.Group, align)
	case t.Kind() == ir.KindBool || t.IsInteger():
		return convert(intVal(a.Int), ir.I64, t), nil
	case t.IsFloat():
		return convert(floatVal(a.Float), ir.F64, t), nil
	case t.IsComplex():
		return convert(complexVal(a.Complex), ir.C64, t), nil
	}
	return value{}, fmt.Errorf("parameters of type %s are not allowed", t)
}

// checkMemref checks that m fits the memref type t: element type, order,
// static shape and stride entries, that every element it can reach (with
// the extra element offset of a group) lies in its buffer, and that its
// first element is aligned to align bytes (0: not checked), as the
// parameter's alignment attribute promises the kernel.
func checkMemref(t *ir.Type, m *Memref, offset, align int64) error {
	if m.Buf == nil || m.Buf.Elem != t.Elem() {
		return fmt.Errorf("want a buffer of %s", t.Elem())
	}
	if len(m.Shape) != t.Order() || len(m.Stride) != t.Order() {
		return fmt.Errorf("memref of order %d for %s", len(m.Shape), t)
	}
	for k := range m.Shape {
		if m.Shape[k] < 0 {
			return fmt.Errorf("negative shape %v", m.Shape)
		}
		if s := t.Shape()[k]; s != ir.Dynamic && s != m.Shape[k] {
			return fmt.Errorf("shape %v does not match %s", m.Shape, t)
		}
		if s := t.Stride()[k]; s != ir.Dynamic && s != m.Stride[k] {
			return fmt.Errorf("stride %v does not match %s", m.Stride, t)
		}
	}
	lo, hi := m.span()
	if hi >= lo && (lo+offset < 0 || hi+offset >= int64(m.Buf.Len())) {
		return fmt.Errorf("shape %v, stride %v at offset %d reach elements %d..%d of a buffer of %d",
			m.Shape, m.Stride, m.Offset+offset, lo+offset, hi+offset, m.Buf.Len())
	}
	if b := (m.Offset + offset) * m.Buf.Elem.Size(); align > 0 && (b%align != 0 || m.Buf.alignment()%align != 0) {
		return fmt.Errorf("first element at byte %d of a buffer aligned to %d bytes: not aligned to the %d bytes of the alignment attribute",
			b, m.Buf.alignment(), align)
	}
	return nil
}

func checkGroup(t *ir.Type, g *Group, align int64) error {
	if g == nil {
		return errors.New("group parameter without a group")
	}
	if n := t.GroupSize(); n != ir.Dynamic && int64(len(g.Memrefs)) != n {
		return fmt.Errorf("group of %d memrefs for %s", len(g.Memrefs), t)
	}
	off := groupOffset(t, g)
	for i, m := range g.Memrefs {
		if m == nil {
			return fmt.Errorf("memref %d of the group is missing", i)
		}
		if err := checkMemref(t.Elem(), m, off, align); err != nil {
			return fmt.Errorf("memref %d of the group: %w", i, err)
		}
	}
	return nil
}

// groupOffset is the element offset of group type t: static, or the run-time
// value.
func groupOffset(t *ir.Type, g *Group) int64 {
	if off := t.GroupOffset(); off != ir.Dynamic {
		return off
	}
	return g.Offset
}

// env binds IR values to run-time values. A work-item's environment is a
// child of its work-group's, so uniform values are shared and varying ones
// are private.
type env struct {
	vals   map[*ir.Value]value
	parent *env
}

func newEnv(parent *env) *env { return &env{vals: map[*ir.Value]value{}, parent: parent} }

func (e *env) child() *env { return newEnv(e) }

func (e *env) get(v *ir.Value) value {
	for ; e != nil; e = e.parent {
		if x, ok := e.vals[v]; ok {
			return x
		}
	}
	panic(fmt.Sprintf("value %%%s used before its definition", v.Name))
}

func (e *env) set(v *ir.Value, x value) { e.vals[v] = x }
