// Package cl is a thin cgo binding of the OpenCL API that never links
// against an OpenCL library: the ICD loader (or a vendor library) is opened
// with dlopen at run time and every entry point is called through a dispatch
// table of function pointers. A machine without any OpenCL library can
// therefore run every part of tltune that needs no device.
//
// The table is the Khronos ICD dispatch structure (cl_icd_dispatch). Through
// the loader it is filled with dlsym; for a vendor library opened directly it
// is the table that every ICD object carries as its first member, which is
// how the loader itself forwards calls.
//
// The package knows nothing about tltune: it returns raw handles and *Error
// values carrying the OpenCL status code; package device classifies them.
package cl

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "dispatch.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Missing is the status a call returns when the library lacks the entry
// point; it is outside the range OpenCL uses.
const Missing = C.tl_missing

// Error is a failed OpenCL call.
type Error struct {
	Func string // the OpenCL function, e.g. "clBuildProgram"
	Code int32  // the OpenCL status code
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Func, StatusName(e.Code), e.Code)
}

func check(fn string, code C.cl_int) error {
	if code == C.CL_SUCCESS {
		return nil
	}
	return &Error{Func: fn, Code: int32(code)}
}

// Table is the dispatch table that every call goes through.
type Table struct{ d *C.cl_icd_dispatch }

// Platform is one OpenCL platform and the table that reaches it.
type Platform struct {
	Table
	ID      C.cl_platform_id
	Library string // the library it was found through
}

// Device is one device of a platform.
type Device struct {
	Table
	Platform C.cl_platform_id
	ID       C.cl_device_id
}

// Discovery is the result of looking for OpenCL libraries and platforms.
type Discovery struct {
	Loader      string // the loader's file name
	LoaderFound bool
	Platforms   []Platform
	// Vendors are the vendor libraries that were opened directly and added
	// platforms the loader did not list.
	Vendors []string
}

// Discover opens the ICD loader and lists its platforms, then opens each
// vendor library directly and adds the platforms the loader did not list.
// The second step is what makes a GPU machine without an .icd file work.
// Loader and vendor libraries that cannot be opened are not errors: the
// caller decides from the Discovery whether OpenCL is usable.
func Discover(loader string, vendors []string) Discovery {
	disc := Discovery{Loader: loader}
	if h := open(loader); h != nil {
		disc.LoaderFound = true
		t := Table{C.tl_loader_table(h)}
		disc.Platforms = t.platforms(loader)
	}
	for _, lib := range vendors {
		h := open(lib)
		if h == nil {
			continue
		}
		added := false
		for _, p := range vendorPlatforms(h, lib) {
			if !disc.has(p) {
				disc.Platforms = append(disc.Platforms, p)
				added = true
			}
		}
		if added {
			disc.Vendors = append(disc.Vendors, lib)
		}
	}
	return disc
}

// has reports whether a platform reached through the same vendor dispatch
// table is already listed: the loader hands out the vendor's own objects, so
// a vendor library the loader already opened shows the same table.
func (disc *Discovery) has(p Platform) bool {
	for _, q := range disc.Platforms {
		if q.ID == p.ID || C.tl_object_table(q.ID) == p.d {
			return true
		}
	}
	return false
}

func open(lib string) unsafe.Pointer {
	name := C.CString(lib)
	defer C.free(unsafe.Pointer(name))
	return C.tl_dlopen(name)
}

func (t Table) platforms(lib string) []Platform {
	var n C.cl_uint
	if C.tl_GetPlatformIDs(t.d, 0, nil, &n) != C.CL_SUCCESS || n == 0 {
		return nil
	}
	ids := make([]C.cl_platform_id, n)
	if C.tl_GetPlatformIDs(t.d, n, &ids[0], &n) != C.CL_SUCCESS {
		return nil
	}
	ps := make([]Platform, 0, n)
	for _, id := range ids[:n] {
		ps = append(ps, Platform{Table: t, ID: id, Library: lib})
	}
	return ps
}

func vendorPlatforms(h unsafe.Pointer, lib string) []Platform {
	var n C.cl_uint
	if C.tl_vendor_platforms(h, 0, nil, &n) != C.CL_SUCCESS || n == 0 {
		return nil
	}
	ids := make([]C.cl_platform_id, n)
	if C.tl_vendor_platforms(h, n, &ids[0], &n) != C.CL_SUCCESS {
		return nil
	}
	ps := make([]Platform, 0, n)
	for _, id := range ids[:n] {
		ps = append(ps, Platform{Table: Table{C.tl_object_table(id)}, ID: id, Library: lib})
	}
	return ps
}

// Devices lists every device of the platform.
func (p Platform) Devices() ([]Device, error) {
	var n C.cl_uint
	code := C.tl_GetDeviceIDs(p.d, p.ID, 0, nil, &n)
	if code == C.CL_DEVICE_NOT_FOUND || (code == C.CL_SUCCESS && n == 0) {
		return nil, nil
	}
	if err := check("clGetDeviceIDs", code); err != nil {
		return nil, err
	}
	ids := make([]C.cl_device_id, n)
	if err := check("clGetDeviceIDs", C.tl_GetDeviceIDs(p.d, p.ID, n, &ids[0], &n)); err != nil {
		return nil, err
	}
	devs := make([]Device, 0, n)
	for _, id := range ids[:n] {
		devs = append(devs, Device{Table: p.Table, Platform: p.ID, ID: id})
	}
	return devs, nil
}

// Info returns a platform property as raw bytes.
func (p Platform) Info(param uint32) ([]byte, error) {
	return query("clGetPlatformInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.tl_GetPlatformInfo(p.d, p.ID, C.cl_uint(param), size, v, ret)
	})
}

// Info returns a device property as raw bytes.
func (d Device) Info(param uint32) ([]byte, error) {
	return query("clGetDeviceInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.tl_GetDeviceInfo(d.d, d.ID, C.cl_uint(param), size, v, ret)
	})
}

// query runs the two-step OpenCL size-then-value protocol of the *Info calls.
func query(fn string, get func(C.size_t, unsafe.Pointer, *C.size_t) C.cl_int) ([]byte, error) {
	var size C.size_t
	if err := check(fn, get(0, nil, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	buf := C.malloc(size)
	defer C.free(buf)
	if err := check(fn, get(size, buf, nil)); err != nil {
		return nil, err
	}
	return C.GoBytes(buf, C.int(size)), nil
}
