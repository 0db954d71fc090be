package device

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

const poclPlatform = "Portable Computing Language"

// pocl opens the PoCL device. Without PoCL the test fails in CI (where
// `make setup` installs it) and is skipped elsewhere.
func pocl(t *testing.T) Device {
	t.Helper()
	return openMatching(t, Enumerate(), poclPlatform)
}

// forEachDevice runs fn on every device of this machine, each in a subtest.
// PoCL is required like in pocl; on a GPU machine the same checks run on
// the GPU.
func forEachDevice(t *testing.T, fn func(t *testing.T, d Device)) {
	t.Helper()
	inv := Enumerate()
	requirePlatform(t, inv, poclPlatform)
	for _, info := range inv.Devices {
		t.Run(info.ID, func(t *testing.T) {
			d, err := info.Open()
			if err != nil {
				t.Fatalf("open %s: %v", info.Name, err)
			}
			// Cleanups run last-in first-out: buffers and kernels go first.
			t.Cleanup(func() {
				if err := d.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			t.Logf("%s (%s, driver %s)", info.Name, info.Platform, info.Driver)
			fn(t, d)
		})
	}
}

func openMatching(t *testing.T, inv Inventory, platform string) Device {
	t.Helper()
	info := requirePlatform(t, inv, platform)
	d, err := info.Open()
	if err != nil {
		t.Fatalf("open %s: %v", info.Name, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d
}

// requirePlatform returns the first device of the platform. Without one the
// test fails in CI (where `make setup` installs PoCL) and is skipped
// elsewhere.
func requirePlatform(t *testing.T, inv Inventory, platform string) Info {
	t.Helper()
	for _, info := range inv.Devices {
		if info.Platform == platform {
			return info
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no %s device, and CI=true: run `make setup` (pocl-opencl-icd)", platform)
	}
	t.Skipf("no %s device (install pocl-opencl-icd)", platform)
	return Info{}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustBuildSource(t *testing.T, d Device, file, kernel string) Kernel {
	t.Helper()
	p, err := d.BuildSource(readFile(t, file), "")
	if err != nil {
		t.Fatalf("build %s: %v", file, err)
	}
	return mustKernel(t, p, kernel)
}

// mustCompile compiles an OpenCL C file to SPIR-V. Without clang-15 or
// llvm-spirv-15 it fails in CI and returns nil elsewhere (GPU machines
// often lack them).
func mustCompile(t *testing.T, file string) []byte {
	t.Helper()
	spv, err := CompileOpenCLC(readFile(t, file))
	if errors.Is(err, ErrRuntimeMissing) && os.Getenv("CI") != "true" {
		t.Log(err)
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return spv
}

func mustKernel(t *testing.T, p Program, name string) Kernel {
	t.Helper()
	t.Cleanup(func() { p.Release() })
	k, err := p.Kernel(name)
	if err != nil {
		t.Fatalf("kernel %s: %v", name, err)
	}
	t.Cleanup(func() { k.Release() })
	return k
}

func mustAlloc(t *testing.T, d Device, size int64) Buffer {
	t.Helper()
	b, err := d.Alloc(size)
	if err != nil {
		t.Fatalf("alloc %d: %v", size, err)
	}
	t.Cleanup(func() { b.Release() })
	return b
}

// checkAxpy runs y := 2x + y with n = 1000 elements on 1024 work-items and
// checks every element and the event time.
func checkAxpy(t *testing.T, d Device, k Kernel) {
	t.Helper()
	const n = 1000
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(3*i+1)
	}
	bx, by := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
	if err := bx.Write(Bytes(x)); err != nil {
		t.Fatal(err)
	}
	if err := by.Write(Bytes(y)); err != nil {
		t.Fatal(err)
	}
	if err := k.SetArgs(F32(2), Buf(bx), Buf(by), I32(n)); err != nil {
		t.Fatal(err)
	}
	ev, err := k.Launch([]int{1024}, []int{64})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	ns, err := ev.Nanoseconds()
	if err != nil {
		t.Fatal(err)
	}
	if ns <= 0 {
		t.Errorf("event time %d ns, want > 0", ns)
	}
	got := make([]float32, n)
	if err := by.Read(Bytes(got)); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if want := 2*x[i] + y[i]; got[i] != want {
			t.Fatalf("y[%d] = %g, want %g", i, got[i], want)
		}
	}
}

// TestAxpySPIRV compiles the kernel to SPIR-V, converts that to SPIR
// bitcode and runs it through cl_khr_spir, which is how SPIR-V reaches
// devices without SPIR-V IL.
func TestAxpySPIRV(t *testing.T) {
	d := pocl(t)
	spv := mustCompile(t, "testdata/axpy.cl")
	if spv == nil {
		t.Skip("no SPIR-V tools")
	}
	if len(spv) < 4 || binary.LittleEndian.Uint32(spv) != 0x07230203 {
		t.Fatalf("CompileOpenCLC did not return a SPIR-V module (%d bytes)", len(spv))
	}
	if !d.Info().AcceptsSPIRV() {
		if _, err := d.BuildSPIRV(spv, ""); !errors.Is(err, ErrUnsupported) {
			t.Errorf("BuildSPIRV on a device without SPIR-V IL: %v, want ErrUnsupported", err)
		}
	}
	checkSPIRAxpy(t, d, spv)
}

// checkSPIRAxpy runs the axpy SPIR-V module as SPIR bitcode (cl_khr_spir).
func checkSPIRAxpy(t *testing.T, d Device, spv []byte) {
	t.Helper()
	bc, err := SPIRVToBitcode(spv)
	if err != nil {
		t.Fatal(err)
	}
	checkProgramAxpy(t, d, bc, d.BuildSPIR)
}

// checkProgramAxpy builds the axpy module with build and runs it.
func checkProgramAxpy(t *testing.T, d Device, module []byte, build func([]byte, string) (Program, error)) {
	t.Helper()
	p, err := build(module, "")
	if err != nil {
		t.Fatal(err)
	}
	checkAxpy(t, d, mustKernel(t, p, "axpy"))
}

func TestArgumentTypes(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		k := mustBuildSource(t, d, "testdata/args.cl", "args")
		out := mustAlloc(t, d, 10*8)
		const local = 16
		float2 := Bytes([]float32{1.25, -3})
		err := k.SetArgs(Buf(out), I32(-7), I64(-1<<40), U64(1<<63), F32(0.5), F64(math.Pi), Local(local*8),
			Raw([]byte{0xfe}), Raw(Bytes([]int16{-300})), Raw(float2))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := k.Launch([]int{local}, []int{local})
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Wait(); err != nil {
			t.Fatal(err)
		}
		ev.Release()
		got := make([]float64, 10)
		if err := out.Read(Bytes(got)); err != nil {
			t.Fatal(err)
		}
		want := []float64{-7, -1 << 40, 1 << 63, 0.5, math.Pi, local - 1, -2, -300, 1.25, -3}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("out[%d] = %v, want %v", i, got[i], want[i])
			}
		}
	})
}

func TestFillAndBounds(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		b := mustAlloc(t, d, 64)
		if err := b.Fill(Bytes([]float32{1.5})); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 16)
		if err := b.Read(Bytes(got)); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != 1.5 {
				t.Fatalf("after Fill, element %d = %g, want 1.5", i, v)
			}
		}
		if err := b.Write(make([]byte, 65)); err == nil || !strings.Contains(err.Error(), "65 bytes") {
			t.Errorf("oversized write: %v, want an error naming the size", err)
		}
	})
}

