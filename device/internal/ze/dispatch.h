// Wrappers that call Level Zero through a table of function pointers filled
// with dlsym; see ze.go.
#ifndef TLTUNE_ZE_DISPATCH_H
#define TLTUNE_ZE_DISPATCH_H

#include <stdint.h>
#include <level_zero/ze_api.h>

// tz_missing is returned when the loader lacks an entry point; it is not a
// Level Zero result code.
#define tz_missing ((ze_result_t)0x7ffffff0)

// tz_load opens the loader and fills the table; it returns 0 when the
// library cannot be opened.
int tz_load(const char *name);

ze_result_t tz_init(void);
ze_result_t tz_drivers(uint32_t *n, ze_driver_handle_t *out);
ze_result_t tz_driver_version(ze_driver_handle_t drv, uint32_t *version);
ze_result_t tz_driver_extensions(ze_driver_handle_t drv, uint32_t *n, ze_driver_extension_properties_t *out);
ze_result_t tz_devices(ze_driver_handle_t drv, uint32_t *n, ze_device_handle_t *out);
ze_result_t tz_device_properties(ze_device_handle_t dev, ze_device_properties_t *p);
ze_result_t tz_compute_properties(ze_device_handle_t dev, ze_device_compute_properties_t *p);
ze_result_t tz_module_properties(ze_device_handle_t dev, ze_device_module_properties_t *p);
ze_result_t tz_memory_size(ze_device_handle_t dev, uint64_t *total);
ze_result_t tz_cache_size(ze_device_handle_t dev, uint64_t *size);

ze_result_t tz_context_create(ze_driver_handle_t drv, ze_context_handle_t *ctx);
ze_result_t tz_context_destroy(ze_context_handle_t ctx);
ze_result_t tz_list_create(ze_context_handle_t ctx, ze_device_handle_t dev, ze_command_list_handle_t *list);
ze_result_t tz_list_destroy(ze_command_list_handle_t list);
ze_result_t tz_alloc(ze_context_handle_t ctx, ze_device_handle_t dev, size_t size, void **ptr);
ze_result_t tz_free(ze_context_handle_t ctx, void *ptr);
ze_result_t tz_copy(ze_command_list_handle_t list, void *dst, const void *src, size_t size);
ze_result_t tz_fill(ze_command_list_handle_t list, void *dst, const void *pattern, size_t patSize, size_t size);
ze_result_t tz_module_create(ze_context_handle_t ctx, ze_device_handle_t dev, const uint8_t *spv, size_t len,
	const char *flags, int native, ze_module_handle_t *mod, char **log);
ze_result_t tz_module_native_binary(ze_module_handle_t mod, size_t *size, uint8_t *bin);
ze_result_t tz_module_destroy(ze_module_handle_t mod);
ze_result_t tz_kernel_create(ze_module_handle_t mod, const char *name, ze_kernel_handle_t *k);
ze_result_t tz_kernel_destroy(ze_kernel_handle_t k);
ze_result_t tz_kernel_arg(ze_kernel_handle_t k, uint32_t i, size_t size, const void *v);
ze_result_t tz_suggest_group(ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t *out);
ze_result_t tz_launch(ze_context_handle_t ctx, ze_command_list_handle_t list, ze_kernel_handle_t k,
	const uint32_t *group, const uint32_t *count, ze_event_pool_handle_t *pool, ze_event_handle_t *ev);
ze_result_t tz_event_wait(ze_event_handle_t ev);
ze_result_t tz_event_timestamp(ze_event_handle_t ev, uint64_t *start, uint64_t *end);
void tz_event_destroy(ze_event_pool_handle_t pool, ze_event_handle_t ev);

#endif
