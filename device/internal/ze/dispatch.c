// Wrappers that call Level Zero through a table of function pointers filled
// with dlsym; see ze.go.
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include "dispatch.h"

// TZ_ENTRIES lists every entry point tltune calls.
#define TZ_ENTRIES(X) \
	X(zeInit) X(zeDriverGet) X(zeDriverGetProperties) X(zeDriverGetExtensionProperties) \
	X(zeDeviceGet) X(zeDeviceGetProperties) X(zeDeviceGetComputeProperties) \
	X(zeDeviceGetModuleProperties) X(zeDeviceGetMemoryProperties) X(zeDeviceGetCacheProperties) \
	X(zeContextCreate) X(zeContextDestroy) X(zeCommandListCreateImmediate) X(zeCommandListDestroy) \
	X(zeMemAllocDevice) X(zeMemFree) X(zeCommandListAppendMemoryCopy) X(zeCommandListAppendMemoryFill) \
	X(zeModuleCreate) X(zeModuleDestroy) X(zeModuleGetNativeBinary) X(zeModuleBuildLogGetString) X(zeModuleBuildLogDestroy) \
	X(zeKernelCreate) X(zeKernelDestroy) X(zeKernelSetArgumentValue) X(zeKernelSetGroupSize) \
	X(zeKernelSuggestGroupSize) X(zeCommandListAppendLaunchKernel) X(zeEventPoolCreate) \
	X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy) X(zeEventHostSynchronize) \
	X(zeEventQueryKernelTimestamp)

// The declarations of ze_api.h give each pointer its exact type; nothing is
// linked against them.
static struct {
#define X(n) __typeof__(&n) n;
	TZ_ENTRIES(X)
#undef X
} t;

int tz_load(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) return 0;
#define X(n) t.n = (__typeof__(t.n))dlsym(h, #n);
	TZ_ENTRIES(X)
#undef X
	return 1;
}

#define TZ_CHECK(fn) if (!t.fn) return tz_missing

ze_result_t tz_init(void) {
	TZ_CHECK(zeInit);
	return t.zeInit(0);
}

ze_result_t tz_drivers(uint32_t *n, ze_driver_handle_t *out) {
	TZ_CHECK(zeDriverGet);
	return t.zeDriverGet(n, out);
}

ze_result_t tz_driver_version(ze_driver_handle_t drv, uint32_t *version) {
	TZ_CHECK(zeDriverGetProperties);
	ze_driver_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
	ze_result_t r = t.zeDriverGetProperties(drv, &p);
	*version = p.driverVersion;
	return r;
}

ze_result_t tz_driver_extensions(ze_driver_handle_t drv, uint32_t *n, ze_driver_extension_properties_t *out) {
	TZ_CHECK(zeDriverGetExtensionProperties);
	return t.zeDriverGetExtensionProperties(drv, n, out);
}

ze_result_t tz_devices(ze_driver_handle_t drv, uint32_t *n, ze_device_handle_t *out) {
	TZ_CHECK(zeDeviceGet);
	return t.zeDeviceGet(drv, n, out);
}

ze_result_t tz_device_properties(ze_device_handle_t dev, ze_device_properties_t *p) {
	TZ_CHECK(zeDeviceGetProperties);
	memset(p, 0, sizeof *p);
	// This structure type makes timerResolution nanoseconds per tick.
	p->stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
	return t.zeDeviceGetProperties(dev, p);
}

ze_result_t tz_compute_properties(ze_device_handle_t dev, ze_device_compute_properties_t *p) {
	TZ_CHECK(zeDeviceGetComputeProperties);
	memset(p, 0, sizeof *p);
	p->stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
	return t.zeDeviceGetComputeProperties(dev, p);
}

ze_result_t tz_module_properties(ze_device_handle_t dev, ze_device_module_properties_t *p) {
	TZ_CHECK(zeDeviceGetModuleProperties);
	memset(p, 0, sizeof *p);
	p->stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
	return t.zeDeviceGetModuleProperties(dev, p);
}

// tz_memory_size sums the device's memories (HBM stacks report one each).
ze_result_t tz_memory_size(ze_device_handle_t dev, uint64_t *total) {
	TZ_CHECK(zeDeviceGetMemoryProperties);
	ze_device_memory_properties_t p[8];
	uint32_t n = 8;
	for (uint32_t i = 0; i < n; i++) {
		memset(&p[i], 0, sizeof p[i]);
		p[i].stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
	}
	ze_result_t r = t.zeDeviceGetMemoryProperties(dev, &n, p);
	*total = 0;
	for (uint32_t i = 0; r == ZE_RESULT_SUCCESS && i < n && i < 8; i++) *total += p[i].totalSize;
	return r;
}

