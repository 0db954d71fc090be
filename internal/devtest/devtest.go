// Package devtest finds the OpenCL devices that tests run kernels on.
//
// CI installs PoCL, so there (CI=true) a missing device fails the test:
// a kernel test must never pass in CI by skipping. Elsewhere the test is
// skipped with the reason, so a machine without OpenCL still runs the rest.
package devtest

import (
	"os"
	"strings"
	"testing"

	"tltune/device"
)

// OpenCL opens the first OpenCL device and closes it when the test ends.
func OpenCL(t testing.TB) device.Device {
	t.Helper()
	return Open(t, "opencl:0")
}

// Open opens the device spec names (any --device spec) and closes it when
// the test ends.
func Open(t testing.TB, spec string) device.Device {
	t.Helper()
	d, err := device.Open(spec)
	if err != nil {
		absent(t, err.Error())
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// PoCL returns the machine's PoCL device, the one every machine of the
// project has (CPU OpenCL), so results do not depend on the GPU present.
func PoCL(t testing.TB) device.Info {
	t.Helper()
	inv := device.Enumerate()
	for _, d := range inv.Devices {
		if strings.Contains(d.Platform, "Portable Computing Language") {
			return d
		}
	}
	var why []string
	for _, rt := range inv.Runtimes {
		why = append(why, rt.Runtime+": "+rt.Note)
	}
	absent(t, "no PoCL device ("+strings.Join(why, "; ")+")")
	return device.Info{}
}

func absent(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI installs PoCL (pocl-opencl-icd) and must run this test", why)
	}
	t.Skip(why)
}
