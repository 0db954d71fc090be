package device

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tltune/device/internal/cl"
	"tltune/device/internal/ze"
)

// withLibraries points the probes at other libraries for one test.
func withLibraries(t *testing.T, loader string, vendors []string, zeLib string) {
	t.Helper()
	oldLoader, oldVendors, oldZe := openCLLoader, openCLVendors, zeLoader
	openCLLoader, openCLVendors, zeLoader = loader, vendors, zeLib
	t.Cleanup(func() { openCLLoader, openCLVendors, zeLoader = oldLoader, oldVendors, oldZe })
}

const bogus = "libtltune-does-not-exist.so.1"

func TestRuntimesMissing(t *testing.T) {
	withLibraries(t, bogus, []string{bogus}, bogus)
	inv := enumerate()
	if len(inv.Devices) != 0 {
		t.Fatalf("found %d devices with no runtime library", len(inv.Devices))
	}
	for _, st := range inv.Runtimes {
		if !errors.Is(st.Err, ErrRuntimeMissing) || !strings.Contains(st.Note, "not found") {
			t.Errorf("%s: status %+v, want a missing loader", st.Runtime, st)
		}
	}
	_, err := Select(inv, "")
	var me *MissingError
	if !errors.As(err, &me) || !errors.Is(err, ErrRuntimeMissing) {
		t.Fatalf("Select with no runtime = %v, want a *MissingError", err)
	}
	for _, pkg := range []string{"ocl-icd-libopencl1", "libze1"} {
		if !strings.Contains(err.Error(), pkg) {
			t.Errorf("%q does not name the package %s", err, pkg)
		}
	}
}

// TestVendorLibraryWithoutLoader finds PoCL through its library alone, as
// tltune finds NVIDIA's on a machine without an .icd file, and runs a
// kernel through the dispatch table the platform object carries.
func TestVendorLibraryWithoutLoader(t *testing.T) {
	withLibraries(t, bogus, []string{bogus, "libpocl.so.2"}, zeLoader)
	inv := enumerate()
	if st := inv.Runtimes[0]; len(st.Extra) != 1 || st.Extra[0] != "libpocl.so.2" {
		t.Errorf("OpenCL status %+v, want PoCL found through libpocl.so.2", st)
	}
	d := openMatching(t, inv, poclPlatform)
	checkAxpy(t, d, mustBuildSource(t, d, "testdata/axpy.cl", "axpy"))
}

// TestLoaderWithoutPlatforms points tltune at a loader that lists no
// platform (testdata/emptyloader.c, built with gcc): PoCL must still be
// found through its library, the way NVIDIA's is on a machine whose driver
// installed no .icd file.
func TestLoaderWithoutPlatforms(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no gcc, and CI=true: run `make setup`")
		}
		t.Skip("no gcc to build the empty loader")
	}
	lib := filepath.Join(t.TempDir(), "libemptyopencl.so")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, "testdata/emptyloader.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	withLibraries(t, lib, []string{"libpocl.so.2"}, zeLoader)
	inv := enumerate()
	st := inv.Runtimes[0]
	if len(st.Extra) != 1 || st.Extra[0] != "libpocl.so.2" {
		t.Fatalf("OpenCL status %+v, want PoCL found through libpocl.so.2", st)
	}
	d := openMatching(t, inv, poclPlatform)
	checkAxpy(t, d, mustBuildSource(t, d, "testdata/axpy.cl", "axpy"))
}

// TestLevelZeroLoaderPresent needs the loader of `make setup` (libze1). Here
// it has no driver; on a machine with one the devices must be listed.
func TestLevelZeroLoaderPresent(t *testing.T) {
	if !ze.Load(zeLoader) {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Level Zero loader, and CI=true: run `make setup` (libze1)")
		}
		t.Skip("no Level Zero loader (install libze1)")
	}
	devs, st := probeLevelZero()
	if len(devs) == 0 {
		if st.Note != "loader found, no driver or device" || !errors.Is(st.Err, ErrRuntimeMissing) {
			t.Errorf("status %+v, want the loader found without driver", st)
		}
		if !strings.Contains(st.Err.Error(), zeDriverPackage) {
			t.Errorf("%q does not name the driver package", st.Err)
		}
		return
	}
	for _, d := range devs {
		if d.Runtime != LevelZero || d.Name == "" || d.MaxWorkGroupSize == 0 || len(d.SubgroupSizes) == 0 {
			t.Errorf("incomplete Level Zero device %+v", d)
		}
	}
}