// tz_cache_size reports the largest cache the driver lists (the L2/LLC).
ze_result_t tz_cache_size(ze_device_handle_t dev, uint64_t *size) {
	TZ_CHECK(zeDeviceGetCacheProperties);
	ze_device_cache_properties_t p[4];
	uint32_t n = 4;
	for (uint32_t i = 0; i < n; i++) {
		memset(&p[i], 0, sizeof p[i]);
		p[i].stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES;
	}
	ze_result_t r = t.zeDeviceGetCacheProperties(dev, &n, p);
	*size = 0;
	for (uint32_t i = 0; r == ZE_RESULT_SUCCESS && i < n && i < 4; i++)
		if (p[i].cacheSize > *size) *size = p[i].cacheSize;
	return r;
}

ze_result_t tz_context_create(ze_driver_handle_t drv, ze_context_handle_t *ctx) {
	TZ_CHECK(zeContextCreate);
	ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	return t.zeContextCreate(drv, &desc, ctx);
}

ze_result_t tz_context_destroy(ze_context_handle_t ctx) {
	TZ_CHECK(zeContextDestroy);
	return t.zeContextDestroy(ctx);
}

// tz_list_create makes a synchronous immediate command list on the first
// queue group (the compute engine on every Intel GPU): each append returns
// when the device has finished, so no host-side fence is needed, and kernel
// timestamps still measure the device alone.
ze_result_t tz_list_create(ze_context_handle_t ctx, ze_device_handle_t dev, ze_command_list_handle_t *list) {
	TZ_CHECK(zeCommandListCreateImmediate);
	ze_command_queue_desc_t desc = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
		.ordinal = 0,
		.index = 0,
		.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
		.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
	};
	return t.zeCommandListCreateImmediate(ctx, dev, &desc, list);
}

ze_result_t tz_list_destroy(ze_command_list_handle_t list) {
	TZ_CHECK(zeCommandListDestroy);
	return t.zeCommandListDestroy(list);
}

ze_result_t tz_alloc(ze_context_handle_t ctx, ze_device_handle_t dev, size_t size, void **ptr) {
	TZ_CHECK(zeMemAllocDevice);
	ze_device_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	return t.zeMemAllocDevice(ctx, &desc, size, 64, dev, ptr);
}

ze_result_t tz_free(ze_context_handle_t ctx, void *ptr) {
	TZ_CHECK(zeMemFree);
	return t.zeMemFree(ctx, ptr);
}

ze_result_t tz_copy(ze_command_list_handle_t list, void *dst, const void *src, size_t size) {
	TZ_CHECK(zeCommandListAppendMemoryCopy);
	return t.zeCommandListAppendMemoryCopy(list, dst, src, size, NULL, 0, NULL);
}

ze_result_t tz_fill(ze_command_list_handle_t list, void *dst, const void *pattern, size_t patSize, size_t size) {
	TZ_CHECK(zeCommandListAppendMemoryFill);
	return t.zeCommandListAppendMemoryFill(list, dst, pattern, patSize, size, NULL, 0, NULL);
}

// tz_module_create builds a module from SPIR-V (native 0) or from a native
// binary and returns the build log in a malloc'd string (also on failure,
// which is when it matters).
ze_result_t tz_module_create(ze_context_handle_t ctx, ze_device_handle_t dev, const uint8_t *spv, size_t len,
		const char *flags, int native, ze_module_handle_t *mod, char **log) {
	TZ_CHECK(zeModuleCreate);
	ze_module_desc_t desc = {
		.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
		.format = native ? ZE_MODULE_FORMAT_NATIVE : ZE_MODULE_FORMAT_IL_SPIRV,
		.inputSize = len,
		.pInputModule = spv,
		.pBuildFlags = flags,
	};
	ze_module_build_log_handle_t blog = NULL;
	ze_result_t r = t.zeModuleCreate(ctx, dev, &desc, mod, &blog);
	*log = NULL;
	if (blog && t.zeModuleBuildLogGetString) {
		size_t size = 0;
		if (t.zeModuleBuildLogGetString(blog, &size, NULL) == ZE_RESULT_SUCCESS && size > 0) {
			*log = calloc(1, size + 1);
			if (*log) t.zeModuleBuildLogGetString(blog, &size, *log);
		}
	}
	if (blog && t.zeModuleBuildLogDestroy) t.zeModuleBuildLogDestroy(blog);
	return r;
}

