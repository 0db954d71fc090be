package cl

/*
#include "dispatch.h"
#include <CL/cl_ext.h>
*/
import "C"

import (
	"encoding/binary"
	"strings"
)

// Property names of clGetPlatformInfo and clGetDeviceInfo that tltune reads.
const (
	PlatformName    = C.CL_PLATFORM_NAME
	PlatformVersion = C.CL_PLATFORM_VERSION

	DeviceType               = C.CL_DEVICE_TYPE
	DeviceName               = C.CL_DEVICE_NAME
	DeviceVendor             = C.CL_DEVICE_VENDOR
	DeviceVersion            = C.CL_DEVICE_VERSION
	DriverVersion            = C.CL_DRIVER_VERSION
	DeviceOpenCLCVersion     = C.CL_DEVICE_OPENCL_C_VERSION
	DeviceExtensions         = C.CL_DEVICE_EXTENSIONS
	DeviceILVersion          = C.CL_DEVICE_IL_VERSION
	DeviceComputeUnits       = C.CL_DEVICE_MAX_COMPUTE_UNITS
	DeviceClockMHz           = C.CL_DEVICE_MAX_CLOCK_FREQUENCY
	DeviceGlobalMemSize      = C.CL_DEVICE_GLOBAL_MEM_SIZE
	DeviceMaxMemAllocSize    = C.CL_DEVICE_MAX_MEM_ALLOC_SIZE
	DeviceLocalMemSize       = C.CL_DEVICE_LOCAL_MEM_SIZE
	DeviceCacheSize          = C.CL_DEVICE_GLOBAL_MEM_CACHE_SIZE
	DeviceMaxWorkGroupSize   = C.CL_DEVICE_MAX_WORK_GROUP_SIZE
	DeviceMaxWorkItemSizes   = C.CL_DEVICE_MAX_WORK_ITEM_SIZES
	DeviceDoubleFPConfig     = C.CL_DEVICE_DOUBLE_FP_CONFIG
	DeviceSubGroupSizesIntel = C.CL_DEVICE_SUB_GROUP_SIZES_INTEL
	DeviceWarpSizeNV         = C.CL_DEVICE_WARP_SIZE_NV

	TypeCPU         = C.CL_DEVICE_TYPE_CPU
	TypeGPU         = C.CL_DEVICE_TYPE_GPU
	TypeAccelerator = C.CL_DEVICE_TYPE_ACCELERATOR
)

// Querier is a platform or a device.
type Querier interface {
	Info(param uint32) ([]byte, error)
}

// String reads a string property; a property the driver does not know reads
// as the empty string, because optional properties are common.
func String(q Querier, param uint32) string {
	b, err := q.Info(param)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(cString(b))
}

// Uint reads a cl_uint, cl_ulong, size_t or cl_bitfield property (the width
// comes from the answer); an unknown property reads as 0.
func Uint(q Querier, param uint32) uint64 {
	b, err := q.Info(param)
	if err != nil {
		return 0
	}
	switch len(b) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(b))
	case 8:
		return binary.NativeEndian.Uint64(b)
	}
	return 0
}

// Sizes reads a size_t[] property; an unknown property reads as nil.
func Sizes(q Querier, param uint32) []uint64 {
	b, err := q.Info(param)
	if err != nil {
		return nil
	}
	var out []uint64
	for ; len(b) >= 8; b = b[8:] {
		out = append(out, binary.NativeEndian.Uint64(b))
	}
	return out
}
