package device

import (
	"errors"
	"fmt"
	"slices"
)

// Ceiling is one measured peak of a device.
type Ceiling struct {
	Name      string  `json:"name"`       // "copy", "fma_f32", "fma_f64", "fma_f16"
	Unit      string  `json:"unit"`       // "GB/s" or "GFLOP/s"
	Value     float64 `json:"value"`      // Work / median time
	Work      float64 `json:"work"`       // bytes (read + written) or flops per launch
	SamplesNS []int64 `json:"samples_ns"` // every timed launch, in order
}

// Peak is what MeasurePeak found on one device.
type Peak struct {
	Device   string    `json:"device"`
	Driver   string    `json:"driver"`
	Runtime  string    `json:"runtime"`
	Ceilings []Ceiling `json:"ceilings"`
	Skipped  []string  `json:"skipped,omitempty"` // measurements the device cannot run, and why
}

// PeakOptions tunes MeasurePeak; zero values choose per device.
type PeakOptions struct {
	// CopyBytes is the size of each of the two copy buffers. The default
	// is at least 256 MiB on GPUs and 4× the reported cache, so that the
	// copy streams from memory; 64 MiB on CPUs, whose reported cache is
	// the host's last level and whose memory is shared with everything else.
	CopyBytes int64
	Repeats   int   // timed launches per ceiling (default 10), after 2 warm-up launches
	TargetNS  int64 // duration an FMA launch is calibrated to (default 20 ms)
}

const (
	peakWarmups      = 2
	fmaChains        = 8 // independent accumulators per work-item (instruction-level parallelism)
	fmaUnroll        = 8 // FMAs per chain per loop iteration
	fmaFlopsPerIter  = 2 * fmaChains * fmaUnroll
	copyVectorBytes  = 16 // the copy kernel moves float4
	defaultTargetNS  = 20_000_000
	calibrationIters = 16
)

// peakSource holds the micro-benchmark kernels. The FMA kernel is stamped
// out per type by the FMA macro, with fmaChains independent dependency
// chains of fmaUnroll steps so that latency is hidden by independent work,
// and the result stored so that nothing is optimised away.
const peakSource = `
kernel void copy(global const float4 *src, global float4 *dst) {
	size_t i = get_global_id(0);
	dst[i] = src[i];
}

#define STEP(x) x = fma(x, a, b);
#define STEP8 STEP(x0) STEP(x1) STEP(x2) STEP(x3) STEP(x4) STEP(x5) STEP(x6) STEP(x7)
#define FMA(T) \
kernel void fma_##T(global T *out, float af, float bf, int iters) { \
	T a = (T)af, b = (T)bf; \
	T x0 = (T)get_local_id(0), x1 = x0 + (T)1, x2 = x0 + (T)2, x3 = x0 + (T)3; \
	T x4 = x0 + (T)4, x5 = x0 + (T)5, x6 = x0 + (T)6, x7 = x0 + (T)7; \
	for (int i = 0; i < iters; i++) { STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 } \
	out[get_global_id(0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7; \
}
FMA(float)
#ifdef WITH_FP64
FMA(double)
#endif
#ifdef WITH_FP16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
FMA(half)
#endif
`

// MeasurePeak measures the device's copy bandwidth and FMA throughput with
// device-event timing: warm-up launches first, then the median of Repeats.
func MeasurePeak(d Device, opt PeakOptions) (Peak, error) {
	info := d.Info()
	opt = opt.withDefaults(info)
	peak := Peak{Device: info.Name, Driver: info.Driver, Runtime: info.Runtime}
	defines := ""
	if info.FP64 {
		defines += " -DWITH_FP64"
	}
	if info.FP16 {
		defines += " -DWITH_FP16"
	}
	prog, err := d.BuildSource(peakSource, defines)
	if err != nil {
		return peak, fmt.Errorf("peak kernels: %w", err)
	}
	defer prog.Release()
	local := min(256, info.MaxWorkGroupSize)

	c, err := measureCopy(d, prog, opt, local)
	if err != nil {
		return peak, err
	}
	peak.Ceilings = append(peak.Ceilings, c)
	for _, t := range []struct {
		typ, name string
		size      int
		have      bool
		why       string
	}{
		{"float", "fma_f32", 4, true, ""},
		{"double", "fma_f64", 8, info.FP64, "no fp64"},
		{"half", "fma_f16", 2, info.FP16, "no cl_khr_fp16"},
	} {
		if !t.have {
			peak.Skipped = append(peak.Skipped, t.name+": "+t.why)
			continue
		}
		c, err := measureFMA(d, prog, opt, local, t.typ, t.size)
		if err != nil {
			return peak, fmt.Errorf("%s: %w", t.name, err)
		}
		c.Name = t.name
		peak.Ceilings = append(peak.Ceilings, c)
	}
	return peak, nil
}