// tz_module_native_binary reads a module's native binary: its size with
// bin NULL, else the bytes.
ze_result_t tz_module_native_binary(ze_module_handle_t mod, size_t *size, uint8_t *bin) {
	TZ_CHECK(zeModuleGetNativeBinary);
	return t.zeModuleGetNativeBinary(mod, size, bin);
}

ze_result_t tz_module_destroy(ze_module_handle_t mod) {
	TZ_CHECK(zeModuleDestroy);
	return t.zeModuleDestroy(mod);
}

ze_result_t tz_kernel_create(ze_module_handle_t mod, const char *name, ze_kernel_handle_t *k) {
	TZ_CHECK(zeKernelCreate);
	ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
	return t.zeKernelCreate(mod, &desc, k);
}

ze_result_t tz_kernel_destroy(ze_kernel_handle_t k) {
	TZ_CHECK(zeKernelDestroy);
	return t.zeKernelDestroy(k);
}

ze_result_t tz_kernel_arg(ze_kernel_handle_t k, uint32_t i, size_t size, const void *v) {
	TZ_CHECK(zeKernelSetArgumentValue);
	return t.zeKernelSetArgumentValue(k, i, size, v);
}

ze_result_t tz_suggest_group(ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t *out) {
	TZ_CHECK(zeKernelSuggestGroupSize);
	return t.zeKernelSuggestGroupSize(k, gx, gy, gz, &out[0], &out[1], &out[2]);
}

// tz_launch sets the group size and appends the launch with an event from a
// fresh one-event pool that records kernel timestamps.
ze_result_t tz_launch(ze_context_handle_t ctx, ze_command_list_handle_t list, ze_kernel_handle_t k,
		const uint32_t *group, const uint32_t *count, ze_event_pool_handle_t *pool, ze_event_handle_t *ev) {
	TZ_CHECK(zeKernelSetGroupSize);
	TZ_CHECK(zeEventPoolCreate);
	TZ_CHECK(zeEventCreate);
	TZ_CHECK(zeCommandListAppendLaunchKernel);
	*pool = NULL;
	*ev = NULL;
	ze_result_t r = t.zeKernelSetGroupSize(k, group[0], group[1], group[2]);
	if (r != ZE_RESULT_SUCCESS) return r;
	ze_event_pool_desc_t pdesc = {
		.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
		.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
		.count = 1,
	};
	r = t.zeEventPoolCreate(ctx, &pdesc, 0, NULL, pool);
	if (r != ZE_RESULT_SUCCESS) return r;
	ze_event_desc_t edesc = {
		.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
		.index = 0,
		.signal = ZE_EVENT_SCOPE_FLAG_HOST,
		.wait = ZE_EVENT_SCOPE_FLAG_HOST,
	};
	r = t.zeEventCreate(*pool, &edesc, ev);
	if (r != ZE_RESULT_SUCCESS) return r;
	ze_group_count_t groups = {count[0], count[1], count[2]};
	return t.zeCommandListAppendLaunchKernel(list, k, &groups, *ev, 0, NULL);
}

ze_result_t tz_event_wait(ze_event_handle_t ev) {
	TZ_CHECK(zeEventHostSynchronize);
	return t.zeEventHostSynchronize(ev, UINT64_MAX);
}

ze_result_t tz_event_timestamp(ze_event_handle_t ev, uint64_t *start, uint64_t *end) {
	TZ_CHECK(zeEventQueryKernelTimestamp);
	ze_kernel_timestamp_result_t ts = {0};
	ze_result_t r = t.zeEventQueryKernelTimestamp(ev, &ts);
	*start = ts.global.kernelStart;
	*end = ts.global.kernelEnd;
	return r;
}

void tz_event_destroy(ze_event_pool_handle_t pool, ze_event_handle_t ev) {
	if (ev && t.zeEventDestroy) t.zeEventDestroy(ev);
	if (pool && t.zeEventPoolDestroy) t.zeEventPoolDestroy(pool);
}
