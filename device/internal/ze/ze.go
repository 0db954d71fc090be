// Package ze is a thin cgo binding of the Level Zero API that never links
// against the loader: libze_loader.so.1 is opened with dlopen at run time and
// every entry point is called through a table of function pointers, so a
// machine without Level Zero runs every part of tltune that needs no device.
//
// Only what tltune needs is bound: drivers and devices with their
// properties, a context and a synchronous immediate command list per device,
// device memory, SPIR-V modules with their build log, kernels, launches and
// kernel timestamps. Results are returned as *Error carrying the raw
// ze_result_t; package device classifies them.
package ze

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "dispatch.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Result codes package device classifies.
const (
	Uninitialized      = C.ZE_RESULT_ERROR_UNINITIALIZED
	DeviceLost         = C.ZE_RESULT_ERROR_DEVICE_LOST
	OutOfHostMemory    = C.ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
	OutOfDeviceMemory  = C.ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
	ModuleBuildFailure = C.ZE_RESULT_ERROR_MODULE_BUILD_FAILURE
	ModuleLinkFailure  = C.ZE_RESULT_ERROR_MODULE_LINK_FAILURE
	DeviceNeedsReset   = C.ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET
	InvalidGroupSize   = C.ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION
	UnsupportedSize    = C.ZE_RESULT_ERROR_UNSUPPORTED_SIZE
	InvalidNativeBin   = C.ZE_RESULT_ERROR_INVALID_NATIVE_BINARY
	Missing            = C.tz_missing
)

// Error is a failed Level Zero call.
type Error struct {
	Func string
	Code uint32
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (0x%x)", e.Func, ResultName(e.Code), e.Code)
}

func check(fn string, r C.ze_result_t) error {
	if r == C.ZE_RESULT_SUCCESS {
		return nil
	}
	return &Error{Func: fn, Code: uint32(r)}
}

var loaded sync.Map // library name → bool

// Load opens the loader library; it reports false when it cannot be opened.
// The function table is process-wide: the first library that opens fills it.
func Load(lib string) bool {
	if ok, seen := loaded.Load(lib); seen {
		return ok.(bool)
	}
	name := C.CString(lib)
	defer C.free(unsafe.Pointer(name))
	ok := C.tz_load(name) != 0
	loaded.Store(lib, ok)
	return ok
}

// Init initialises the drivers (zeInit). Without a driver the loader answers
// ZE_RESULT_ERROR_UNINITIALIZED.
func Init() error { return check("zeInit", C.tz_init()) }

// Driver is one Level Zero driver.
type Driver struct{ h C.ze_driver_handle_t }

// Drivers lists the drivers.
func Drivers() ([]Driver, error) {
	var n C.uint32_t
	if err := check("zeDriverGet", C.tz_drivers(&n, nil)); err != nil || n == 0 {
		return nil, err
	}
	hs := make([]C.ze_driver_handle_t, n)
	if err := check("zeDriverGet", C.tz_drivers(&n, &hs[0])); err != nil {
		return nil, err
	}
	ds := make([]Driver, n)
	for i := range ds {
		ds[i] = Driver{hs[i]}
	}
	return ds, nil
}

// Version returns the driver's version number.
func (d Driver) Version() (uint32, error) {
	var v C.uint32_t
	err := check("zeDriverGetProperties", C.tz_driver_version(d.h, &v))
	return uint32(v), err
}

// Extensions lists the driver's extension names.
func (d Driver) Extensions() []string {
	var n C.uint32_t
	if C.tz_driver_extensions(d.h, &n, nil) != C.ZE_RESULT_SUCCESS || n == 0 {
		return nil
	}
	props := make([]C.ze_driver_extension_properties_t, n)
	if C.tz_driver_extensions(d.h, &n, &props[0]) != C.ZE_RESULT_SUCCESS {
		return nil
	}
	names := make([]string, 0, n)
	for i := range props[:n] {
		names = append(names, C.GoString(&props[i].name[0]))
	}
	return names
}

// Device is one device of a driver.
type Device struct {
	Driver Driver
	h      C.ze_device_handle_t
}

