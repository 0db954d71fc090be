// Package devcall performs a hostcall.Call on a device: it uploads the
// call's blobs, sets the arguments, launches over the call's global and
// local sizes and reads the written blobs back.
//
// It is a sub-package of compiler/hostcall, not part of it, so that the
// binder stays pure Go (usable and testable without a runtime), and it lives
// under compiler rather than in tuner/bench so that every host of compiled
// kernels — the tuner's sessions, `tltune run` and the compiler's
// differential tests — shares it without the compiler's tests or the
// command line depending on the tuner. It imports device and hostcall;
// neither imports it.
package devcall

import (
	"fmt"
	"slices"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/device"
)

// Buffers keeps blobs resident on one device: a blob is uploaded the first
// time a call uses it and reused by later calls, so a tuning session binds
// one set of inputs to many kernels and uploads the data once.
type Buffers struct {
	dev  device.Device
	bufs map[*hostcall.Blob]device.Buffer
}

// NewBuffers returns an empty set of resident buffers on d.
func NewBuffers(d device.Device) *Buffers {
	return &Buffers{dev: d, bufs: map[*hostcall.Blob]device.Buffer{}}
}

// buffer returns blob's device buffer, uploading it on first use (at least
// 8 bytes: some runtimes refuse empty buffers).
func (b *Buffers) buffer(blob *hostcall.Blob) (device.Buffer, error) {
	if buf, ok := b.bufs[blob]; ok {
		return buf, nil
	}
	buf, err := b.dev.Alloc(max(blob.Len(), 8))
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes: %w", blob.Len(), err)
	}
	if err := writeBlob(buf, blob); err != nil {
		buf.Release()
		return nil, err
	}
	b.bufs[blob] = buf
	return buf, nil
}

// writeBlob copies blob's bytes to buf, repeating them where the blob
// repeats.
func writeBlob(buf device.Buffer, blob *hostcall.Blob) error {
	if blob.Repeated() {
		return buf.WriteRepeated(blob.Data)
	}
	return buf.Write(blob.Data)
}

// Write copies blob's bytes to its device buffer, allocating it when the
// blob is not yet resident; a resident blob is written again (an output
// set back to its initial contents before the next launch, say).
func (b *Buffers) Write(blob *hostcall.Blob) error {
	buf, ok := b.bufs[blob]
	if !ok {
		_, err := b.buffer(blob)
		return err
	}
	return writeBlob(buf, blob)
}

// Args returns the device arguments of c, uploading the blobs not yet
// resident.
func (b *Buffers) Args(c *hostcall.Call) ([]device.Arg, error) {
	args := make([]device.Arg, len(c.Args))
	for i, a := range c.Args {
		var err error
		if a.Blob != nil {
			var buf device.Buffer
			buf, err = b.buffer(a.Blob)
			args[i] = device.Buf(buf)
		} else {
			args[i], err = scalar(a)
		}
		if err != nil {
			return nil, fmt.Errorf("kernel %s argument %s: %w", c.Kernel.Name, a.Name, err)
		}
	}
	return args, nil
}

// scalar passes a scalar's bytes as they are: hostcall already wrote them in
// the argument's C type.
func scalar(a hostcall.Arg) (device.Arg, error) {
	if len(a.Scalar) == 0 {
		return device.Arg{}, fmt.Errorf("argument %s has no value", a.CType)
	}
	return device.Raw(a.Scalar), nil
}

// Launch sets c's arguments on k and starts it over c's launch sizes.
func (b *Buffers) Launch(k device.Kernel, c *hostcall.Call) (device.Event, error) {
	args, err := b.Args(c)
	if err != nil {
		return nil, err
	}
	if err := k.SetArgs(args...); err != nil {
		return nil, err
	}
	g, l := c.GlobalSize(), c.LocalSize()
	return k.Launch([]int{int(g[0]), int(g[1]), int(g[2])}, []int{int(l[0]), int(l[1]), int(l[2])})
}

// ReadBack copies the device contents of the blobs into their Data.
func (b *Buffers) ReadBack(blobs ...*hostcall.Blob) error {
	for _, blob := range blobs {
		buf, ok := b.bufs[blob]
		if !ok {
			return fmt.Errorf("read back a blob of %d bytes that was never uploaded", len(blob.Data))
		}
		if blob.Repeated() {
			return fmt.Errorf("read back a blob of %d bytes repeated over %d: its host copy is one period", len(blob.Data), blob.Repeat)
		}
		if err := buf.Read(blob.Data); err != nil {
			return err
		}
	}
	return nil
}

// Release frees every resident buffer.
func (b *Buffers) Release() {
	for _, buf := range b.bufs {
		buf.Release()
	}
	clear(b.bufs)
}

