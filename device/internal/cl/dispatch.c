// Wrappers that call OpenCL through a cl_icd_dispatch table; see cl.go.
#include <stdlib.h>
#include <dlfcn.h>
#include "dispatch.h"

// TL_ENTRIES lists every entry point tltune calls; the loader's table is
// filled from it, so adding a call means one name here and one wrapper below.
#define TL_ENTRIES(X) \
	X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) \
	X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue) \
	X(clFinish) X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueWriteBuffer) \
	X(clEnqueueReadBuffer) X(clEnqueueFillBuffer) X(clEnqueueCopyBuffer) X(clCreateProgramWithSource) \
	X(clCreateProgramWithIL) X(clCreateProgramWithBinary) X(clBuildProgram) \
	X(clGetProgramBuildInfo) X(clGetProgramInfo) X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel) \
	X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clWaitForEvents) X(clGetEventInfo) \
	X(clGetEventProfilingInfo) X(clReleaseEvent)

void *tl_dlopen(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }

// tl_loader_table fills a table from the loader's exported symbols. It is
// allocated once per loaded library and never freed, like the library.
cl_icd_dispatch *tl_loader_table(void *h) {
	cl_icd_dispatch *d = calloc(1, sizeof *d);
	if (!d) return NULL;
#define X(n) d->n = (__typeof__(d->n))dlsym(h, #n);
	TL_ENTRIES(X)
#undef X
	return d;
}

// tl_vendor_platforms finds a vendor library's clIcdGetPlatformIDsKHR the
// way the ICD loader does, through clGetExtensionFunctionAddress (PoCL
// exports nothing else), else as a symbol, else the library's
// clGetPlatformIDs for a library that is not an ICD.
cl_int tl_vendor_platforms(void *h, cl_uint n, cl_platform_id *ids, cl_uint *num) {
	typedef cl_int (*get_t)(cl_uint, cl_platform_id *, cl_uint *);
	typedef void *(*ext_t)(const char *);
	get_t get = NULL;
	ext_t ext = (ext_t)dlsym(h, "clGetExtensionFunctionAddress");
	if (ext) get = (get_t)ext("clIcdGetPlatformIDsKHR");
	if (!get) get = (get_t)dlsym(h, "clIcdGetPlatformIDsKHR");
	if (!get) get = (get_t)dlsym(h, "clGetPlatformIDs");
	if (!get) return tl_missing;
	return get(n, ids, num);
}

// tl_object_table returns the dispatch table an ICD object carries first.
cl_icd_dispatch *tl_object_table(cl_platform_id p) { return *(cl_icd_dispatch **)p; }

#define TL_CHECK(fn) if (!d || !d->fn) return tl_missing
#define TL_CHECK_OBJ(fn) if (!d || !d->fn) { *err = tl_missing; return NULL; }

cl_int tl_GetPlatformIDs(cl_icd_dispatch *d, cl_uint n, cl_platform_id *ids, cl_uint *num) {
	TL_CHECK(clGetPlatformIDs);
	return d->clGetPlatformIDs(n, ids, num);
}

cl_int tl_GetPlatformInfo(cl_icd_dispatch *d, cl_platform_id p, cl_uint param, size_t size, void *v, size_t *ret) {
	TL_CHECK(clGetPlatformInfo);
	return d->clGetPlatformInfo(p, param, size, v, ret);
}

cl_int tl_GetDeviceIDs(cl_icd_dispatch *d, cl_platform_id p, cl_uint n, cl_device_id *ids, cl_uint *num) {
	TL_CHECK(clGetDeviceIDs);
	return d->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids, num);
}

cl_int tl_GetDeviceInfo(cl_icd_dispatch *d, cl_device_id dev, cl_uint param, size_t size, void *v, size_t *ret) {
	TL_CHECK(clGetDeviceInfo);
	return d->clGetDeviceInfo(dev, param, size, v, ret);
}

cl_context tl_CreateContext(cl_icd_dispatch *d, cl_platform_id p, cl_device_id dev, cl_int *err) {
	TL_CHECK_OBJ(clCreateContext);
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
	return d->clCreateContext(props, 1, &dev, NULL, NULL, err);
}

cl_int tl_ReleaseContext(cl_icd_dispatch *d, cl_context c) {
	TL_CHECK(clReleaseContext);
	return d->clReleaseContext(c);
}

// tl_CreateProfilingQueue uses the OpenCL 1.x call, which every version
// provides, so that 1.2 devices and 3.0 devices take the same path.
cl_command_queue tl_CreateProfilingQueue(cl_icd_dispatch *d, cl_context c, cl_device_id dev, cl_int *err) {
	TL_CHECK_OBJ(clCreateCommandQueue);
	return d->clCreateCommandQueue(c, dev, CL_QUEUE_PROFILING_ENABLE, err);
}

cl_int tl_ReleaseCommandQueue(cl_icd_dispatch *d, cl_command_queue q) {
	TL_CHECK(clReleaseCommandQueue);
	return d->clReleaseCommandQueue(q);
}

cl_int tl_Finish(cl_icd_dispatch *d, cl_command_queue q) {
	TL_CHECK(clFinish);
	return d->clFinish(q);
}

cl_mem tl_CreateBuffer(cl_icd_dispatch *d, cl_context c, size_t size, cl_int *err) {
	TL_CHECK_OBJ(clCreateBuffer);
	return d->clCreateBuffer(c, CL_MEM_READ_WRITE, size, NULL, err);
}

cl_int tl_ReleaseMemObject(cl_icd_dispatch *d, cl_mem m) {
	TL_CHECK(clReleaseMemObject);
	return d->clReleaseMemObject(m);
}

