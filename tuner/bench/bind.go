// Package bench runs one recipe configuration on a device: it uploads a
// recipe's inputs, binds them to a compiled kernel's arguments following the
// kernel ABI (docs/abi.md, through compiler/hostcall), launches once on the
// verification inputs and returns the output, for a check against the
// recipe's float64 host reference (Reference), and times launches with
// device events over rotating buffer sets.
//
// The tuner's worker process calls it once per configuration; the buffers
// of a timing run depend only on the recipe (shape, dtype, layout), so a
// Session allocates them once and every configuration reuses them. The
// reference is computed once per problem by the process that checks, which
// need not be the one that runs the session.
package bench

import (
	"fmt"
	"slices"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/compiler/hostcall/devcall"
	"tltune/device"
	"tltune/kernels"
)

// bufferSet is one recipe batch resident on the device: the binder's view
// of the inputs and the device buffers behind it.
type bufferSet struct {
	in     *kernels.Inputs
	batch  int // entries of a launch: in's, or more repeating them
	params []hostcall.Param
	bufs   *devcall.Buffers
}

// newBufferSet is in as params describe it for launches over batch
// entries, with no device buffers yet: write allocates and fills them.
func newBufferSet(d device.Device, in *kernels.Inputs, batch int, params []hostcall.Param) *bufferSet {
	return &bufferSet{in: in, batch: batch, params: params, bufs: devcall.NewBuffers(d)}
}

// write copies the set's data to its device buffers, allocating them the
// first time; written again, they are as the host holds them (inputs, and
// the output as it was before a launch wrote it). The const arrays of the
// group layout follow on first use.
func (s *bufferSet) write() error {
	for i, p := range s.params {
		if err := s.bufs.Write(p.Memref.Data); err != nil {
			return fmt.Errorf("upload %s: %w", s.in.Args[i].Name, err)
		}
	}
	return nil
}

// uploadRepeated uploads a batch of batch entries, in's repeated over it
// on the device (timing buffers), for a recipe of the given layout: the
// host holds in's entries alone, and a set's output cannot be read back.
func uploadRepeated(d device.Device, in *kernels.Inputs, batch int, layout kernels.Layout) (*bufferSet, error) {
	s := newBufferSet(d, in, batch, repeatedParams(in, batch, layout == kernels.Group))
	if err := s.write(); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

func (s *bufferSet) release() { s.bufs.Release() }

// output is the blob of the argument the kernel writes.
func (s *bufferSet) output() *hostcall.Blob { return s.params[len(s.params)-1].Memref.Data }

// call binds the set to kernel k for a launch over the whole batch.
func (s *bufferSet) call(k *compiler.Kernel) (*hostcall.Call, error) {
	return hostcall.Bind(k, s.params, int64(s.batch))
}

// InputParams gives the arguments of in to compiler/hostcall, for any host
// of recipe kernels (the compiler's execution tests too). Every argument is
// described in both layouts a recipe kernel may take, over the same bytes,
// so a device run reads its results back into in: strided, a memref of the
// entry shape followed by the batch, packed column-major; group, one member
// per batch entry, entry e starting e whole entries into the argument's
// bytes. No recipe has scalar parameters, and their group offset is zero.
func InputParams(in *kernels.Inputs) []hostcall.Param { return repeatedParams(in, in.Batch, true) }

// repeatedParams is InputParams for a batch of batch entries (at least
// in's), in's entries repeated over it (hostcall.Blob.Repeat), described
// as a group only where groups is set: a timing batch of a million small
// entries took 1.3 s to describe member by member (gemm 4x4x4 f32 on a
// CPU), for a strided kernel that never reads the description.
func repeatedParams(in *kernels.Inputs, batch int, groups bool) []hostcall.Param {
	params := make([]hostcall.Param, len(in.Args))
	for i, a := range in.Args {
		data := &hostcall.Blob{Data: a.Data, Repeat: int64(len(a.Data) / in.Batch * batch)}
		entry := int64s(a.Shape)
		full := append(entry[:len(entry):len(entry)], int64(batch))
		params[i] = hostcall.Param{Memref: &hostcall.Memref{Data: data, Shape: full, Stride: packedStrides(full)}}
		if groups {
			params[i].Group = groupOf(data, entry, a.EntryElements(), batch)
		}
	}
	return params
}

// groupOf describes batch entries of the given shape packed one after the
// other in data as a group; every member shares one shape and one stride
// slice.
func groupOf(data *hostcall.Blob, entry []int64, entryElements, batch int) *hostcall.Group {
	g := &hostcall.Group{Base: data, Offsets: make([]int64, batch),
		Shapes: slices.Repeat([][]int64{entry}, batch), Strides: slices.Repeat([][]int64{packedStrides(entry)}, batch)}
	for e := range g.Offsets {
		g.Offsets[e] = int64(e * entryElements)
	}
	return g
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// packedStrides are the strides of a packed column-major tensor.
func packedStrides(shape []int64) []int64 {
	strides := make([]int64, len(shape))
	s := int64(1)
	for m, n := range shape {
		strides[m] = s
		s *= n
	}
	return strides
}
