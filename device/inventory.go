package device

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The libraries tltune opens. They are variables so that tests can point
// them at libraries that do not exist.
var (
	openCLLoader  = "libOpenCL.so.1"
	openCLVendors = []string{"libnvidia-opencl.so.1", "libpocl.so.2"}
	zeLoader      = "libze_loader.so.1"
)

// Debian packages that provide the runtimes, for MissingError.
const (
	openCLPackage   = "ocl-icd-libopencl1 (and a driver, e.g. pocl-opencl-icd)"
	openCLDriverPkg = "pocl-opencl-icd"
	zePackage       = "libze1"
	zeDriverPackage = "intel-level-zero-gpu"
)

// Status says what one runtime offers on this machine: Err is nil when it
// has devices, else a *MissingError saying what is missing.
type Status struct {
	Runtime string   `json:"runtime"`
	Library string   `json:"library"` // the library it was found through, or looked for
	Devices int      `json:"devices"`
	Note    string   `json:"note"` // one line for people, e.g. "loader found, no driver or device"
	Err     error    `json:"-"`
	Extra   []string `json:"extra_libraries,omitempty"` // vendor libraries opened directly
}

// Install returns the Debian package that would make the runtime usable,
// or "" when it has devices.
func (s Status) Install() string {
	var me *MissingError
	if errors.As(s.Err, &me) {
		return me.Package
	}
	return ""
}

// Inventory is every device of every runtime, in the order of the combined
// index, and one Status per runtime.
type Inventory struct {
	Devices  []Info   `json:"devices"`
	Runtimes []Status `json:"runtimes"`
}

var (
	inventoryOnce sync.Once
	inventory     Inventory
)

// Enumerate lists the devices of every runtime. Runtimes are probed once per
// process; a missing runtime is a Status, not an error.
func Enumerate() Inventory {
	inventoryOnce.Do(func() { inventory = enumerate() })
	return inventory
}

func enumerate() Inventory {
	var inv Inventory
	for _, probe := range []func() ([]Info, Status){probeOpenCL, probeLevelZero} {
		devs, st := probe()
		for _, d := range devs {
			d.Index = len(inv.Devices)
			inv.Devices = append(inv.Devices, d)
		}
		inv.Runtimes = append(inv.Runtimes, st)
	}
	return inv
}

// Reference is the device spec that selects the reference interpreter.
const Reference = "ref"

// Open opens the device a spec names. The one syntax every command accepts:
//
//	""          the first GPU, else the first CPU, else the first device
//	N           index N of the combined list (`tltune devices`)
//	opencl:N    the N-th OpenCL device
//	ze:N        the N-th Level Zero device
//	ref         the reference interpreter: Open returns ErrReference
//	TEXT        the first device whose name contains TEXT (any case)
func Open(spec string) (Device, error) {
	info, err := Select(Enumerate(), spec)
	if err != nil {
		return nil, err
	}
	return info.Open()
}

// Open opens the device. Only an Info from Enumerate can be opened.
func (i Info) Open() (Device, error) {
	if i.open == nil {
		return nil, fmt.Errorf("device %q was not found on this machine; run 'tltune devices'", i.Name)
	}
	return i.open(i)
}

// Select picks the device a spec names from inv (see Open).
func Select(inv Inventory, spec string) (*Info, error) {
	spec = strings.TrimSpace(spec)
	if spec == Reference {
		return nil, ErrReference
	}
	if len(inv.Devices) == 0 {
		return nil, noDevice(inv)
	}
	if spec == "" {
		return defaultDevice(inv.Devices), nil
	}
	if i := match(inv.Devices, spec); i >= 0 {
		return &inv.Devices[i], nil
	}
	return nil, fmt.Errorf("%w %q; run 'tltune devices' to see the devices and their indices", ErrNoMatch, spec)
}

// All names every device of one kind in a spec for SelectAll: "all" (the
// kind of the default device), "all:gpu", "all:cpu".
const All = "all"