// TestWriteRepeated: a period of any size repeats over the buffer, the
// last copy cut short; an empty one is refused.
func TestWriteRepeated(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		b := mustAlloc(t, d, 10*4)
		if err := b.WriteRepeated(Bytes([]int32{1, 2, 3})); err != nil {
			t.Fatal(err)
		}
		got := make([]int32, 10)
		if err := b.Read(Bytes(got)); err != nil {
			t.Fatal(err)
		}
		if want := []int32{1, 2, 3, 1, 2, 3, 1, 2, 3, 1}; !slices.Equal(got, want) {
			t.Errorf("after WriteRepeated(1, 2, 3): %v, want %v", got, want)
		}
		// Past one host chunk, the rest is copied on the device.
		const n = 9<<20/4 + 1
		big := mustAlloc(t, d, n*4)
		if err := big.WriteRepeated(Bytes([]int32{1, 2, 3})); err != nil {
			t.Fatal(err)
		}
		got = make([]int32, n)
		if err := big.Read(Bytes(got)); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != int32(i%3+1) {
				t.Fatalf("%d bytes after WriteRepeated(1, 2, 3): element %d is %d", n*4, i, v)
			}
		}
		if err := b.WriteRepeated(nil); err == nil {
			t.Error("an empty period was accepted")
		}
	})
}

