// Package hostcall binds host values to the arguments of a compiled kernel,
// following the kernel ABI of the OpenCL C back end (docs/abi.md).
//
// The caller describes the tensor-language parameters in a neutral form —
// scalars, memrefs (a Blob of element bytes, shape and strides) and groups
// (every member in one base Blob, element offsets, per-member shapes and
// strides, and the group offset) — and Bind expands them, by the roles of
// compiler.Kernel.Args, into the ordered kernel arguments: scalars encoded
// in their C type, and buffers named by their Blob, so that a blob used by
// several arguments is uploaded once and read back once.
//
// The package is pure Go: it knows the ABI, not a runtime. Running a Call
// on a device is compiler/hostcall/devcall's job; converting interpreter
// arguments (FromInterp) lives here, so that `tltune run`, the differential
// tests and the tuner (which converts kernels.Inputs) share one binder.
package hostcall

import (
	"fmt"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
)

// Blob is host memory behind one buffer argument.
type Blob struct {
	Data []byte
	// ReadOnly marks memory the kernel declares const (group offsets and
	// per-member shape and stride arrays): it need not be read back.
	ReadOnly bool
	// Repeat, when larger than Data, is the buffer's size in bytes: Data
	// repeated over it, the last copy cut short (timing inputs, where
	// only distinct addresses matter). Such a blob is written to a device,
	// never read back.
	Repeat int64
}

// Len is the size of the buffer in bytes.
func (b *Blob) Len() int64 { return max(int64(len(b.Data)), b.Repeat) }

// Repeated reports whether Data is one period of a larger buffer.
func (b *Blob) Repeated() bool { return b.Repeat > int64(len(b.Data)) }

// Memref is a memref parameter: element (i1, …, in) is element
// i1·Stride[0] + … + in·Stride[n-1] of Data, whose first byte is the
// kernel's data pointer (the ABI has no offset argument).
type Memref struct {
	Data   *Blob
	Shape  []int64
	Stride []int64
}

// Group is a group parameter in the ABI's layout: member i is the memref
// at element Offsets[i] + Offset of Base, with shape Shapes[i] and strides
// Strides[i]; the group size is len(Offsets). The kernel receives Offset
// only when the group type's offset is dynamic (a static one is compiled
// in); Bind checks every member's extent with Offset, so a static offset
// left at zero here is not part of that check.
type Group struct {
	Base    *Blob
	Offsets []int64
	Shapes  [][]int64
	Strides [][]int64
	Offset  int64

	// meta caches the blobs of the const arrays (offsets, dynamic shape
	// and stride entries), so that binding the same Group to several
	// kernels uploads them once.
	meta map[metaKey]*Blob
}

type metaKey struct {
	role opencl.ArgRole
	mode int
}

// Param is the value of one tensor-language parameter: Int for bool and
// integer types, Float for floating types, Complex for complex types,
// Memref or Group for the aggregate types. A value may carry both Memref and
// Group when the same bytes serve either layout; the kernel's argument
// roles pick the one it takes.
type Param struct {
	Int     int64
	Float   float64
	Complex complex128
	Memref  *Memref
	Group   *Group
}

// Arg is one bound kernel argument: exactly one of Blob (a buffer) and
// Scalar (the value's bytes, little-endian in the encoding of CType) is set.
type Arg struct {
	compiler.Arg
	Blob   *Blob
	Scalar []byte
}

// Call is a kernel with every argument bound, ready to launch over Groups
// logical work-groups.
type Call struct {
	Kernel *compiler.Kernel
	Groups int64
	Args   []Arg
	Blobs  []*Blob // every distinct buffer, in order of first use
}

// GlobalSize is the global work size of the call (docs/abi.md, Launch).
func (c *Call) GlobalSize() [3]int64 { return c.Kernel.GlobalSize(c.Groups) }

// LocalSize is the work-group size of the call.
func (c *Call) LocalSize() [3]int64 { return c.Kernel.LocalSize() }

// Written are the blobs the kernel may write: the ones to read back.
func (c *Call) Written() []*Blob {
	var w []*Blob
	for _, b := range c.Blobs {
		if !b.ReadOnly {
			w = append(w, b)
		}
	}
	return w
}

// Bind binds params (one per tensor-language parameter) to the arguments of
// k, for a launch of groups logical work-groups.
func Bind(k *compiler.Kernel, params []Param, groups int64) (*Call, error) {
	if groups < 1 {
		return nil, fmt.Errorf("kernel %s: %d work-groups, want at least 1", k.Name, groups)
	}
	c := &Call{Kernel: k, Groups: groups}
	seen := map[*Blob]bool{}
	for _, a := range k.Args {
		arg, err := bindArg(a, params)
		if err != nil {
			return nil, fmt.Errorf("kernel %s argument %s: %w", k.Name, a.Name, err)
		}
		if arg.Blob != nil && !seen[arg.Blob] {
			seen[arg.Blob] = true
			c.Blobs = append(c.Blobs, arg.Blob)
		}
		c.Args = append(c.Args, arg)
	}
	return c, nil
}

