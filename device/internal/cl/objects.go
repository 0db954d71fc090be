package cl

/*
#include <stdlib.h>
#include "dispatch.h"
*/
import "C"

import "unsafe"

// Queue is a context holding one device and an in-order profiling queue on
// it: everything tltune enqueues goes through one Queue per opened device.
type Queue struct {
	Device
	ctx C.cl_context
	q   C.cl_command_queue
}

// NewQueue creates a context for d and a profiling command queue on it.
func NewQueue(d Device) (*Queue, error) {
	var code C.cl_int
	ctx := C.tl_CreateContext(d.d, d.Platform, d.ID, &code)
	if err := check("clCreateContext", code); err != nil {
		return nil, err
	}
	q := C.tl_CreateProfilingQueue(d.d, ctx, d.ID, &code)
	if err := check("clCreateCommandQueue", code); err != nil {
		C.tl_ReleaseContext(d.d, ctx)
		return nil, err
	}
	return &Queue{Device: d, ctx: ctx, q: q}, nil
}

// Release waits for the queue to drain and releases it and the context.
func (q *Queue) Release() error {
	err := check("clFinish", C.tl_Finish(q.d, q.q))
	C.tl_ReleaseCommandQueue(q.d, q.q)
	C.tl_ReleaseContext(q.d, q.ctx)
	return err
}

// Finish waits until every enqueued command has completed.
func (q *Queue) Finish() error { return check("clFinish", C.tl_Finish(q.d, q.q)) }

// Mem is a buffer object.
type Mem struct{ m C.cl_mem }

// CreateBuffer allocates a read-write buffer of size bytes.
func (q *Queue) CreateBuffer(size int64) (Mem, error) {
	var code C.cl_int
	m := C.tl_CreateBuffer(q.d, q.ctx, C.size_t(size), &code)
	return Mem{m}, check("clCreateBuffer", code)
}

// ReleaseBuffer releases m.
func (q *Queue) ReleaseBuffer(m Mem) error {
	return check("clReleaseMemObject", C.tl_ReleaseMemObject(q.d, m.m))
}

// Write copies src to m from byte offset on and waits for the copy.
func (q *Queue) Write(m Mem, offset int64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return check("clEnqueueWriteBuffer", C.tl_WriteBuffer(q.d, q.q, m.m, C.size_t(offset), C.size_t(len(src)), unsafe.Pointer(&src[0])))
}

// CopyWithin enqueues a copy of size bytes of m from srcOffset to
// dstOffset, regions that must not overlap; Finish waits for it.
func (q *Queue) CopyWithin(m Mem, srcOffset, dstOffset, size int64) error {
	return check("clEnqueueCopyBuffer", C.tl_CopyWithin(q.d, q.q, m.m, C.size_t(srcOffset), C.size_t(dstOffset), C.size_t(size)))
}

// Read copies the start of m to dst and waits for the copy.
func (q *Queue) Read(m Mem, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	return check("clEnqueueReadBuffer", C.tl_ReadBuffer(q.d, q.q, m.m, C.size_t(len(dst)), unsafe.Pointer(&dst[0])))
}

// Fill repeats pattern over the first size bytes of m and waits.
func (q *Queue) Fill(m Mem, pattern []byte, size int64) error {
	if len(pattern) == 0 {
		return &Error{Func: "clEnqueueFillBuffer", Code: C.CL_INVALID_VALUE}
	}
	return check("clEnqueueFillBuffer", C.tl_FillBuffer(q.d, q.q, m.m, unsafe.Pointer(&pattern[0]), C.size_t(len(pattern)), C.size_t(size)))
}

// Program is a program object of a Queue's context.
type Program struct {
	q *Queue
	p C.cl_program
}

// ProgramFromSource creates a program from OpenCL C source (not yet built).
func (q *Queue) ProgramFromSource(src string) (*Program, error) {
	csrc := C.CString(src)
	defer C.free(unsafe.Pointer(csrc))
	var code C.cl_int
	p := C.tl_ProgramWithSource(q.d, q.ctx, csrc, C.size_t(len(src)), &code)
	return q.program("clCreateProgramWithSource", p, code)
}

// ProgramFromIL creates a program from an intermediate language module
// (SPIR-V), which needs an OpenCL 2.1+ device that lists the IL.
func (q *Queue) ProgramFromIL(il []byte) (*Program, error) {
	if len(il) == 0 {
		return nil, &Error{Func: "clCreateProgramWithIL", Code: C.CL_INVALID_VALUE}
	}
	var code C.cl_int
	p := C.tl_ProgramWithIL(q.d, q.ctx, unsafe.Pointer(&il[0]), C.size_t(len(il)), &code)
	return q.program("clCreateProgramWithIL", p, code)
}

// ProgramFromBinary creates a program from a device binary; with cl_khr_spir
// that binary may be SPIR 1.2 LLVM bitcode.
func (q *Queue) ProgramFromBinary(bin []byte) (*Program, error) {
	if len(bin) == 0 {
		return nil, &Error{Func: "clCreateProgramWithBinary", Code: C.CL_INVALID_VALUE}
	}
	var code C.cl_int
	p := C.tl_ProgramWithBinary(q.d, q.ctx, q.ID, (*C.uchar)(unsafe.Pointer(&bin[0])), C.size_t(len(bin)), &code)
	return q.program("clCreateProgramWithBinary", p, code)
}

func (q *Queue) program(fn string, p C.cl_program, code C.cl_int) (*Program, error) {
	if err := check(fn, code); err != nil {
		if p != nil {
			C.tl_ReleaseProgram(q.d, p)
		}
		return nil, err
	}
	return &Program{q: q, p: p}, nil
}

