// Wrappers that call OpenCL through a cl_icd_dispatch table; see cl.go.
#ifndef TLTUNE_CL_DISPATCH_H
#define TLTUNE_CL_DISPATCH_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>

// tl_missing is returned by a wrapper whose entry point the library does not
// provide (an OpenCL 1.2 ICD has no clCreateProgramWithIL, for example). It is
// outside the range of OpenCL status codes.
#define tl_missing (-10000)

void *tl_dlopen(const char *name);
cl_icd_dispatch *tl_loader_table(void *h);
cl_int tl_vendor_platforms(void *h, cl_uint n, cl_platform_id *ids, cl_uint *num);
cl_icd_dispatch *tl_object_table(cl_platform_id p);

cl_int tl_GetPlatformIDs(cl_icd_dispatch *d, cl_uint n, cl_platform_id *ids, cl_uint *num);
cl_int tl_GetPlatformInfo(cl_icd_dispatch *d, cl_platform_id p, cl_uint param, size_t size, void *v, size_t *ret);
cl_int tl_GetDeviceIDs(cl_icd_dispatch *d, cl_platform_id p, cl_uint n, cl_device_id *ids, cl_uint *num);
cl_int tl_GetDeviceInfo(cl_icd_dispatch *d, cl_device_id dev, cl_uint param, size_t size, void *v, size_t *ret);
cl_context tl_CreateContext(cl_icd_dispatch *d, cl_platform_id p, cl_device_id dev, cl_int *err);
cl_int tl_ReleaseContext(cl_icd_dispatch *d, cl_context c);
cl_command_queue tl_CreateProfilingQueue(cl_icd_dispatch *d, cl_context c, cl_device_id dev, cl_int *err);
cl_int tl_ReleaseCommandQueue(cl_icd_dispatch *d, cl_command_queue q);
cl_int tl_Finish(cl_icd_dispatch *d, cl_command_queue q);
cl_mem tl_CreateBuffer(cl_icd_dispatch *d, cl_context c, size_t size, cl_int *err);
cl_int tl_ReleaseMemObject(cl_icd_dispatch *d, cl_mem m);
cl_int tl_WriteBuffer(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, size_t offset, size_t size, const void *src);
cl_int tl_ReadBuffer(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, size_t size, void *dst);
cl_int tl_CopyWithin(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, size_t srcOff, size_t dstOff, size_t size);
cl_int tl_FillBuffer(cl_icd_dispatch *d, cl_command_queue q, cl_mem m, const void *pat, size_t patSize, size_t size);
cl_program tl_ProgramWithSource(cl_icd_dispatch *d, cl_context c, const char *src, size_t len, cl_int *err);
cl_program tl_ProgramWithIL(cl_icd_dispatch *d, cl_context c, const void *il, size_t len, cl_int *err);
cl_program tl_ProgramWithBinary(cl_icd_dispatch *d, cl_context c, cl_device_id dev, const unsigned char *bin, size_t len, cl_int *err);
cl_int tl_BuildProgram(cl_icd_dispatch *d, cl_program p, cl_device_id dev, const char *opts);
cl_int tl_GetBuildLog(cl_icd_dispatch *d, cl_program p, cl_device_id dev, size_t size, void *v, size_t *ret);
cl_int tl_GetProgramBinary(cl_icd_dispatch *d, cl_program p, size_t size, unsigned char *bin, size_t *ret);
cl_int tl_ReleaseProgram(cl_icd_dispatch *d, cl_program p);
cl_kernel tl_CreateKernel(cl_icd_dispatch *d, cl_program p, const char *name, cl_int *err);
cl_int tl_ReleaseKernel(cl_icd_dispatch *d, cl_kernel k);
cl_int tl_SetKernelArg(cl_icd_dispatch *d, cl_kernel k, cl_uint i, size_t size, const void *v);
cl_int tl_EnqueueKernel(cl_icd_dispatch *d, cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local, cl_event *ev);
cl_int tl_WaitForEvent(cl_icd_dispatch *d, cl_event ev);
cl_int tl_EventStatus(cl_icd_dispatch *d, cl_event ev, cl_int *status);
cl_int tl_EventTime(cl_icd_dispatch *d, cl_event ev, cl_uint param, cl_ulong *t);
cl_int tl_ReleaseEvent(cl_icd_dispatch *d, cl_event ev);

#endif