// SelectAll picks the devices a spec names: one spec as Select takes it, a
// comma-separated list of them, or "all" with an optional ":TYPE" (gpu,
// cpu, accelerator): every device of that type, by default the type of the
// device Select("") picks. A device named twice is an error.
func SelectAll(inv Inventory, spec string) ([]*Info, error) {
	spec = strings.TrimSpace(spec)
	if kind, ok := strings.CutPrefix(strings.ToLower(spec), All); ok && (kind == "" || kind[0] == ':') {
		return selectKind(inv, strings.TrimPrefix(kind, ":"))
	}
	var out []*Info
	for _, one := range strings.Split(spec, ",") {
		info, err := Select(inv, one)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, info) {
			return nil, specError(fmt.Sprintf("device %s (%s) is named twice in %q", info.ID, info.Name, spec))
		}
		out = append(out, info)
	}
	return out, nil
}

// selectKind returns every device of type kind ("": the default device's).
func selectKind(inv Inventory, kind string) ([]*Info, error) {
	if len(inv.Devices) == 0 {
		return nil, noDevice(inv)
	}
	if kind == "" {
		kind = defaultDevice(inv.Devices).Type
	}
	var out []*Info
	for i := range inv.Devices {
		if strings.EqualFold(inv.Devices[i].Type, kind) {
			out = append(out, &inv.Devices[i])
		}
	}
	if len(out) == 0 {
		return nil, specError(fmt.Sprintf("no device of type %q; run 'tltune devices' to see the devices and their types", kind))
	}
	return out, nil
}

func defaultDevice(devs []Info) *Info {
	for _, kind := range []string{"gpu", "cpu"} {
		for i := range devs {
			if devs[i].Type == kind {
				return &devs[i]
			}
		}
	}
	return &devs[0]
}

// ByPosition reports whether spec names a device by its place on this
// machine (an index of `tltune devices`, opencl:N, ze:N) rather than by
// name: only a name can also select devices that are not here, such as
// those of stored results, and "" (the default device) is neither.
func ByPosition(spec string) bool {
	spec = strings.TrimSpace(spec)
	if _, err := strconv.Atoi(spec); err == nil {
		return true
	}
	rt, _, ok := strings.Cut(spec, ":")
	return ok && runtimeIDs[strings.ToLower(rt)] != ""
}

// match returns the index of the device spec names, or -1.
func match(devs []Info, spec string) int {
	if n, err := strconv.Atoi(spec); err == nil {
		if n >= 0 && n < len(devs) {
			return n
		}
		return -1
	}
	if rt, n, ok := strings.Cut(spec, ":"); ok {
		id := runtimeIDs[strings.ToLower(rt)]
		if id != "" {
			for i := range devs {
				if devs[i].ID == id+":"+n {
					return i
				}
			}
			return -1
		}
	}
	lower := strings.ToLower(spec)
	for i := range devs {
		if strings.Contains(strings.ToLower(devs[i].Name), lower) {
			return i
		}
	}
	return -1
}

// runtimeIDs maps the runtime prefixes of a spec to the prefix of Info.ID.
var runtimeIDs = map[string]string{"opencl": "opencl", "cl": "opencl", "ze": "ze", "levelzero": "ze"}

// noDevice explains an empty inventory with the runtimes' own reasons.
func noDevice(inv Inventory) error {
	var reasons []string
	var first error
	for _, st := range inv.Runtimes {
		if st.Err != nil {
			reasons = append(reasons, st.Err.Error())
			if first == nil {
				first = st.Err
			}
		}
	}
	return &noDeviceError{msg: "no device: " + strings.Join(reasons, "; "), err: first}
}

type noDeviceError struct {
	msg string
	err error
}

func (e *noDeviceError) Error() string { return e.msg }
func (e *noDeviceError) Unwrap() error { return e.err }