// Run performs c once with kernel k on d: it uploads the blobs, launches,
// waits and reads every blob the kernel may write back into its Data.
func Run(d device.Device, k device.Kernel, c *hostcall.Call) error {
	b := NewBuffers(d)
	defer b.Release()
	ev, err := b.Launch(k, c)
	if err != nil {
		return err
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return err
	}
	return b.ReadBack(c.Written()...)
}

// Build builds OpenCL C source on d and returns its kernel symbol (a
// compiler.Kernel's Symbol), with a function that releases both.
func Build(d device.Device, src, symbol string) (device.Kernel, func(), error) {
	prog, err := d.BuildSource(src, "")
	if err != nil {
		return nil, nil, err
	}
	return KernelOf(prog, symbol)
}

// Path names how a compiled program reaches a device.
type Path string

const (
	PathOpenCLC Path = "opencl-c" // OpenCL C source, built by the driver
	PathSPIRV   Path = "spirv"    // tltune's SPIR-V module (clCreateProgramWithIL, zeModuleCreate)
	// PathPTX is tltune's PTX (compiler.Options.PTX), which NVIDIA's
	// OpenCL builds as a binary (clCreateProgramWithBinary) with ptxas
	// alone. ChoosePath never picks it: only PTXForm asks for it, until
	// its kernels are measured on GPUs.
	PathPTX Path = "ptx"
)

// ChoosePath is the path d takes for res: SPIR-V where the device accepts
// it (Level Zero; OpenCL devices listing a SPIR-V IL) and the target has a
// SPIR-V form, else OpenCL C (PoCL 3.1 and NVIDIA list no IL; the nvidia
// target's inline PTX exists only in OpenCL C).
func ChoosePath(info device.Info, res *compiler.Result) Path {
	if info.AcceptsSPIRV() && res.Target.HasSPIRV() {
		return PathSPIRV
	}
	return PathOpenCLC
}

// BuildResult builds the kernel of res that the host calls name (a
// compiler.Kernel's Name) on d by the path ChoosePath picks, looking it up
// by its symbol in the program of that path.
func BuildResult(d device.Device, res *compiler.Result, name string) (device.Kernel, func(), Path, error) {
	i := slices.IndexFunc(res.Kernels, func(k compiler.Kernel) bool { return k.Name == name })
	if i < 0 {
		return nil, nil, "", fmt.Errorf("the compiled program has no kernel @%s", name)
	}
	form, err := FormOf(d.Info(), res)
	if err != nil {
		return nil, nil, form.Path, err
	}
	prog, err := form.Build(d)
	if err != nil {
		return nil, nil, form.Path, err
	}
	k, release, err := KernelOf(prog, form.Kernels[i].Symbol)
	return k, release, form.Path, err
}

// Form is a compiled program in the form a device builds: OpenCL C source
// or a SPIR-V module, with its kernels as that form names them. It is plain
// data, so that a process other than the compiler's can build it (the
// tuner's worker).
type Form struct {
	Path    Path
	Source  string            // PathOpenCLC; the PTX text for PathPTX
	SPIRV   []byte            // PathSPIRV
	Kernels []compiler.Kernel // in source order; Symbol is the name to look up in the built program
}

// FormOf is res in the form the device described by info builds, by the
// path ChoosePath picks.
func FormOf(info device.Info, res *compiler.Result) (Form, error) {
	f := Form{Path: ChoosePath(info, res)}
	if f.Path == PathOpenCLC {
		f.Source, f.Kernels = res.OpenCL, res.Kernels
		return f, nil
	}
	out, err := res.SPIRV()
	if err != nil {
		return f, err
	}
	f.SPIRV, f.Kernels = out.Module, out.Kernels
	return f, nil
}

// PTXForm is res as PTX (PathPTX), for a device of NVIDIA's OpenCL; res
// must have been compiled with compiler.Options.PTX. The error is why res
// has no PTX (compiler.Result.PTXErr): the caller builds FormOf's instead.
func PTXForm(res *compiler.Result) (Form, error) {
	f := Form{Path: PathPTX, Source: res.PTX, Kernels: res.Kernels}
	switch {
	case res.PTXErr != nil:
		return f, res.PTXErr
	case res.PTX == "":
		return f, fmt.Errorf("the program was compiled without PTX (compiler.Options.PTX)")
	}
	return f, nil
}

// Build builds the program on d.
func (f Form) Build(d device.Device) (device.Program, error) {
	switch f.Path {
	case PathSPIRV:
		return d.BuildSPIRV(f.SPIRV, "")
	case PathPTX:
		return d.BuildBinary([]byte(f.Source), "")
	}
	return d.BuildSource(f.Source, "")
}

// KernelOf looks kernel symbol up in prog and returns it with a function
// that releases both (prog is released on failure too): the last step of
// every build, whichever form the program was built from.
func KernelOf(prog device.Program, symbol string) (device.Kernel, func(), error) {
	k, err := prog.Kernel(symbol)
	if err != nil {
		prog.Release()
		return nil, nil, err
	}
	return k, func() { k.Release(); prog.Release() }, nil
}
