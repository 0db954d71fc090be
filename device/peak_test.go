package device

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeasurePeak(t *testing.T) {
	d := pocl(t)
	opt := PeakOptions{CopyBytes: 1 << 20, Repeats: 3, TargetNS: 2_000_000}
	p, err := MeasurePeak(d, opt)
	if err != nil {
		t.Fatal(err)
	}
	info := d.Info()
	if p.Device != info.Name || p.Runtime != OpenCL {
		t.Errorf("peak names %q/%q, want %q/opencl", p.Device, p.Runtime, info.Name)
	}
	want := map[string]string{"copy": "GB/s", "fma_f32": "GFLOP/s"}
	if info.FP64 {
		want["fma_f64"] = "GFLOP/s"
	}
	if info.FP16 {
		want["fma_f16"] = "GFLOP/s"
	}
	for _, c := range p.Ceilings {
		if want[c.Name] != c.Unit {
			t.Errorf("ceiling %s in %s, want %q", c.Name, c.Unit, want[c.Name])
		}
		delete(want, c.Name)
		if c.Value <= 0 || c.Work <= 0 || len(c.SamplesNS) != opt.Repeats {
			t.Errorf("ceiling %+v: want a positive value and %d samples", c, opt.Repeats)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing ceilings %v", want)
	}
	if c := p.Ceilings[0]; c.Work != 2<<20 {
		t.Errorf("copy counts %g bytes, want read + written = %d", c.Work, 2<<20)
	}
	if !info.FP16 && len(p.Skipped) == 0 {
		t.Error("fp16 skipped without saying so")
	}
}

func TestPeakDefaults(t *testing.T) {
	gpu := Info{Type: "gpu", CacheBytes: 128 << 20, GlobalMemBytes: 80 << 30, MaxAllocBytes: 20 << 30}
	if got := (PeakOptions{}).withDefaults(gpu).CopyBytes; got != 512<<20 {
		t.Errorf("GPU with a 128 MiB cache: copy buffers of %d MiB, want 4× the cache", got>>20)
	}
	small := Info{Type: "gpu", CacheBytes: 4 << 20, GlobalMemBytes: 8 << 30, MaxAllocBytes: 100 << 20}
	if got := (PeakOptions{}).withDefaults(small).CopyBytes; got != 100<<20 {
		t.Errorf("max allocation 100 MiB: copy buffers of %d MiB", got>>20)
	}
	cpu := Info{Type: "cpu", CacheBytes: 480 << 20, GlobalMemBytes: 4 << 30, MaxAllocBytes: 1 << 30}
	opt := (PeakOptions{}).withDefaults(cpu)
	if opt.CopyBytes != 64<<20 || opt.Repeats != 10 || opt.TargetNS != defaultTargetNS {
		t.Errorf("CPU defaults %+v", opt)
	}
}

// TestNVIDIASourceCompiles compiles the inline-PTX kernels of the NVIDIA
// ceilings with clang's NVPTX back end (no NVIDIA device here): the
// OpenCL C and its asm constraints are well-formed, and the PTX holds every
// fma.rn.f16x2 and mma.sync the rates count.
func TestNVIDIASourceCompiles(t *testing.T) {
	clang, err := exec.LookPath("clang-15")
	if err != nil {
		t.Skip("clang-15 not installed (make setup)")
	}
	dir := t.TempDir()
	src, ptx := filepath.Join(dir, "nv.cl"), filepath.Join(dir, "nv.ptx")
	if err := os.WriteFile(src, []byte(nvidiaSource()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(clang, "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-O2", "-S", "-o", ptx, src).CombinedOutput()
	if err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	text, err := os.ReadFile(ptx)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "fma.rn.f16x2"); n != fmaChains*fmaSteps {
		t.Errorf("%d fma.rn.f16x2 in the PTX, want %d", n, fmaChains*fmaSteps)
	}
	if n := strings.Count(string(text), "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"); n != mmaChains*mmaSteps {
		t.Errorf("%d mma.sync in the PTX, want %d", n, mmaChains*mmaSteps)
	}
}

// TestFMAKernelsVectorWidths: every width is a kernel whose flops count
// its lanes.
func TestFMAKernelsVectorWidths(t *testing.T) {
	ks, src := fmaKernels("float")
	if len(ks) != len(fmaWidths) {
		t.Fatalf("%d kernels for %d widths", len(ks), len(fmaWidths))
	}
	for i, k := range ks {
		if k.flopsPerFMA != 2*fmaWidths[i] || !strings.Contains(src, "kernel void "+k.name+"(global "+k.typ+" *out") {
			t.Errorf("kernel %+v", k)
		}
	}
	if n := strings.Count(src, "= fma(x"); n != len(fmaWidths)*fmaChains*fmaSteps {
		t.Errorf("%d FMAs in the source, want %d", n, len(fmaWidths)*fmaChains*fmaSteps)
	}
}
