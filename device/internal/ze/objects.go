package ze

/*
#include <stdlib.h>
#include "dispatch.h"
*/
import "C"

import "unsafe"

// Queue is a context holding one device and a synchronous immediate command
// list on it.
type Queue struct {
	Device
	ctx  C.ze_context_handle_t
	list C.ze_command_list_handle_t
}

// NewQueue creates a context on the device's driver and an immediate
// command list on the device.
func NewQueue(d Device) (*Queue, error) {
	var ctx C.ze_context_handle_t
	if err := check("zeContextCreate", C.tz_context_create(d.Driver.h, &ctx)); err != nil {
		return nil, err
	}
	var list C.ze_command_list_handle_t
	if err := check("zeCommandListCreateImmediate", C.tz_list_create(ctx, d.h, &list)); err != nil {
		C.tz_context_destroy(ctx)
		return nil, err
	}
	return &Queue{Device: d, ctx: ctx, list: list}, nil
}

// Release destroys the command list and the context.
func (q *Queue) Release() error {
	err := check("zeCommandListDestroy", C.tz_list_destroy(q.list))
	if err2 := check("zeContextDestroy", C.tz_context_destroy(q.ctx)); err == nil {
		err = err2
	}
	return err
}

// Mem is a device allocation.
type Mem struct{ p unsafe.Pointer }

// Alloc allocates size bytes of device memory.
func (q *Queue) Alloc(size int64) (Mem, error) {
	var p unsafe.Pointer
	err := check("zeMemAllocDevice", C.tz_alloc(q.ctx, q.h, C.size_t(size), &p))
	return Mem{p}, err
}

// Free frees m.
func (q *Queue) Free(m Mem) error { return check("zeMemFree", C.tz_free(q.ctx, m.p)) }