// Devices lists the driver's root devices.
func (d Driver) Devices() ([]Device, error) {
	var n C.uint32_t
	if err := check("zeDeviceGet", C.tz_devices(d.h, &n, nil)); err != nil || n == 0 {
		return nil, err
	}
	hs := make([]C.ze_device_handle_t, n)
	if err := check("zeDeviceGet", C.tz_devices(d.h, &n, &hs[0])); err != nil {
		return nil, err
	}
	devs := make([]Device, n)
	for i := range devs {
		devs[i] = Device{Driver: d, h: hs[i]}
	}
	return devs, nil
}

// Properties are the device properties tltune records.
type Properties struct {
	Name           string
	Type           string // "gpu", "cpu", "fpga", "mca", "vpu"
	VendorID       uint32
	ClockMHz       uint32
	MaxAllocBytes  uint64
	EUs            uint32 // slices × subslices per slice × EUs per subslice
	ThreadsPerEU   uint32
	SIMDWidth      uint32
	TimerNS        float64 // nanoseconds per timestamp tick
	TimestampBits  uint32  // valid bits of kernel timestamps
	MaxGroupSize   uint32
	MaxGroupSizes  [3]uint32
	LocalMemBytes  uint32
	SubgroupSizes  []uint32
	SPIRVVersion   string // highest SPIR-V version the device consumes
	FP16, FP64     bool
	GlobalMemBytes uint64
	CacheBytes     uint64
}

var deviceTypes = map[C.ze_device_type_t]string{
	C.ZE_DEVICE_TYPE_GPU: "gpu", C.ZE_DEVICE_TYPE_CPU: "cpu", C.ZE_DEVICE_TYPE_FPGA: "fpga",
	C.ZE_DEVICE_TYPE_MCA: "mca", C.ZE_DEVICE_TYPE_VPU: "vpu",
}

// Properties reads the device, compute, module, memory and cache
// properties. Memory and cache sizes are optional (0 when unreadable).
func (d Device) Properties() (Properties, error) {
	var dp C.ze_device_properties_t
	if err := check("zeDeviceGetProperties", C.tz_device_properties(d.h, &dp)); err != nil {
		return Properties{}, err
	}
	var cp C.ze_device_compute_properties_t
	if err := check("zeDeviceGetComputeProperties", C.tz_compute_properties(d.h, &cp)); err != nil {
		return Properties{}, err
	}
	var mp C.ze_device_module_properties_t
	if err := check("zeDeviceGetModuleProperties", C.tz_module_properties(d.h, &mp)); err != nil {
		return Properties{}, err
	}
	p := Properties{
		Name:          C.GoString(&dp.name[0]),
		Type:          deviceTypes[dp._type],
		VendorID:      uint32(dp.vendorId),
		ClockMHz:      uint32(dp.coreClockRate),
		MaxAllocBytes: uint64(dp.maxMemAllocSize),
		EUs:           uint32(dp.numSlices * dp.numSubslicesPerSlice * dp.numEUsPerSubslice),
		ThreadsPerEU:  uint32(dp.numThreadsPerEU),
		SIMDWidth:     uint32(dp.physicalEUSimdWidth),
		TimerNS:       float64(dp.timerResolution),
		TimestampBits: uint32(dp.kernelTimestampValidBits),
		MaxGroupSize:  uint32(cp.maxTotalGroupSize),
		MaxGroupSizes: [3]uint32{uint32(cp.maxGroupSizeX), uint32(cp.maxGroupSizeY), uint32(cp.maxGroupSizeZ)},
		LocalMemBytes: uint32(cp.maxSharedLocalMemory),
		SPIRVVersion:  fmt.Sprintf("%d.%d", mp.spirvVersionSupported>>16, mp.spirvVersionSupported&0xffff),
		FP16:          mp.flags&C.ZE_DEVICE_MODULE_FLAG_FP16 != 0,
		FP64:          mp.flags&C.ZE_DEVICE_MODULE_FLAG_FP64 != 0,
	}
	for _, s := range cp.subGroupSizes[:min(int(cp.numSubGroupSizes), len(cp.subGroupSizes))] {
		p.SubgroupSizes = append(p.SubgroupSizes, uint32(s))
	}
	var total, cache C.uint64_t
	if C.tz_memory_size(d.h, &total) == C.ZE_RESULT_SUCCESS {
		p.GlobalMemBytes = uint64(total)
	}
	if C.tz_cache_size(d.h, &cache) == C.ZE_RESULT_SUCCESS {
		p.CacheBytes = uint64(cache)
	}
	return p, nil
}
