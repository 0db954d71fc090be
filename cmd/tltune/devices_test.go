package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"tltune/device"
)

// fixedInventory stands in for the machine's devices in golden tests: an
// NVIDIA GPU found without an .icd file, a PoCL CPU, and Level Zero without
// a driver.
func fixedInventory() device.Inventory {
	return device.Inventory{
		Devices: []device.Info{
			{ID: "opencl:0", Index: 0, Runtime: device.OpenCL, Type: "gpu", Name: "NVIDIA H200",
				Vendor: "NVIDIA Corporation", Driver: "580.159.04", Platform: "NVIDIA CUDA",
				Version: "OpenCL 3.0 CUDA", OpenCLC: "OpenCL C 1.2 ", ComputeUnits: 132, ClockMHz: 1980,
				GlobalMemBytes: 150_000_000_000, MaxAllocBytes: 37_500_000_000, LocalMemBytes: 48 << 10,
				CacheBytes: 50 << 20, MaxWorkGroupSize: 1024, MaxWorkItemSizes: [3]int{1024, 1024, 64},
				SubgroupSizes: []int{32}, Extensions: []string{"cl_khr_fp64", "cl_nv_device_attribute_query"}, FP64: true},
			{ID: "opencl:1", Index: 1, Runtime: device.OpenCL, Type: "cpu", Name: "pthread-haswell",
				Vendor: "GenuineIntel", Driver: "3.1+debian", Platform: "Portable Computing Language",
				Version: "OpenCL 3.0 PoCL", OpenCLC: "OpenCL C 1.2 PoCL", ComputeUnits: 4, ClockMHz: 2600,
				GlobalMemBytes: 8 << 30, MaxAllocBytes: 2 << 30, LocalMemBytes: 2 << 20, CacheBytes: 32 << 20,
				MaxWorkGroupSize: 4096, MaxWorkItemSizes: [3]int{4096, 4096, 4096},
				Extensions: []string{"cl_khr_spir", "cl_khr_fp64"}, FP64: true},
		},
		Runtimes: []device.Status{
			{Runtime: device.OpenCL, Library: "libOpenCL.so.1", Devices: 2, Note: "2 device(s) on 2 platform(s)",
				Extra: []string{"libnvidia-opencl.so.1"}},
			{Runtime: device.LevelZero, Library: "libze_loader.so.1", Note: "loader found, no driver or device",
				Err: &device.MissingError{Runtime: "Level Zero", Library: "libze_loader.so.1",
					Package: "intel-level-zero-gpu", Detail: "loader found, no driver or device"}},
		},
	}
}

func withInventory(t *testing.T, inv device.Inventory) {
	t.Helper()
	old := enumerateDevices
	enumerateDevices = func() device.Inventory { return inv }
	t.Cleanup(func() { enumerateDevices = old })
}

func TestDevicesGolden(t *testing.T) {
	withInventory(t, fixedInventory())
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"devices.stdout", []string{"devices"}},
		{"devices-v.stdout", []string{"devices", "-v"}},
		{"devices-json.stdout", []string{"devices", "--json"}},
	} {
		status, stdout, stderr := tltune(tc.args...)
		if status != exitOK || stderr != "" {
			t.Fatalf("tltune %v: status %d, stderr %q", tc.args, status, stderr)
		}
		checkGolden(t, tc.golden, []byte(stdout))
	}
}

func TestDevicesNone(t *testing.T) {
	withInventory(t, device.Inventory{Runtimes: fixedInventory().Runtimes[1:]})
	status, stdout, _ := tltune("devices")
	if status != exitOK || stdout != "Level Zero: loader found, no driver or device (install intel-level-zero-gpu)\n" {
		t.Errorf("devices without devices: status %d, output %q", status, stdout)
	}
}

func TestDevicesUsage(t *testing.T) {
	status, _, stderr := tltune("devices", "extra")
	if status != exitUsage || strings.Count(stderr, "\n") != 1 {
		t.Errorf("devices extra: status %d, stderr %q; want one usage line", status, stderr)
	}
}

// TestDevicesOnThisMachine lists the real devices. With the Level Zero
// loader of `make setup` and no Intel GPU driver, the runtime line says so.
func TestDevicesOnThisMachine(t *testing.T) {
	status, stdout, stderr := tltune("devices")
	if status != exitOK {
		t.Fatalf("devices: status %d, stderr %q", status, stderr)
	}
	if !strings.Contains(stdout, "OpenCL: ") || !strings.Contains(stdout, "Level Zero: ") {
		t.Errorf("devices does not report both runtimes:\n%s", stdout)
	}
	inv := device.Enumerate()
	if inv.Runtimes[1].Devices == 0 && inv.Runtimes[1].Install() == "intel-level-zero-gpu" &&
		!strings.Contains(stdout, "Level Zero: loader found, no driver or device") {
		t.Errorf("Level Zero without driver not reported:\n%s", stdout)
	}
}

// TestWithoutRuntimeLibraries runs tltune in a child process whose OpenCL
// and Level Zero libraries do not exist: commands that need no device work,
// and device commands say which package to install, in one line.
func TestWithoutRuntimeLibraries(t *testing.T) {
	if args := os.Getenv("TLTUNE_CHILD_ARGS"); args != "" {
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	child := func(args string) (int, string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWithoutRuntimeLibraries$")
		cmd.Env = append(os.Environ(), "TLTUNE_CHILD_ARGS="+args,
			"TLTUNE_OPENCL_LOADER=libtltune-missing.so.1", "TLTUNE_OPENCL_VENDORS=",
			"TLTUNE_ZE_LOADER=libtltune-missing-ze.so.1")
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if status, out := child("help"); status != exitOK || !strings.Contains(out, "devices") {
		t.Errorf("help without runtimes: status %d\n%s", status, out)
	}
	status, out := child("devices")
	if status != exitOK || !strings.Contains(out, "OpenCL: loader libtltune-missing.so.1 not found (install ocl-icd-libopencl1") ||
		!strings.Contains(out, "Level Zero: loader libtltune-missing-ze.so.1 not found (install libze1)") {
		t.Errorf("devices without runtimes: status %d\n%s", status, out)
	}
	status, out = child("peak")
	if status != exitRuntime || strings.Count(out, "\n") != 1 || !strings.Contains(out, "install the Debian package ocl-icd-libopencl1") {
		t.Errorf("peak without runtimes: status %d, want one line naming the package:\n%s", status, out)
	}
}