func TestBuildFailureCarriesLog(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		_, err := d.BuildSource(readFile(t, "testdata/broken.cl"), "")
		var be *BuildError
		if !errors.As(err, &be) || !errors.Is(err, ErrBuild) {
			t.Fatalf("BuildSource(broken.cl) = %v, want a *BuildError", err)
		}
		if !strings.Contains(be.Log, "undeclared_value") {
			t.Errorf("build log does not name the undeclared identifier:\n%s", be.Log)
		}
		if !strings.Contains(err.Error(), "undeclared_value") {
			t.Errorf("one-line message %q does not name the problem", err)
		}
	})
}

func TestCompileOpenCLCFailureCarriesLog(t *testing.T) {
	_, err := CompileOpenCLC(readFile(t, "testdata/broken.cl"))
	if errors.Is(err, ErrRuntimeMissing) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	var be *BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Log, "undeclared_value") {
		t.Fatalf("CompileOpenCLC(broken.cl) = %v, want a *BuildError naming the identifier", err)
	}
}

func TestInvalidWorkGroupSize(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		k := mustBuildSource(t, d, "testdata/axpy.cl", "axpy")
		y := mustAlloc(t, d, 4)
		if err := k.SetArgs(F32(1), Buf(y), Buf(y), I32(0)); err != nil {
			t.Fatal(err)
		}
		tooLarge := d.Info().MaxWorkGroupSize + 1
		for _, tc := range []struct {
			name          string
			global, local []int
			fromDriver    bool
		}{
			{"not a multiple", []int{100}, []int{64}, false},
			{"dimensions differ", []int{64}, []int{8, 8}, false},
			{"larger than the device allows", []int{2 * tooLarge}, []int{tooLarge}, true},
		} {
			_, err := k.Launch(tc.global, tc.local)
			if !errors.Is(err, ErrWorkGroupSize) {
				t.Errorf("%s: Launch(%v, %v) = %v, want ErrWorkGroupSize", tc.name, tc.global, tc.local, err)
			}
			var re *Error
			if tc.fromDriver && !errors.As(err, &re) {
				t.Errorf("%s: %v is not the driver's status", tc.name, err)
			}
		}
	})
}

// TestOutOfResources asks for a buffer larger than the device's memory.
// PoCL refuses it at once (CL_INVALID_BUFFER_SIZE). NVIDIA's OpenCL accepts
// buffers beyond CL_DEVICE_MAX_MEM_ALLOC_SIZE and allocates at first use (seen
// on an H200), so the buffer is filled to make the failure surface. PoCL
// produces no other resource error (it accepts local allocations beyond its
// local memory), so CL_OUT_OF_RESOURCES and CL_MEM_OBJECT_ALLOCATION_FAILURE
// are covered by TestClassify on the raw codes.
func TestOutOfResources(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		info := d.Info()
		size := int64(max(info.GlobalMemBytes, info.MaxAllocBytes)+4096) / 4 * 4
		b, err := d.Alloc(size)
		if err == nil {
			err = b.Fill(Bytes([]uint32{0}))
			b.Release()
		}
		if !errors.Is(err, ErrOutOfResources) {
			t.Fatalf("a buffer of %d bytes = %v, want ErrOutOfResources", size, err)
		}
	})
}

