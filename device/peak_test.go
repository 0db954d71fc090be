package device

import "testing"

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

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{{nil, 0}, {[]int64{5}, 5}, {[]int64{9, 1, 5}, 5}, {[]int64{4, 1, 3, 2}, 2}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