// Build compiles and links the program for the queue's device.
func (p *Program) Build(options string) error {
	copts := C.CString(options)
	defer C.free(unsafe.Pointer(copts))
	return check("clBuildProgram", C.tl_BuildProgram(p.q.d, p.p, p.q.ID, copts))
}

// Log returns the build log; it is empty when the driver wrote none.
func (p *Program) Log() string {
	b, err := query("clGetProgramBuildInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.tl_GetBuildLog(p.q.d, p.p, p.q.ID, size, v, ret)
	})
	if err != nil {
		return ""
	}
	return cString(b)
}

// Binary returns the program's binary for the queue's device, as
// clCreateProgramWithBinary takes it back (PTX on NVIDIA, the driver's own
// format elsewhere).
func (p *Program) Binary() ([]byte, error) {
	var size C.size_t
	if err := check("clGetProgramInfo", C.tl_GetProgramBinary(p.q.d, p.p, 0, nil, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, &Error{Func: "clGetProgramInfo", Code: C.CL_INVALID_PROGRAM_EXECUTABLE}
	}
	buf := (*C.uchar)(C.malloc(size))
	defer C.free(unsafe.Pointer(buf))
	if err := check("clGetProgramInfo", C.tl_GetProgramBinary(p.q.d, p.p, size, buf, nil)); err != nil {
		return nil, err
	}
	return C.GoBytes(unsafe.Pointer(buf), C.int(size)), nil
}

// Release releases the program.
func (p *Program) Release() error {
	return check("clReleaseProgram", C.tl_ReleaseProgram(p.q.d, p.p))
}

// Kernel is a kernel object.
type Kernel struct {
	q *Queue
	k C.cl_kernel
}

// Kernel creates the kernel called name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var code C.cl_int
	k := C.tl_CreateKernel(p.q.d, p.p, cname, &code)
	if err := check("clCreateKernel", code); err != nil {
		return nil, err
	}
	return &Kernel{q: p.q, k: k}, nil
}

// Release releases the kernel.
func (k *Kernel) Release() error { return check("clReleaseKernel", C.tl_ReleaseKernel(k.q.d, k.k)) }

// SetBytes sets argument i to the bytes of a scalar value.
func (k *Kernel) SetBytes(i int, v []byte) error {
	return check("clSetKernelArg", C.tl_SetKernelArg(k.q.d, k.k, C.cl_uint(i), C.size_t(len(v)), unsafe.Pointer(&v[0])))
}

// SetMem sets argument i to a buffer.
func (k *Kernel) SetMem(i int, m Mem) error {
	h := m.m // the argument value is the handle itself
	return check("clSetKernelArg", C.tl_SetKernelArg(k.q.d, k.k, C.cl_uint(i), C.size_t(unsafe.Sizeof(h)), unsafe.Pointer(&h)))
}

// SetLocal sets argument i to a local-memory allocation of size bytes.
func (k *Kernel) SetLocal(i int, size int) error {
	return check("clSetKernelArg", C.tl_SetKernelArg(k.q.d, k.k, C.cl_uint(i), C.size_t(size), nil))
}

// Enqueue launches the kernel over global work-items in groups of local
// (nil: the runtime chooses) and returns its event.
func (k *Kernel) Enqueue(global, local []int) (*Event, error) {
	g := sizes(global)
	var l *C.size_t
	if local != nil {
		ls := sizes(local)
		l = &ls[0]
	}
	var ev C.cl_event
	if err := check("clEnqueueNDRangeKernel", C.tl_EnqueueKernel(k.q.d, k.q.q, k.k, C.cl_uint(len(g)), &g[0], l, &ev)); err != nil {
		return nil, err
	}
	return &Event{q: k.q, e: ev}, nil
}

func sizes(v []int) []C.size_t {
	s := make([]C.size_t, len(v))
	for i, x := range v {
		s[i] = C.size_t(x)
	}
	return s
}

// Event is the event of one enqueued command.
type Event struct {
	q *Queue
	e C.cl_event
}

// Wait waits for the command. A command that ended abnormally returns an
// *Error whose Func is "command" and whose Code is its negative status.
func (e *Event) Wait() error {
	waitErr := check("clWaitForEvents", C.tl_WaitForEvent(e.q.d, e.e))
	var status C.cl_int
	if err := check("clGetEventInfo", C.tl_EventStatus(e.q.d, e.e, &status)); err != nil {
		return err
	}
	if status < 0 {
		return &Error{Func: "command", Code: int32(status)}
	}
	return waitErr
}

// Times waits for the command and returns its device start and end times in
// nanoseconds.
func (e *Event) Times() (start, end uint64, err error) {
	if err := e.Wait(); err != nil {
		return 0, 0, err
	}
	var s, t C.cl_ulong
	if err := check("clGetEventProfilingInfo", C.tl_EventTime(e.q.d, e.e, C.CL_PROFILING_COMMAND_START, &s)); err != nil {
		return 0, 0, err
	}
	if err := check("clGetEventProfilingInfo", C.tl_EventTime(e.q.d, e.e, C.CL_PROFILING_COMMAND_END, &t)); err != nil {
		return 0, 0, err
	}
	return uint64(s), uint64(t), nil
}

// Release releases the event.
func (e *Event) Release() error { return check("clReleaseEvent", C.tl_ReleaseEvent(e.q.d, e.e)) }

// cString cuts a C string's bytes at the first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