func (opt PeakOptions) withDefaults(info Info) PeakOptions {
	if opt.Repeats <= 0 {
		opt.Repeats = 10
	}
	if opt.TargetNS <= 0 {
		opt.TargetNS = defaultTargetNS
	}
	if opt.CopyBytes <= 0 {
		opt.CopyBytes = 64 << 20
		if info.Type == "gpu" {
			opt.CopyBytes = max(256<<20, 4*int64(info.CacheBytes))
		}
	}
	// Two buffers must fit next to everything else, each within one
	// allocation; sizes stay whole multiples of a work-group of float4.
	limit := int64(info.GlobalMemBytes) / 4
	if info.MaxAllocBytes > 0 {
		limit = min(limit, int64(info.MaxAllocBytes))
	}
	if limit > 0 {
		opt.CopyBytes = min(opt.CopyBytes, limit)
	}
	const quantum = 256 * copyVectorBytes
	opt.CopyBytes = max(quantum, opt.CopyBytes/quantum*quantum)
	return opt
}

func measureCopy(d Device, prog Program, opt PeakOptions, local int) (Ceiling, error) {
	k, err := prog.Kernel("copy")
	if err != nil {
		return Ceiling{}, err
	}
	defer k.Release()
	src, err := d.Alloc(opt.CopyBytes)
	if err != nil {
		return Ceiling{}, fmt.Errorf("copy buffer of %d MiB: %w", opt.CopyBytes>>20, err)
	}
	defer src.Release()
	dst, err := d.Alloc(opt.CopyBytes)
	if err != nil {
		return Ceiling{}, fmt.Errorf("copy buffer of %d MiB: %w", opt.CopyBytes>>20, err)
	}
	defer dst.Release()
	if err := src.Fill(Bytes([]float32{1})); err != nil {
		return Ceiling{}, err
	}
	if err := dst.Fill(Bytes([]float32{0})); err != nil {
		return Ceiling{}, err
	}
	if err := k.SetArgs(Buf(src), Buf(dst)); err != nil {
		return Ceiling{}, err
	}
	global := int(opt.CopyBytes / copyVectorBytes)
	samples, err := timeLaunches(k, []int{global}, []int{fitLocal(global, local)}, opt.Repeats)
	if err != nil {
		return Ceiling{}, err
	}
	if err := checkCopied(dst); err != nil {
		return Ceiling{}, err
	}
	return ceiling("copy", "GB/s", float64(2*opt.CopyBytes), samples), nil
}

// checkCopied reads the start of the copy's destination back: a kernel
// that did not run must not pass for a fast one.
func checkCopied(dst Buffer) error {
	head := make([]float32, min(1024, dst.Size()/4))
	if err := dst.Read(Bytes(head)); err != nil {
		return err
	}
	for i, v := range head {
		if v != 1 {
			return fmt.Errorf("copy kernel wrote %g at element %d, want 1", v, i)
		}
	}
	return nil
}

// measureFMA calibrates the iteration count so that one launch lasts about
// opt.TargetNS, then times it.
func measureFMA(d Device, prog Program, opt PeakOptions, local int, typ string, size int) (Ceiling, error) {
	k, err := prog.Kernel("fma_" + typ)
	if err != nil {
		return Ceiling{}, err
	}
	defer k.Release()
	// Enough work-groups to fill every compute unit several times over.
	global := max(1, d.Info().ComputeUnits) * 16 * local
	out, err := d.Alloc(int64(global * size))
	if err != nil {
		return Ceiling{}, err
	}
	defer out.Release()
	run := func(iters, repeats int) ([]int64, error) {
		if err := k.SetArgs(Buf(out), F32(0.999), F32(0.001), I32(int32(iters))); err != nil {
			return nil, err
		}
		return timeLaunches(k, []int{global}, []int{local}, repeats)
	}
	probe, err := run(calibrationIters, 1)
	if err != nil {
		return Ceiling{}, err
	}
	iters := calibrationIters * int(opt.TargetNS/max(1, median(probe)))
	iters = min(max(iters, calibrationIters), 1<<24)
	samples, err := run(iters, opt.Repeats)
	if err != nil {
		return Ceiling{}, err
	}
	flops := float64(global) * float64(iters) * fmaFlopsPerIter
	return ceiling("", "GFLOP/s", flops, samples), nil
}

// timeLaunches launches the kernel peakWarmups times untimed, then repeats
// times, and returns the device times.
func timeLaunches(k Kernel, global, local []int, repeats int) ([]int64, error) {
	samples := make([]int64, 0, repeats)
	for i := range peakWarmups + repeats {
		ev, err := k.Launch(global, local)
		if err != nil {
			return nil, err
		}
		ns, err := ev.Nanoseconds()
		ev.Release()
		if err != nil {
			return nil, err
		}
		if i >= peakWarmups {
			samples = append(samples, ns)
		}
	}
	if median(samples) <= 0 {
		return nil, errors.New("the device reported zero-length kernels; its timer is unusable")
	}
	return samples, nil
}

// fitLocal returns the largest work-group size up to want that divides
// global.
func fitLocal(global, want int) int {
	for l := want; l > 1; l-- {
		if global%l == 0 {
			return l
		}
	}
	return 1
}

func ceiling(name, unit string, work float64, samples []int64) Ceiling {
	// work per nanosecond is GB/s or GFLOP/s.
	return Ceiling{Name: name, Unit: unit, Work: work, Value: work / float64(median(samples)), SamplesNS: samples}
}

func median(s []int64) int64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}