// Write copies src to m from byte offset on; the list is synchronous, so
// the copy has finished on return and src may be reused.
func (q *Queue) Write(m Mem, offset int64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return check("zeCommandListAppendMemoryCopy", C.tz_copy(q.list, unsafe.Add(m.p, offset), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

// CopyWithin copies size bytes of m from srcOffset to dstOffset, regions
// that must not overlap; the list is synchronous.
func (q *Queue) CopyWithin(m Mem, srcOffset, dstOffset, size int64) error {
	return check("zeCommandListAppendMemoryCopy", C.tz_copy(q.list, unsafe.Add(m.p, dstOffset), unsafe.Add(m.p, srcOffset), C.size_t(size)))
}

// Read copies the start of m to dst.
func (q *Queue) Read(m Mem, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	return check("zeCommandListAppendMemoryCopy", C.tz_copy(q.list, unsafe.Pointer(&dst[0]), m.p, C.size_t(len(dst))))
}

// Fill repeats pattern over the first size bytes of m.
func (q *Queue) Fill(m Mem, pattern []byte, size int64) error {
	if len(pattern) == 0 {
		return &Error{Func: "zeCommandListAppendMemoryFill", Code: uint32(C.ZE_RESULT_ERROR_INVALID_SIZE)}
	}
	return check("zeCommandListAppendMemoryFill", C.tz_fill(q.list, m.p, unsafe.Pointer(&pattern[0]), C.size_t(len(pattern)), C.size_t(size)))
}

// Module is a built SPIR-V module.
type Module struct {
	q *Queue
	h C.ze_module_handle_t
}

// BuildModule builds a SPIR-V module with the given flags and returns it
// with the build log, which is also returned when the build fails.
func (q *Queue) BuildModule(spv []byte, flags string) (*Module, string, error) {
	return q.buildModule(spv, flags, 0)
}

// ModuleFromNative builds a module from the native binary NativeBinary
// returned on this device and driver.
func (q *Queue) ModuleFromNative(bin []byte, flags string) (*Module, string, error) {
	return q.buildModule(bin, flags, 1)
}

func (q *Queue) buildModule(spv []byte, flags string, native C.int) (*Module, string, error) {
	if len(spv) == 0 {
		return nil, "", &Error{Func: "zeModuleCreate", Code: uint32(C.ZE_RESULT_ERROR_INVALID_SIZE)}
	}
	cflags := C.CString(flags)
	defer C.free(unsafe.Pointer(cflags))
	var h C.ze_module_handle_t
	var clog *C.char
	r := C.tz_module_create(q.ctx, q.h, (*C.uint8_t)(unsafe.Pointer(&spv[0])), C.size_t(len(spv)), cflags, native, &h, &clog)
	log := ""
	if clog != nil {
		log = C.GoString(clog)
		C.free(unsafe.Pointer(clog))
	}
	if err := check("zeModuleCreate", r); err != nil {
		if h != nil {
			C.tz_module_destroy(h)
		}
		return nil, log, err
	}
	return &Module{q: q, h: h}, log, nil
}

// NativeBinary returns the module's binary for its device.
func (m *Module) NativeBinary() ([]byte, error) {
	var size C.size_t
	if err := check("zeModuleGetNativeBinary", C.tz_module_native_binary(m.h, &size, nil)); err != nil {
		return nil, err
	}
	bin := make([]byte, size)
	if size == 0 {
		return bin, nil
	}
	if err := check("zeModuleGetNativeBinary", C.tz_module_native_binary(m.h, &size, (*C.uint8_t)(unsafe.Pointer(&bin[0])))); err != nil {
		return nil, err
	}
	return bin[:size], nil
}

// Release destroys the module.
func (m *Module) Release() error { return check("zeModuleDestroy", C.tz_module_destroy(m.h)) }

// Kernel is a kernel of a module.
type Kernel struct {
	q *Queue
	h C.ze_kernel_handle_t
}

// Kernel creates the kernel called name.
func (m *Module) Kernel(name string) (*Kernel, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var h C.ze_kernel_handle_t
	if err := check("zeKernelCreate", C.tz_kernel_create(m.h, cname, &h)); err != nil {
		return nil, err
	}
	return &Kernel{q: m.q, h: h}, nil
}

// Release destroys the kernel.
func (k *Kernel) Release() error { return check("zeKernelDestroy", C.tz_kernel_destroy(k.h)) }

// SetBytes sets argument i to the bytes of a scalar value.
func (k *Kernel) SetBytes(i int, v []byte) error {
	return check("zeKernelSetArgumentValue", C.tz_kernel_arg(k.h, C.uint32_t(i), C.size_t(len(v)), unsafe.Pointer(&v[0])))
}

// SetMem sets argument i to a device allocation.
func (k *Kernel) SetMem(i int, m Mem) error {
	p := m.p // the argument value is the device pointer itself
	return check("zeKernelSetArgumentValue", C.tz_kernel_arg(k.h, C.uint32_t(i), C.size_t(unsafe.Sizeof(p)), unsafe.Pointer(&p)))
}

// SetLocal sets argument i to a shared-local-memory allocation of size bytes.
func (k *Kernel) SetLocal(i int, size int) error {
	return check("zeKernelSetArgumentValue", C.tz_kernel_arg(k.h, C.uint32_t(i), C.size_t(size), nil))
}

// SuggestGroup asks the driver for a group size for the global size.
func (k *Kernel) SuggestGroup(global [3]uint32) ([3]uint32, error) {
	var out [3]C.uint32_t
	err := check("zeKernelSuggestGroupSize", C.tz_suggest_group(k.h, C.uint32_t(global[0]), C.uint32_t(global[1]), C.uint32_t(global[2]), &out[0]))
	return [3]uint32{uint32(out[0]), uint32(out[1]), uint32(out[2])}, err
}

// Launch runs the kernel over count groups of group work-items. The list is
// synchronous: the kernel has finished when Launch returns.
func (k *Kernel) Launch(group, count [3]uint32) (*Event, error) {
	g := [3]C.uint32_t{C.uint32_t(group[0]), C.uint32_t(group[1]), C.uint32_t(group[2])}
	c := [3]C.uint32_t{C.uint32_t(count[0]), C.uint32_t(count[1]), C.uint32_t(count[2])}
	ev := &Event{}
	if err := check("zeCommandListAppendLaunchKernel", C.tz_launch(k.q.ctx, k.q.list, k.h, &g[0], &c[0], &ev.pool, &ev.h)); err != nil {
		ev.Release()
		return nil, err
	}
	return ev, nil
}

// Event is the timestamp event of one launch.
type Event struct {
	pool C.ze_event_pool_handle_t
	h    C.ze_event_handle_t
}

// Wait waits for the launch to complete.
func (e *Event) Wait() error { return check("zeEventHostSynchronize", C.tz_event_wait(e.h)) }

// Ticks waits and returns the kernel's start and end timestamps in device
// timer ticks (see Properties.TimerNS and TimestampBits).
func (e *Event) Ticks() (start, end uint64, err error) {
	if err := e.Wait(); err != nil {
		return 0, 0, err
	}
	var s, t C.uint64_t
	err = check("zeEventQueryKernelTimestamp", C.tz_event_timestamp(e.h, &s, &t))
	return uint64(s), uint64(t), err
}

// Release destroys the event and its pool.
func (e *Event) Release() error {
	C.tz_event_destroy(e.pool, e.h)
	return nil
}