// TestAxpy runs the axpy kernel on every device this machine has, through
// every program format the device takes: OpenCL C always, SPIR-V where the
// device lists the IL, SPIR bitcode where it has cl_khr_spir.
func TestAxpy(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		info := d.Info()
		checkAxpy(t, d, mustBuildSource(t, d, "testdata/axpy.cl", "axpy"))
		spv := mustCompile(t, "testdata/axpy.cl")
		if spv != nil && info.AcceptsSPIRV() {
			checkProgramAxpy(t, d, spv, d.BuildSPIRV)
		}
		if spv != nil && info.HasExtension("cl_khr_spir") {
			checkSPIRAxpy(t, d, spv)
		}
	})
}

func TestToolMissing(t *testing.T) {
	old := llvmSPIRVTool
	llvmSPIRVTool = "llvm-spirv-tltune-missing"
	defer func() { llvmSPIRVTool = old }()
	_, err := SPIRVToBitcode([]byte{3, 2, 0x23, 7})
	if !errors.Is(err, ErrRuntimeMissing) || !strings.Contains(err.Error(), "install the Debian package llvm-spirv-tltune-missing") {
		t.Errorf("SPIRVToBitcode without the tool = %v, want ErrRuntimeMissing naming the package", err)
	}
}

// TestOpenedInfo checks that an opened device reports the Info it was
// opened from, its place in the inventory included: a sweep over several
// devices records each measurement's device by that id.
func TestOpenedInfo(t *testing.T) {
	inv := Enumerate()
	forEachDevice(t, func(t *testing.T, d Device) {
		got := d.Info()
		want := inv.Devices[got.Index]
		if got.ID != want.ID || got.ID == "" || got.Name != want.Name {
			t.Errorf("opened device reports %s (index %d, %s); the inventory lists %s there (%s)", got.ID, got.Index, got.Name, want.ID, want.Name)
		}
	})
}

// TestBinaryRoundTrip builds a program from source, takes its binary and
// builds that again: the kernel runs alike, and no compiler ran the second
// time (the binary cache of the tuner depends on it).
func TestBinaryRoundTrip(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d Device) {
		p, err := d.BuildSource(string(readFile(t, "testdata/axpy.cl")), "")
		if err != nil {
			t.Fatal(err)
		}
		bin, err := p.Binary()
		p.Release()
		if err != nil || len(bin) == 0 {
			t.Fatalf("binary: %d bytes, %v", len(bin), err)
		}
		again, err := d.BuildBinary(bin, "")
		if err != nil {
			t.Fatal(err)
		}
		checkAxpy(t, d, mustKernel(t, again, "axpy"))
		if _, err := d.BuildBinary([]byte("not a binary"), ""); !errors.Is(err, ErrBuild) {
			t.Errorf("a garbage binary: %v, want a build error", err)
		}
	})
}

// TestWriteRepeatedChunks: a small period over a big buffer is written
// once from the host, a chunk of whole periods, and doubled by copies
// within the buffer, which then holds the period repeated; a buffer the
// chunk covers needs no copy.
func TestWriteRepeatedChunks(t *testing.T) {
	period := []byte("0123456")
	for _, size := range []int64{10<<20 + 5, 1000} {
		mem := make([]byte, size)
		writes, copies := 0, 0
		err := writeRepeated(size, period, func(off int64, src []byte) error {
			writes++
			copy(mem[off:], src)
			return nil
		}, func(src, dst, n int64) error {
			copies++
			if src+n > dst {
				t.Errorf("copy of %d bytes from %d overlaps its destination %d", n, src, dst)
			}
			copy(mem[dst:dst+n], mem[src:src+n])
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if wantCopies := map[int64]int{1000: 0, 10<<20 + 5: 2}[size]; writes != 1 || copies != wantCopies {
			t.Errorf("%d bytes: %d writes and %d copies, want 1 and %d", size, writes, copies, wantCopies)
		}
		for i, b := range mem {
			if b != period[i%len(period)] {
				t.Fatalf("%d bytes: byte %d = %q, want %q", size, i, b, period[i%len(period)])
			}
		}
	}
}
