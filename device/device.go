// Package device owns the GPU runtimes: it enumerates OpenCL and Level Zero
// devices with their properties, and gives tltune one runtime-neutral way to
// allocate buffers, build programs (OpenCL C, SPIR-V, SPIR bitcode), launch
// kernels with typed arguments and time them with device events. It also
// measures a device's ceilings (peak.go).
//
// Both runtimes are reached through dlopen (device/internal/cl and
// device/internal/ze), so a machine without them still runs tltune; opening a
// device there fails with an error that names the package to install.
//
// Failures are classified for the tuner: errors.Is(err, ErrBuild),
// ErrWorkGroupSize, ErrOutOfResources, ErrDeviceLost, ErrRuntimeMissing,
// ErrUnsupported; a *BuildError carries the build log.
package device

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// Runtime names as they appear in Info.Runtime and in device specs.
const (
	OpenCL    = "opencl"
	LevelZero = "levelzero"
)

// Info describes one device. Sizes are bytes; a property the runtime does not
// report is zero or empty.
type Info struct {
	ID       string `json:"id"`       // "opencl:N" or "ze:N": index within its runtime
	Index    int    `json:"index"`    // index in the combined list of `tltune devices`
	Runtime  string `json:"runtime"`  // OpenCL or LevelZero
	Type     string `json:"type"`     // "gpu", "cpu", "accelerator", ...
	Name     string `json:"name"`     //
	Vendor   string `json:"vendor"`   //
	Driver   string `json:"driver"`   // driver version
	Platform string `json:"platform"` // OpenCL platform, or the Level Zero loader
	Version  string `json:"version"`  // the device's OpenCL version string, or the SPIR-V version on Level Zero
	OpenCLC  string `json:"opencl_c,omitempty"`

	ComputeUnits int `json:"compute_units"` // OpenCL compute units; EUs on Level Zero
	ClockMHz     int `json:"clock_mhz"`

	GlobalMemBytes uint64 `json:"global_mem_bytes"`
	MaxAllocBytes  uint64 `json:"max_alloc_bytes"`
	LocalMemBytes  uint64 `json:"local_mem_bytes"`
	// CacheBytes is the global memory cache as the runtime reports it: the
	// L2 on Intel, the host's LLC on PoCL, but on NVIDIA's OpenCL 32 KiB per
	// SM (4.1 MiB on an H200, whose L2 is 50 MiB).
	CacheBytes uint64 `json:"cache_bytes"`

	MaxWorkGroupSize int    `json:"max_work_group_size"`
	MaxWorkItemSizes [3]int `json:"max_work_item_sizes"`
	SubgroupSizes    []int  `json:"subgroup_sizes,omitempty"` // empty: the runtime does not say

	Extensions []string `json:"extensions"`            // OpenCL device extensions, or the Level Zero driver's
	ILVersions []string `json:"il_versions,omitempty"` // e.g. "SPIR-V_1.2"; empty: no IL programs
	FP16       bool     `json:"fp16"`
	FP64       bool     `json:"fp64"`

	open func(Info) (Device, error) // opens this device in its runtime; the device reports the Info it is given
}

// HasExtension reports whether the device lists the extension.
func (i Info) HasExtension(name string) bool { return slices.Contains(i.Extensions, name) }

// IsNVIDIA reports whether NVIDIA makes the device (its vendor says so).
func (i Info) IsNVIDIA() bool { return strings.Contains(strings.ToUpper(i.Vendor), "NVIDIA") }

// AcceptsSPIRV reports whether programs can be built from SPIR-V directly.
func (i Info) AcceptsSPIRV() bool {
	if i.Runtime == LevelZero {
		return true
	}
	for _, v := range i.ILVersions {
		if len(v) >= 6 && v[:6] == "SPIR-V" {
			return true
		}
	}
	return false
}

// Device is one opened device. The Build methods and the Program and Kernel
// lookups they return may be called from several goroutines at once (program
// creation and builds are thread-safe in OpenCL and Level Zero, and the
// bindings keep no shared state), so the tuner builds while it times; every
// other method, and every Buffer, Kernel and Event, belongs to one goroutine
// at a time: the tuner measures one configuration at a time on a device.
type Device interface {
	Info() Info
	// Alloc allocates a device buffer of size bytes.
	Alloc(size int64) (Buffer, error)
	// BuildSource builds a program from OpenCL C source. On Level Zero the
	// source is compiled to SPIR-V with clang-15 and llvm-spirv-15 first.
	BuildSource(src, options string) (Program, error)
	// BuildSPIRV builds a program from a SPIR-V module; an OpenCL device
	// needs SPIR-V among its ILVersions (else ErrUnsupported).
	BuildSPIRV(spv []byte, options string) (Program, error)
	// BuildSPIR builds a program from SPIR 1.2 LLVM bitcode through
	// cl_khr_spir (see SPIRVToBitcode); OpenCL only.
	BuildSPIR(bitcode []byte, options string) (Program, error)
	// BuildBinary builds a program from the binary of a program built on
	// this device and driver (Program.Binary), with the options it was
	// built with.
	BuildBinary(bin []byte, options string) (Program, error)
	// Close releases the device's context and queue.
	Close() error
}

