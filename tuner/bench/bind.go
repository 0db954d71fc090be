// Package bench runs one recipe configuration on a device: it uploads a
// recipe's inputs, binds them to a compiled kernel's arguments following the
// kernel ABI (docs/abi.md), launches, verifies the output against the
// recipe's float64 host reference, and times launches with device events
// over rotating buffer sets.
//
// The tuning loop calls it once per configuration; the buffers of a timing
// run depend only on the recipe (shape, dtype, layout), so a Session
// allocates them once and every configuration reuses them.
package bench

import (
	"fmt"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/device"
	"tltune/kernels"
)

// bufferSet is one recipe's inputs resident on the device: a buffer per
// kernel argument (the same bytes serve the strided and the group layout),
// and, for the group layout, a buffer of per-entry element offsets per
// argument.
type bufferSet struct {
	in      *kernels.Inputs
	data    []device.Buffer // by tensor-language parameter
	offsets []device.Buffer // by parameter; nil unless the kernel takes a group
}

// upload copies in to freshly allocated device buffers.
func upload(d device.Device, in *kernels.Inputs) (*bufferSet, error) {
	s := &bufferSet{in: in, data: make([]device.Buffer, len(in.Args)), offsets: make([]device.Buffer, len(in.Args))}
	for i, a := range in.Args {
		b, err := allocWrite(d, a.Data)
		if err != nil {
			s.release()
			return nil, fmt.Errorf("upload %s: %w", a.Name, err)
		}
		s.data[i] = b
	}
	return s, nil
}

// allocWrite allocates a buffer holding data (at least 8 bytes: some
// runtimes refuse empty buffers).
func allocWrite(d device.Device, data []byte) (device.Buffer, error) {
	b, err := d.Alloc(int64(max(len(data), 8)))
	if err != nil {
		return nil, err
	}
	if err := b.Write(data); err != nil {
		b.Release()
		return nil, err
	}
	return b, nil
}

// groupOffsets returns the buffer of per-entry element offsets of parameter
// p, uploading it on first use: entry e of a group starts e whole entries
// into the argument's buffer.
func (s *bufferSet) groupOffsets(d device.Device, p int) (device.Buffer, error) {
	if s.offsets[p] != nil {
		return s.offsets[p], nil
	}
	a := s.in.Args[p]
	offs := make([]int64, s.in.Batch)
	for e := range offs {
		offs[e] = int64(e * a.EntryElements())
	}
	b, err := allocWrite(d, device.Bytes(offs))
	if err != nil {
		return nil, fmt.Errorf("upload group offsets of %s: %w", a.Name, err)
	}
	s.offsets[p] = b
	return b, nil
}

func (s *bufferSet) release() {
	for _, bs := range [][]device.Buffer{s.data, s.offsets} {
		for _, b := range bs {
			if b != nil {
				b.Release()
			}
		}
	}
}

// args binds the set to kernel k: the device arguments in ABI order.
func (s *bufferSet) args(d device.Device, k *compiler.Kernel) ([]device.Arg, error) {
	args := make([]device.Arg, 0, len(k.Args))
	for _, a := range k.Args {
		arg, err := s.bind(d, a)
		if err != nil {
			return nil, fmt.Errorf("kernel %s argument %s: %w", k.Name, a.Name, err)
		}
		args = append(args, arg)
	}
	return args, nil
}

// bind gives the value of one ABI argument. Recipes pass memrefs packed
// column-major with the batch as the last mode (strided layout), or groups of
// packed entries; no recipe has scalar parameters or dynamic group offsets
// other than zero.
func (s *bufferSet) bind(d device.Device, a compiler.Arg) (device.Arg, error) {
	batch := int64(s.in.Batch)
	switch a.Role {
	case opencl.RoleGroups, opencl.RoleGroupSize:
		return device.I64(batch), nil
	case opencl.RoleGroupElemOf:
		return device.I64(0), nil
	}
	if a.Param < 0 || a.Param >= len(s.in.Args) {
		return device.Arg{}, fmt.Errorf("parameter %d is not an argument of the recipe", a.Param)
	}
	buf := s.in.Args[a.Param]
	full := append(append([]int{}, buf.Shape...), s.in.Batch)
	switch a.Role {
	case opencl.RoleData, opencl.RoleGroupBase:
		return device.Buf(s.data[a.Param]), nil
	case opencl.RoleShape:
		return device.I64(int64(full[a.Mode])), nil
	case opencl.RoleStride:
		return device.I64(int64(packedStride(full, a.Mode))), nil
	case opencl.RoleGroupOffset:
		b, err := s.groupOffsets(d, a.Param)
		return device.Buf(b), err
	}
	return device.Arg{}, fmt.Errorf("role %s has no value in a recipe", a.Role)
}

// packedStride is the stride of mode m of a packed column-major tensor.
func packedStride(shape []int, m int) int {
	s := 1
	for _, n := range shape[:m] {
		s *= n
	}
	return s
}