cl_int tl_WriteBuffer(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, size_t offset, size_t size, const void *src) {
	TL_CHECK(clEnqueueWriteBuffer);
	return d->clEnqueueWriteBuffer(q, m, CL_TRUE, offset, size, src, 0, NULL, NULL);
}

cl_int tl_ReadBuffer(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, size_t size, void *dst) {
	TL_CHECK(clEnqueueReadBuffer);
	return d->clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, dst, 0, NULL, NULL);
}

// tl_CopyWithin enqueues a copy of size bytes of m from srcOff to dstOff,
// regions that must not overlap; it does not wait.
cl_int tl_CopyWithin(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, size_t srcOff, size_t dstOff, size_t size) {
	TL_CHECK(clEnqueueCopyBuffer);
	return d->clEnqueueCopyBuffer(q, m, m, srcOff, dstOff, size, 0, NULL, NULL);
}

// tl_FillBuffer fills the whole buffer and waits, so it returns like the
// blocking read and write.
cl_int tl_FillBuffer(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, const void *pat, size_t patSize, size_t size) {
	TL_CHECK(clEnqueueFillBuffer);
	cl_int err = d->clEnqueueFillBuffer(q, m, pat, patSize, 0, size, 0, NULL, NULL);
	if (err != CL_SUCCESS) return err;
	return tl_Finish(d, q);
}

cl_program tl_ProgramWithSource(cl_icd_dispatch *d, cl_context c, const char *src, size_t len, cl_int *err) {
	TL_CHECK_OBJ(clCreateProgramWithSource);
	return d->clCreateProgramWithSource(c, 1, &src, &len, err);
}

cl_program tl_ProgramWithIL(cl_icd_dispatch *d, cl_context c, const void *il, size_t len, cl_int *err) {
	TL_CHECK_OBJ(clCreateProgramWithIL);
	return d->clCreateProgramWithIL(c, il, len, err);
}

// tl_ProgramWithBinary folds the per-device binary status into err, so a
// rejected binary reads like any other failure.
cl_program tl_ProgramWithBinary(cl_icd_dispatch *d, cl_context c, cl_device_id dev, const unsigned char *bin, size_t len, cl_int *err) {
	TL_CHECK_OBJ(clCreateProgramWithBinary);
	cl_int status = CL_SUCCESS;
	cl_program p = d->clCreateProgramWithBinary(c, 1, &dev, &len, &bin, &status, err);
	if (*err == CL_SUCCESS && status != CL_SUCCESS) *err = status;
	return p;
}

cl_int tl_BuildProgram(cl_icd_dispatch *d, cl_program p, cl_device_id dev, const char *opts) {
	TL_CHECK(clBuildProgram);
	return d->clBuildProgram(p, 1, &dev, opts, NULL, NULL);
}

cl_int tl_GetBuildLog(cl_icd_dispatch *d, cl_program p, cl_device_id dev, size_t size, void *v, size_t *ret) {
	TL_CHECK(clGetProgramBuildInfo);
	return d->clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, size, v, ret);
}

// tl_GetProgramBinary reads the binary of a program built for one device:
// its size with bin NULL, else the bytes (size must be that size).
cl_int tl_GetProgramBinary(cl_icd_dispatch *d, cl_program p, size_t size, unsigned char *bin, size_t *ret) {
	TL_CHECK(clGetProgramInfo);
	if (bin == NULL) {
		return d->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size_t), ret, NULL);
	}
	return d->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(unsigned char *), &bin, NULL);
}

cl_int tl_ReleaseProgram(cl_icd_dispatch *d, cl_program p) {
	TL_CHECK(clReleaseProgram);
	return d->clReleaseProgram(p);
}

cl_kernel tl_CreateKernel(cl_icd_dispatch *d, cl_program p, const char *name, cl_int *err) {
	TL_CHECK_OBJ(clCreateKernel);
	return d->clCreateKernel(p, name, err);
}

cl_int tl_ReleaseKernel(cl_icd_dispatch *d, cl_kernel k) {
	TL_CHECK(clReleaseKernel);
	return d->clReleaseKernel(k);
}

cl_int tl_SetKernelArg(cl_icd_dispatch *d, cl_kernel k, cl_uint i, size_t size, const void *v) {
	TL_CHECK(clSetKernelArg);
	return d->clSetKernelArg(k, i, size, v);
}

cl_int tl_EnqueueKernel(cl_icd_dispatch *d, cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local, cl_event *ev) {
	TL_CHECK(clEnqueueNDRangeKernel);
	return d->clEnqueueNDRangeKernel(q, k, dims, NULL, global, local, 0, NULL, ev);
}

cl_int tl_WaitForEvent(cl_icd_dispatch *d, cl_event ev) {
	TL_CHECK(clWaitForEvents);
	return d->clWaitForEvents(1, &ev);
}

cl_int tl_EventStatus(cl_icd_dispatch *d, cl_event ev, cl_int *status) {
	TL_CHECK(clGetEventInfo);
	return d->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *status, status, NULL);
}

cl_int tl_EventTime(cl_icd_dispatch *d, cl_event ev, cl_uint param, cl_ulong *t) {
	TL_CHECK(clGetEventProfilingInfo);
	return d->clGetEventProfilingInfo(ev, param, sizeof *t, t, NULL);
}

cl_int tl_ReleaseEvent(cl_icd_dispatch *d, cl_event ev) {
	TL_CHECK(clReleaseEvent);
	return d->clReleaseEvent(ev);
}
