package device

import (
	"errors"
	"fmt"
	"strings"

	"tltune/device/internal/cl"
	"tltune/device/internal/ze"
)

// Kinds of failure, for errors.Is. The tuner maps them to its outcomes:
// ErrBuild → compile_error, ErrWorkGroupSize → launch_error,
// ErrOutOfResources → resource_error, ErrDeviceLost → device_lost.
var (
	ErrBuild          = errors.New("program build failed")
	ErrWorkGroupSize  = errors.New("invalid work-group size")
	ErrOutOfResources = errors.New("out of resources")
	ErrDeviceLost     = errors.New("device lost")
	ErrRuntimeMissing = errors.New("runtime missing")
	ErrUnsupported    = errors.New("not supported by the device")
	// ErrNoMatch is wrapped by Select when no device matches the spec.
	ErrNoMatch = errors.New("no device matches")
	// ErrSpec is what SelectAll's errors in a list of devices are: a
	// device named twice, a type no device has.
	ErrSpec = errors.New("invalid device list")
	// ErrReference is what Open returns for the spec "ref": the reference
	// interpreter is selected like a device but is not one.
	ErrReference = errors.New("the reference interpreter is not a device")
)

// specError is an error in a spec of several devices; it is ErrSpec, and
// its message says what is wrong.
type specError string

func (e specError) Error() string        { return string(e) }
func (e specError) Is(target error) bool { return target == ErrSpec }

// Error is a failed runtime call. Kind is one of the Err* kinds, or nil
// for failures no caller needs to tell apart (invalid arguments and the like).
type Error struct {
	Runtime string // OpenCL or LevelZero
	Call    string // the runtime function, e.g. "clEnqueueNDRangeKernel"
	Code    int64  // the runtime's status code
	Status  string // its name, e.g. "CL_INVALID_WORK_GROUP_SIZE"
	Kind    error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Call, e.Status)
	if e.Kind != nil {
		msg = fmt.Sprintf("%s (%s: %s)", e.Kind, e.Call, e.Status)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Kind }

// BuildError is a program that did not build; Log holds the compiler's
// messages. errors.Is(err, ErrBuild) holds for it.
type BuildError struct {
	Log string
	Err error // the runtime's error, or the tool's for programs built by tools
}

func (e *BuildError) Error() string {
	msg := "program build failed"
	if line := firstErrorLine(e.Log); line != "" {
		msg += ": " + line
	}
	return msg
}

func (e *BuildError) Unwrap() []error { return []error{ErrBuild, e.Err} }

// firstErrorLine picks the line of a build log that says what is wrong, so
// the one-line message is useful; the whole log stays in BuildError.Log.
func firstErrorLine(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// MissingError says that a runtime library cannot be loaded and which Debian
// package provides it. errors.Is(err, ErrRuntimeMissing) holds for it.
type MissingError struct {
	Runtime string // OpenCL or LevelZero
	Library string
	Package string
	Detail  string // e.g. "no platform" when the library loads but has nothing
}

func (e *MissingError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s runtime: %s (install a driver, e.g. the Debian package %s)", e.Runtime, e.Detail, e.Package)
	}
	return fmt.Sprintf("%s runtime missing: %s cannot be loaded (install the Debian package %s)", e.Runtime, e.Library, e.Package)
}

func (e *MissingError) Unwrap() error { return ErrRuntimeMissing }

// clKinds classifies OpenCL status codes. A kernel that the driver aborts
// is reported through its event (Code < 0 from the "command" pseudo-call)
// and is classified in classifyCL, not here.
var clKinds = map[int32]error{
	-11:        ErrBuild,          // CL_BUILD_PROGRAM_FAILURE
	-15:        ErrBuild,          // CL_COMPILE_PROGRAM_FAILURE
	-17:        ErrBuild,          // CL_LINK_PROGRAM_FAILURE
	-42:        ErrBuild,          // CL_INVALID_BINARY: the driver rejects the SPIR/IL module
	-45:        ErrBuild,          // CL_INVALID_PROGRAM_EXECUTABLE
	-54:        ErrWorkGroupSize,  // CL_INVALID_WORK_GROUP_SIZE
	-55:        ErrWorkGroupSize,  // CL_INVALID_WORK_ITEM_SIZE
	-4:         ErrOutOfResources, // CL_MEM_OBJECT_ALLOCATION_FAILURE
	-5:         ErrOutOfResources, // CL_OUT_OF_RESOURCES
	-6:         ErrOutOfResources, // CL_OUT_OF_HOST_MEMORY
	-61:        ErrOutOfResources, // CL_INVALID_BUFFER_SIZE: larger than the device allows
	-2:         ErrDeviceLost,     // CL_DEVICE_NOT_AVAILABLE
	-14:        ErrDeviceLost,     // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
	cl.Missing: ErrUnsupported,
}

// classifyCL turns an error of package cl into an *Error with its kind.
// Failures reported while waiting for a launched kernel mean the kernel did
// not complete (NVIDIA reports a faulting kernel as CL_OUT_OF_RESOURCES at the
// next wait, and the context is unusable afterwards), so they are
// ErrDeviceLost whatever the code.
func classifyCL(err error) error {
	var ce *cl.Error
	if !errors.As(err, &ce) {
		return err
	}
	e := &Error{Runtime: OpenCL, Call: ce.Func, Code: int64(ce.Code), Status: cl.StatusName(ce.Code), Kind: clKinds[ce.Code]}
	if ce.Func == "command" || ce.Func == "clWaitForEvents" {
		e.Kind = ErrDeviceLost
	}
	return e
}

// zeKinds classifies Level Zero result codes.
var zeKinds = map[uint32]error{
	ze.ModuleBuildFailure: ErrBuild,
	ze.ModuleLinkFailure:  ErrBuild,
	ze.InvalidNativeBin:   ErrBuild,
	ze.InvalidGroupSize:   ErrWorkGroupSize,
	ze.UnsupportedSize:    ErrOutOfResources,
	ze.OutOfHostMemory:    ErrOutOfResources,
	ze.OutOfDeviceMemory:  ErrOutOfResources,
	ze.DeviceLost:         ErrDeviceLost,
	ze.DeviceNeedsReset:   ErrDeviceLost,
	ze.Missing:            ErrUnsupported,
}

// classifyZE turns an error of package ze into an *Error with its kind.
func classifyZE(err error) error {
	var zerr *ze.Error
	if !errors.As(err, &zerr) {
		return err
	}
	return &Error{Runtime: LevelZero, Call: zerr.Func, Code: int64(zerr.Code), Status: ze.ResultName(zerr.Code), Kind: zeKinds[zerr.Code]}
}