func bindArg(a compiler.Arg, params []Param) (Arg, error) {
	if a.Param < 0 || a.Param >= len(params) {
		return Arg{}, fmt.Errorf("parameter %d has no value (%d given)", a.Param, len(params))
	}
	p := params[a.Param]
	switch a.Role {
	case opencl.RoleScalar:
		return scalar(a, p)
	case opencl.RoleData, opencl.RoleShape, opencl.RoleStride:
		if p.Memref == nil {
			return Arg{}, fmt.Errorf("parameter %d is a memref; the value has none", a.Param)
		}
		return bindMemref(a, p.Memref)
	case opencl.RoleGroupBase, opencl.RoleGroupOffset, opencl.RoleGroupShape, opencl.RoleGroupStride,
		opencl.RoleGroupSize, opencl.RoleGroupElemOf:
		if p.Group == nil {
			return Arg{}, fmt.Errorf("parameter %d is a group; the value has none", a.Param)
		}
		return bindGroup(a, p.Group)
	}
	return Arg{}, fmt.Errorf("unknown argument role %q", a.Role)
}

func bindMemref(a compiler.Arg, m *Memref) (Arg, error) {
	if len(m.Shape) != len(m.Stride) {
		return Arg{}, fmt.Errorf("memref with %d shape and %d stride entries", len(m.Shape), len(m.Stride))
	}
	switch a.Role {
	case opencl.RoleData:
		if err := checkExtent(a.Elem, m.Data, 0, m.Shape, m.Stride); err != nil {
			return Arg{}, err
		}
		return Arg{Arg: a, Blob: m.Data}, nil
	case opencl.RoleShape:
		return modeArg(a, m.Shape)
	}
	return modeArg(a, m.Stride)
}

// modeArg binds a dynamic shape or stride entry.
func modeArg(a compiler.Arg, entries []int64) (Arg, error) {
	if a.Mode < 0 || a.Mode >= len(entries) {
		return Arg{}, fmt.Errorf("mode %d of a memref of order %d", a.Mode, len(entries))
	}
	return scalar(a, Param{Int: entries[a.Mode]})
}

func bindGroup(a compiler.Arg, g *Group) (Arg, error) {
	n := len(g.Offsets)
	if len(g.Shapes) != n || len(g.Strides) != n {
		return Arg{}, fmt.Errorf("group of %d offsets, %d shapes and %d strides", n, len(g.Shapes), len(g.Strides))
	}
	switch a.Role {
	case opencl.RoleGroupBase:
		for i := range n {
			if err := checkExtent(a.Elem, g.Base, g.Offsets[i]+g.Offset, g.Shapes[i], g.Strides[i]); err != nil {
				return Arg{}, fmt.Errorf("member %d: %w", i, err)
			}
		}
		return Arg{Arg: a, Blob: g.Base}, nil
	case opencl.RoleGroupOffset:
		return Arg{Arg: a, Blob: g.metaBlob(a, func() []int64 { return g.Offsets })}, nil
	case opencl.RoleGroupShape, opencl.RoleGroupStride:
		entries := g.Shapes
		if a.Role == opencl.RoleGroupStride {
			entries = g.Strides
		}
		for i, e := range entries {
			if a.Mode < 0 || a.Mode >= len(e) {
				return Arg{}, fmt.Errorf("member %d has no mode %d", i, a.Mode)
			}
		}
		return Arg{Arg: a, Blob: g.metaBlob(a, func() []int64 {
			column := make([]int64, n)
			for i, e := range entries {
				column[i] = e[a.Mode]
			}
			return column
		})}, nil
	case opencl.RoleGroupSize:
		return scalar(a, Param{Int: int64(n)})
	}
	return scalar(a, Param{Int: g.Offset})
}

// metaBlob returns the const long array of argument a, built from longs
// on first use.
func (g *Group) metaBlob(a compiler.Arg, longs func() []int64) *Blob {
	key := metaKey{a.Role, a.Mode}
	if b := g.meta[key]; b != nil {
		return b
	}
	if g.meta == nil {
		g.meta = map[metaKey]*Blob{}
	}
	b := encodeLongs(longs())
	g.meta[key] = b
	return b
}

// encodeLongs is a read-only blob of C longs.
func encodeLongs(longs []int64) *Blob {
	buf := interp.NewBuffer(ir.I64, len(longs))
	for i, v := range longs {
		buf.SetInt(i, v)
	}
	return &Blob{Data: buf.Data, ReadOnly: true}
}

// checkExtent checks that every element of a view at element offset off of
// blob lies inside it, so that a wrong binding is an error rather than a
// device reading or writing past its buffer.
func checkExtent(elem string, blob *Blob, off int64, shape, stride []int64) error {
	t := ir.BasicByName(elem)
	if t == nil {
		return fmt.Errorf("unknown element type %q", elem)
	}
	if blob == nil {
		return fmt.Errorf("no data for a memref of %s", elem)
	}
	if len(shape) != len(stride) {
		return fmt.Errorf("%d shape and %d stride entries", len(shape), len(stride))
	}
	lo, hi := off, off
	for k, s := range shape {
		if s <= 0 {
			return nil // an empty view reaches nothing
		}
		if d := (s - 1) * stride[k]; d < 0 {
			lo += d
		} else {
			hi += d
		}
	}
	if n := blob.Len() / t.Size(); lo < 0 || hi >= n {
		return fmt.Errorf("shape %v, strides %v at element %d reach elements %d..%d of a buffer of %d %s",
			shape, stride, off, lo, hi, n, elem)
	}
	return nil
}