// Buffer is device memory. Reads and writes start at offset 0 and wait for
// the copy.
type Buffer interface {
	Size() int64
	Write(src []byte) error
	Read(dst []byte) error
	// Fill repeats pattern (1, 2, 4, ..., 128 bytes) over the whole buffer.
	Fill(pattern []byte) error
	// WriteRepeated writes period over the whole buffer again and again,
	// the last copy cut short: Fill for a pattern of any size, copied
	// from the host.
	WriteRepeated(period []byte) error
	Release() error
}

// repeatChunk is the least WriteRepeated copies from the host, where the
// buffer is larger: a small period (a batch entry of a few hundred bytes,
// say) is first repeated on the host.
const repeatChunk = 4 << 20

// writeRepeated is WriteRepeated for a buffer of size bytes: write(offset,
// src) copies host bytes to it, copyWithin(src, dst, n) copies n of its
// own bytes. The host writes one chunk of whole periods; the buffer then
// doubles what it holds by copies on the device, which stay off the bus:
// a 210 MB timing set (gemm 64x64x32 f16 on an H100) took 52 writes of 4
// MB from the host before.
func writeRepeated(size int64, period []byte, write func(offset int64, src []byte) error, copyWithin func(src, dst, n int64) error) error {
	if len(period) == 0 {
		return fmt.Errorf("repeat an empty period over %d bytes", size)
	}
	if n := int64(len(period)); n < repeatChunk && n < size {
		period = bytes.Repeat(period, int(min(repeatChunk/n, (size+n-1)/n)))
	}
	filled := min(int64(len(period)), size)
	if err := write(0, period[:filled]); err != nil {
		return err
	}
	// filled is whole periods, so the bytes at filled+i are those at i.
	for filled < size {
		n := min(filled, size-filled)
		if err := copyWithin(0, filled, n); err != nil {
			return err
		}
		filled += n
	}
	return nil
}

// Program is a built program.
type Program interface {
	// Log is the build log (warnings); failures carry theirs in *BuildError.
	Log() string
	// Binary is the program as the driver built it for the device
	// (clGetProgramInfo(CL_PROGRAM_BINARIES), zeModuleGetNativeBinary), for
	// BuildBinary to skip the driver's compiler next time.
	Binary() ([]byte, error)
	Kernel(name string) (Kernel, error)
	Release() error
}

// Kernel is one kernel of a program.
type Kernel interface {
	// SetArgs sets the arguments in order, starting at index 0.
	SetArgs(args ...Arg) error
	// Launch starts the kernel over global work-items (1 to 3 dimensions)
	// in work-groups of local (nil: the runtime chooses); global must be a
	// multiple of local in each dimension.
	Launch(global, local []int) (Event, error)
	Release() error
}

// Event is the device-side record of one launch.
type Event interface {
	// Wait waits for the launch to finish.
	Wait() error
	// Nanoseconds waits and returns the kernel's device execution time.
	Nanoseconds() (int64, error)
	Release() error
}

// Arg is a typed kernel argument; make one with Buf, I32, I64, U64, F32,
// F64 or Local.
type Arg struct {
	buf   Buffer
	bytes []byte
	local int
}

// Buf passes a buffer (a global pointer).
func Buf(b Buffer) Arg { return Arg{buf: b} }

// I32 passes an int.
func I32(v int32) Arg { return scalar(v) }

// I64 passes a long.
func I64(v int64) Arg { return scalar(v) }

// U64 passes an unsigned long.
func U64(v uint64) Arg { return scalar(v) }

// F32 passes a float.
func F32(v float32) Arg { return scalar(v) }

// F64 passes a double.
func F64(v float64) Arg { return scalar(v) }

// Raw passes a scalar argument as its bytes, for the types without a
// constructor of their own (char, short, half, float2, double2): the
// runtimes copy an argument by its size.
func Raw(b []byte) Arg { return Arg{bytes: append([]byte(nil), b...)} }

// Local passes a local-memory allocation of size bytes.
func Local(size int) Arg { return Arg{local: size} }

func scalar[T int32 | int64 | uint64 | float32 | float64](v T) Arg {
	return Arg{bytes: slices.Clone(Bytes([]T{v}))}
}

// Bytes views a slice of numbers as its bytes (host byte order, which is the
// device's on every supported machine), for Buffer.Write and Read.
func Bytes[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// argSetter is what a runtime kernel provides to setArgs.
type argSetter interface {
	setBytes(i int, v []byte) error
	setBuffer(i int, b Buffer) error
	setLocal(i int, size int) error
}

// setArgs dispatches each argument to the runtime by kind.
func setArgs(k argSetter, args []Arg) error {
	for i, a := range args {
		var err error
		switch {
		case a.buf != nil:
			err = k.setBuffer(i, a.buf)
		case a.bytes != nil:
			err = k.setBytes(i, a.bytes)
		default:
			err = k.setLocal(i, a.local)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
