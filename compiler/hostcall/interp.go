package hostcall

import (
	"fmt"

	"tltune/compiler/interp"
)

// InterpArgs are interpreter arguments in the neutral form. Blobs share the
// interpreter's memory where they can (a memref's blob is its buffer from
// the view's first element on; a group whose members live in one buffer uses
// that buffer as its base); a group spread over several buffers is packed
// into a new base, which CopyBack copies back after a device run.
type InterpArgs struct {
	Params []Param
	packed []packedGroup
}

// packedGroup is a group base assembled from several interpreter buffers,
// each at a byte position of the base.
type packedGroup struct {
	base  *Blob
	bufs  []*interp.Buffer
	start []int // byte position of bufs[i] in base
}

// FromInterp converts the arguments of an interpreter run. Views the ABI
// cannot express are errors: negative strides (a device buffer starts at
// the view's first element) and two parameters viewing one interpreter
// buffer from different places (OpenCL 1.2 has no sub-buffers, so they
// would become two device buffers and not see each other's writes).
func FromInterp(args []interp.Arg) (*InterpArgs, error) {
	c := &converter{blobs: map[*interp.Buffer]blobUse{}}
	x := &InterpArgs{Params: make([]Param, len(args))}
	for i, a := range args {
		p := Param{Int: a.Int, Float: a.Float, Complex: a.Complex}
		var err error
		switch {
		case a.Memref != nil:
			p.Memref, err = c.memref(i, a.Memref)
		case a.Group != nil:
			p.Group, err = c.group(i, a.Group)
		}
		if err != nil {
			return nil, fmt.Errorf("parameter %d: %w", i, err)
		}
		x.Params[i] = p
	}
	x.packed = c.packed
	return x, nil
}

// CopyBack copies the device results of packed group bases into the
// interpreter's buffers. Call it after the written blobs were read back.
func (x *InterpArgs) CopyBack() {
	for _, g := range x.packed {
		for i, b := range g.bufs {
			copy(b.Data, g.base.Data[g.start[i]:])
		}
	}
}

// blobUse records which blob an interpreter buffer went into, and from
// which of its bytes on.
type blobUse struct {
	blob  *Blob
	start int
	param int
}

type converter struct {
	blobs  map[*interp.Buffer]blobUse
	packed []packedGroup
}

// share returns the blob holding buf from byte start on for parameter p:
// the one already made for the same place, else a new blob aliasing buf.
func (c *converter) share(p int, buf *interp.Buffer, start int) (*Blob, error) {
	if u, ok := c.blobs[buf]; ok {
		if u.blob == nil || u.start != start {
			return nil, fmt.Errorf("views the buffer of parameter %d from another element; the kernel ABI cannot pass overlapping views as one buffer", u.param)
		}
		return u.blob, nil
	}
	b := &Blob{Data: buf.Data[start:]}
	c.blobs[buf] = blobUse{blob: b, start: start, param: p}
	return b, nil
}

func (c *converter) memref(p int, m *interp.Memref) (*Memref, error) {
	if err := checkView(m); err != nil {
		return nil, err
	}
	blob, err := c.share(p, m.Buf, int(m.Offset*m.Buf.Elem.Size()))
	if err != nil {
		return nil, err
	}
	return &Memref{Data: blob, Shape: m.Shape, Stride: m.Stride}, nil
}

func checkView(m *interp.Memref) error {
	if m.Offset < 0 {
		return fmt.Errorf("memref at negative element offset %d", m.Offset)
	}
	for _, s := range m.Stride {
		if s < 0 {
			return fmt.Errorf("memref with negative strides %v: a device buffer starts at the view's first element", m.Stride)
		}
	}
	return nil
}

// group lays the members out in one base: the distinct buffers they view,
// in order of first use, with each member's offset pointing at its first
// element.
func (c *converter) group(p int, g *interp.Group) (*Group, error) {
	out := &Group{Offset: g.Offset}
	var bufs []*interp.Buffer
	start := map[*interp.Buffer]int64{} // element position in the base
	n := int64(0)
	for i, m := range g.Memrefs {
		if m == nil {
			return nil, fmt.Errorf("member %d is missing", i)
		}
		if err := checkView(m); err != nil {
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		if _, ok := start[m.Buf]; !ok {
			start[m.Buf] = n
			n += int64(m.Buf.Len())
			bufs = append(bufs, m.Buf)
		}
		out.Offsets = append(out.Offsets, start[m.Buf]+m.Offset)
		out.Shapes = append(out.Shapes, m.Shape)
		out.Strides = append(out.Strides, m.Stride)
	}
	var err error
	out.Base, err = c.base(p, bufs)
	return out, err
}

// base is the blob of a group's buffers: the one buffer itself, or a new
// packed copy of several. A buffer packed into a copy cannot also be
// another parameter's blob.
func (c *converter) base(p int, bufs []*interp.Buffer) (*Blob, error) {
	switch len(bufs) {
	case 0:
		return &Blob{}, nil
	case 1:
		return c.share(p, bufs[0], 0)
	}
	g := packedGroup{base: &Blob{}, bufs: bufs}
	for _, b := range bufs {
		if u, ok := c.blobs[b]; ok {
			return nil, fmt.Errorf("a member views the buffer of parameter %d; the kernel ABI cannot pass it in two places", u.param)
		}
		c.blobs[b] = blobUse{param: p} // packed: no blob of its own
		g.start = append(g.start, len(g.base.Data))
		g.base.Data = append(g.base.Data, b.Data...)
	}
	c.packed = append(c.packed, g)
	return g.base, nil
}