func TestLevelZeroLoaderAbsent(t *testing.T) {
	t.Setenv("TLTUNE_ZE_LOADER", bogus)
	devs, st := probeLevelZero()
	if len(devs) != 0 || !errors.Is(st.Err, ErrRuntimeMissing) || !strings.Contains(st.Err.Error(), zePackage) {
		t.Errorf("probe with a bogus loader: %d devices, status %+v", len(devs), st)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind error
	}{
		{&cl.Error{Func: "clBuildProgram", Code: -11}, ErrBuild},
		{&cl.Error{Func: "clCreateProgramWithBinary", Code: -42}, ErrBuild},
		{&cl.Error{Func: "clEnqueueNDRangeKernel", Code: -54}, ErrWorkGroupSize},
		{&cl.Error{Func: "clEnqueueNDRangeKernel", Code: -5}, ErrOutOfResources},
		{&cl.Error{Func: "clCreateBuffer", Code: -4}, ErrOutOfResources},
		{&cl.Error{Func: "clCreateBuffer", Code: -61}, ErrOutOfResources},
		{&cl.Error{Func: "clEnqueueWriteBuffer", Code: -6}, ErrOutOfResources},
		{&cl.Error{Func: "clWaitForEvents", Code: -5}, ErrDeviceLost},
		{&cl.Error{Func: "command", Code: -9999}, ErrDeviceLost},
		{&cl.Error{Func: "clCreateProgramWithIL", Code: cl.Missing}, ErrUnsupported},
		{&ze.Error{Func: "zeModuleCreate", Code: ze.ModuleBuildFailure}, ErrBuild},
		{&ze.Error{Func: "zeKernelSetGroupSize", Code: ze.InvalidGroupSize}, ErrWorkGroupSize},
		{&ze.Error{Func: "zeMemAllocDevice", Code: ze.OutOfDeviceMemory}, ErrOutOfResources},
		{&ze.Error{Func: "zeEventHostSynchronize", Code: ze.DeviceLost}, ErrDeviceLost},
	} {
		classify := classifyCL
		if _, ok := tc.err.(*ze.Error); ok {
			classify = classifyZE
		}
		got := classify(tc.err)
		if !errors.Is(got, tc.kind) {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.kind)
		}
	}
	plain := classifyCL(&cl.Error{Func: "clSetKernelArg", Code: -50})
	for _, kind := range []error{ErrBuild, ErrWorkGroupSize, ErrOutOfResources, ErrDeviceLost} {
		if errors.Is(plain, kind) {
			t.Errorf("CL_INVALID_ARG_VALUE classified as %v", kind)
		}
	}
	if !strings.Contains(plain.Error(), "CL_INVALID_ARG_VALUE") {
		t.Errorf("message %q does not name the status", plain)
	}
}

func TestSelect(t *testing.T) {
	inv := Inventory{Devices: []Info{
		{ID: "opencl:0", Index: 0, Type: "cpu", Name: "pthread-skylake"},
		{ID: "opencl:1", Index: 1, Type: "gpu", Name: "NVIDIA H200"},
		{ID: "ze:0", Index: 2, Type: "gpu", Name: "Intel(R) Data Center GPU Max 1550"},
	}}
	for spec, want := range map[string]int{
		"": 1, "0": 0, "2": 2, "opencl:1": 1, "ze:0": 2, "levelzero:0": 2, "h200": 1, "Max 1550": 2, " pthread ": 0,
	} {
		got, err := Select(inv, spec)
		if err != nil || got.Index != want {
			t.Errorf("Select(%q) = %v, %v; want index %d", spec, got, err, want)
		}
	}
	for _, spec := range []string{"3", "-1", "opencl:2", "ze:1", "radeon"} {
		_, err := Select(inv, spec)
		if err == nil || !strings.Contains(err.Error(), "tltune devices") {
			t.Errorf("Select(%q) = %v, want an error pointing at 'tltune devices'", spec, err)
		}
	}
	if _, err := Select(inv, "ref"); !errors.Is(err, ErrReference) {
		t.Errorf("Select(ref) = %v, want ErrReference", err)
	}
	if _, err := Select(Inventory{}, "ref"); !errors.Is(err, ErrReference) {
		t.Errorf("Select(ref) without devices = %v, want ErrReference", err)
	}
	cpuOnly := Inventory{Devices: []Info{{Type: "accelerator"}, {Type: "cpu", Index: 1}}}
	for spec, want := range map[string][]int{
		"all": {1, 2}, "all:cpu": {0}, "ALL:GPU": {1, 2}, "1,ze:0": {1, 2}, "h200, 0": {1, 0}, "2": {2},
	} {
		got, err := SelectAll(inv, spec)
		var idx []int
		for _, d := range got {
			idx = append(idx, d.Index)
		}
		if err != nil || !slices.Equal(idx, want) {
			t.Errorf("SelectAll(%q) = %v, %v; want indices %v", spec, idx, err, want)
		}
	}
	for spec, want := range map[string]string{
		"1,opencl:1": "device opencl:1 (NVIDIA H200) is named twice", "all:fpga": `no device of type "fpga"`,
		"0,radeon": "tltune devices", "allx": "no device matches",
	} {
		_, err := SelectAll(inv, spec)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrSpec) && !errors.Is(err, ErrNoMatch) {
			t.Errorf("SelectAll(%q) = %v, want an error with %q, ErrSpec or ErrNoMatch", spec, err, want)
		}
	}
	if got, _ := Select(cpuOnly, ""); got.Index != 1 {
		t.Errorf("default without GPU picked %+v, want the CPU", got)
	}
}
