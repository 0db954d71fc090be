package device

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"tltune/internal/stats"
)

// Ceiling is one measured peak of a device.
type Ceiling struct {
	Name      string  `json:"name"`             // "copy", "fma_f32", "fma_f64", "fma_f16", "mma_f16"
	Unit      string  `json:"unit"`             // "GB/s" or "GFLOP/s"
	Value     float64 `json:"value"`            // Work / the fastest launch's time
	Work      float64 `json:"work"`             // bytes (read + written) or flops per launch
	Kernel    string  `json:"kernel,omitempty"` // the micro-kernel that reached it, e.g. "float8 x16 chains"
	SamplesNS []int64 `json:"samples_ns"`       // every timed launch, in order
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
	copyVectorBytes  = 16 // the copy kernel moves float4
	defaultTargetNS  = 20_000_000
	calibrationIters = 16
	// Every FMA kernel keeps fmaChains independent accumulators per
	// work-item and advances each fmaSteps times per loop trip: enough
	// independent work to hide the FMA latency (4–5 cycles on CPUs, about
	// 4 on GPUs) on every pipe, so that the rate is the issue rate.
	fmaChains = 16
	fmaSteps  = 8
	// The matrix kernel keeps mmaChains independent accumulators per
	// warp (the H200 reaches its mma.sync rate with 8).
	mmaChains = 8
	mmaSteps  = 4
)

// fmaWidths are the vector widths every FMA ceiling is tried at; the best
// rate is the ceiling. A CPU needs its SIMD width (float16 on AVX-512,
// float8 on AVX2) to reach its peak through PoCL; a GPU runs scalars on
// its lanes, and half2 on packed-half units.
var fmaWidths = []int{1, 2, 4, 8, 16}

// An fmaKernel is one FMA micro-kernel: the type of its chains and the
// kernel's name in the program.
type fmaKernel struct {
	name        string // kernel name
	typ         string // OpenCL C type of a chain, e.g. "float8"
	flopsPerFMA int    // 2 per lane
	label       string // for Ceiling.Kernel
}

// fmaSource writes an FMA kernel: fmaChains chains of step after init
// (formats of the chain's number, as %[1]d),
// summed into out so that nothing is optimised away. The operands a and b
// arrive as floats and are converted once to av and bv.
func fmaSource(k fmaKernel, init, step string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel void %s(global %s *out, float a, float b, int iters) {\n", k.name, k.typ)
	fmt.Fprintf(&b, "\tconst %[1]s av = (%[1]s)a, bv = (%[1]s)b;\n", k.typ)
	for i := range fmaChains {
		fmt.Fprintf(&b, "\t%s x%d = %s;\n", k.typ, i, fmt.Sprintf(init, i))
	}
	b.WriteString("\tfor (int i = 0; i < iters; i++) {\n")
	for range fmaSteps {
		b.WriteString("\t\t")
		for i := range fmaChains {
			fmt.Fprintf(&b, step+" ", i)
		}
		b.WriteString("\n")
	}
	b.WriteString("\t}\n\tout[get_global_id(0)] = x0")
	for i := 1; i < fmaChains; i++ {
		fmt.Fprintf(&b, " + x%d", i)
	}
	b.WriteString(";\n}\n")
	return b.String()
}

// fmaKernels are the FMA kernels of one element type ("float", "double",
// "half") at every width, and their source: chains of x = fma(x, a, b)
// with a = 0.999 and b = 0.001, which converge to 1 and never overflow.
func fmaKernels(elem string) ([]fmaKernel, string) {
	var ks []fmaKernel
	var src strings.Builder
	for _, w := range fmaWidths {
		typ := elem
		if w > 1 {
			typ = fmt.Sprintf("%s%d", elem, w)
		}
		k := fmaKernel{name: "fma_" + typ, typ: typ, flopsPerFMA: 2 * w, label: fmt.Sprintf("%s x%d chains", typ, fmaChains)}
		ks = append(ks, k)
		init := "(" + typ + ")(get_local_id(0) %% 7) * (" + typ + ")0.125f + (" + typ + ")(%[1]d %% 3)"
		src.WriteString(fmaSource(k, init, "x%[1]d = fma(x%[1]d, av, bv);"))
	}
	return ks, src.String()
}

// copySource is the bandwidth kernel: each work-item moves one float4.
const copySource = `kernel void copy(global const float4 *src, global float4 *dst) {
	size_t i = get_global_id(0);
	dst[i] = src[i];
}
`

// nvidiaSource holds the ceilings only inline PTX reaches on NVIDIA's
// OpenCL, which has no cl_khr_fp16: half FMAs as fma.rn.f16x2 on pairs
// packed in a uint, and the tensor cores through mma.sync.m16n8k16 (f16
// in, f32 accumulators; mmaChains independent accumulator fragments per
// warp; the fragment layouts are those of compiler/emit/opencl/mma.go,
// but the values do not matter for the rate).
func nvidiaSource() string {
	var b strings.Builder
	// av and bv are unused there: the half pairs arrive packed in ha, hb.
	f16 := fmaSource(fmaKernel{name: "fma_f16x2_ptx", typ: "uint"}, "0x38003800u + %[1]d",
		`__asm__("fma.rn.f16x2 %%0, %%0, %%1, %%2;" : "+r"(x%[1]d) : "r"(ha), "r"(hb));`)
	b.WriteString(strings.Replace(f16, "float a, float b,", "float a, float b, uint ha, uint hb,", 1))
	b.WriteString("kernel void mma_f16(global float *out, uint a, uint b, int iters) {\n")
	b.WriteString("\tconst uint a0 = a, a1 = a ^ 1u, a2 = a ^ 2u, a3 = a ^ 3u, b0 = b, b1 = b ^ 1u;\n")
	for i := range mmaChains {
		fmt.Fprintf(&b, "\tfloat d%d0 = 0.0f, d%d1 = 0.0f, d%d2 = 0.0f, d%d3 = (float)get_local_id(0);\n", i, i, i, i)
	}
	b.WriteString("\tfor (int i = 0; i < iters; i++) {\n")
	for range mmaSteps {
		for i := range mmaChains {
			fmt.Fprintf(&b, "\t\t__asm__ volatile (\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};\" : \"+f\"(d%[1]d0), \"+f\"(d%[1]d1), \"+f\"(d%[1]d2), \"+f\"(d%[1]d3) : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));\n", i)
		}
	}
	b.WriteString("\t}\n\tout[get_global_id(0)] = 0.0f")
	for i := range mmaChains {
		fmt.Fprintf(&b, " + d%[1]d0 + d%[1]d1 + d%[1]d2 + d%[1]d3", i)
	}
	b.WriteString(";\n}\n")
	return b.String()
}

// MeasurePeak measures the device's copy bandwidth and FMA throughput in
// every element type it computes (and, on NVIDIA, half FMAs and the
// tensor cores through inline PTX) with device-event timing: warm-up
// launches first, then the fastest of Repeats. Each FMA ceiling is the best
// of its kernels (fmaWidths); a ceiling the device cannot measure is
// listed in Skipped with the reason.
func MeasurePeak(d Device, opt PeakOptions) (Peak, error) {
	info := d.Info()
	opt = opt.withDefaults(info)
	peak := Peak{Device: info.Name, Driver: info.Driver, Runtime: info.Runtime}
	prog, err := d.BuildSource(copySource, "")
	if err != nil {
		return peak, fmt.Errorf("copy kernel: %w", err)
	}
	defer prog.Release()
	local := min(256, info.MaxWorkGroupSize)
	c, err := measureCopy(d, prog, opt, local)
	if err != nil {
		return peak, err
	}
	peak.Ceilings = append(peak.Ceilings, c)
	for _, t := range []struct {
		elem, name string
		size       int
		have       bool
		why        string
	}{
		{"float", "fma_f32", 4, true, ""},
		{"double", "fma_f64", 8, info.FP64, "no fp64"},
		{"half", "fma_f16", 2, info.FP16, "no cl_khr_fp16"},
	} {
		if !t.have {
			if t.name != "fma_f16" || !info.IsNVIDIA() { // NVIDIA measures f16 through PTX below
				peak.Skipped = append(peak.Skipped, t.name+": "+t.why)
			}
			continue
		}
		c, err := bestFMA(d, opt, local, t.elem, t.size)
		if err != nil {
			return peak, fmt.Errorf("%s: %w", t.name, err)
		}
		c.Name = t.name
		peak.Ceilings = append(peak.Ceilings, c)
	}
	if info.IsNVIDIA() {
		peak.Ceilings, peak.Skipped = measureNVIDIA(d, opt, local, peak.Ceilings, peak.Skipped)
	}
	return peak, nil
}

// bestFMA measures the FMA kernels of one element type and returns the
// fastest.
func bestFMA(d Device, opt PeakOptions, local int, elem string, size int) (Ceiling, error) {
	ks, src := fmaKernels(elem)
	if elem == "half" {
		src = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" + src
	}
	if elem == "double" {
		src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + src
	}
	prog, err := d.BuildSource(src, "")
	if err != nil {
		return Ceiling{}, fmt.Errorf("FMA kernels: %w", err)
	}
	defer prog.Release()
	// Screen every kernel at every work-group size with short launches,
	// then measure the fastest with the full protocol.
	screen := PeakOptions{Repeats: 3, TargetNS: max(opt.TargetNS/8, 1_000_000)}
	args := []Arg{F32(0.999), F32(0.001)}
	var best Ceiling
	var bestKernel fmaKernel
	bestLocal := local
	for _, k := range ks {
		for _, l := range fmaLocals(d.Info(), local) {
			c, err := measureFMA(d, prog, screen, l, k, args, size*k.flopsPerFMA/2)
			if err != nil {
				return Ceiling{}, fmt.Errorf("%s: %w", k.typ, err)
			}
			if c.Value > best.Value {
				best, bestKernel, bestLocal = c, k, l
			}
		}
	}
	c, err := measureFMA(d, prog, opt, bestLocal, bestKernel, args, size*bestKernel.flopsPerFMA/2)
	if err != nil {
		return Ceiling{}, fmt.Errorf("%s: %w", bestKernel.typ, err)
	}
	c.Kernel += fmt.Sprintf(", work-groups of %d", bestLocal)
	return c, nil
}

// fmaLocals are the work-group sizes the FMA kernels are tried at: on a
// CPU, where PoCL runs a work-group's items in a loop on one thread and
// the size changes how it compiles the loop, 16 and the usual size; on a
// GPU the usual size, a multiple of every warp or subgroup.
func fmaLocals(info Info, local int) []int {
	if info.Type == "cpu" && local > 16 {
		return []int{16, local}
	}
	return []int{local}
}

// float16Bits is v rounded to the nearest IEEE half, as bits; v is a
// normal number well inside the half range.
func float16Bits(v float64) uint16 {
	bits := math.Float32bits(float32(v))
	sign := uint16(bits>>16) & 0x8000
	exp := int((bits>>23)&0xff) - 127 + 15
	mant := bits & 0x7fffff
	half := uint32(exp)<<10 | mant>>13
	if mant&0x1000 != 0 { // round half up on the dropped bits
		half++
	}
	return sign | uint16(half)
}

// measureNVIDIA adds the ceilings of NVIDIA's inline PTX: half FMAs
// (fma.rn.f16x2) and the tensor cores (mma.sync). A driver that refuses
// the PTX skips them with its reason; the other ceilings stand.
func measureNVIDIA(d Device, opt PeakOptions, local int, cs []Ceiling, skipped []string) ([]Ceiling, []string) {
	prog, err := d.BuildSource(nvidiaSource(), "")
	if err != nil {
		return cs, append(skipped, "fma_f16, mma_f16: the inline PTX did not build: "+firstLine(err.Error()))
	}
	defer prog.Release()
	half := [2]uint16{float16Bits(0.999), float16Bits(0.001)}
	pair := func(h uint16) Arg { return Raw(binary.LittleEndian.AppendUint32(nil, uint32(h)|uint32(h)<<16)) }
	f16 := fmaKernel{name: "fma_f16x2_ptx", typ: "uint", flopsPerFMA: 4, label: fmt.Sprintf("fma.rn.f16x2 (PTX) x%d chains", fmaChains)}
	if c, err := measureFMA(d, prog, opt, local, f16, []Arg{F32(0), F32(0), pair(half[0]), pair(half[1])}, 4); err != nil {
		skipped = append(skipped, "fma_f16: "+firstLine(err.Error()))
	} else {
		c.Name = "fma_f16"
		cs = append(cs, c)
	}
	// 2·16·8·16 flops per mma.sync of a warp: 128 per work-item.
	mma := fmaKernel{name: "mma_f16", typ: "float", flopsPerFMA: 128, label: fmt.Sprintf("mma.sync.m16n8k16 f16→f32 (PTX) x%d accumulators per warp", mmaChains)}
	small := pair(float16Bits(0.001))
	if c, err := measureKernel(d, prog, opt, local, mma, []Arg{small, small}, 4, mmaChains*mmaSteps); err != nil {
		skipped = append(skipped, "mma_f16: "+firstLine(err.Error()))
	} else {
		c.Name = "mma_f16"
		cs = append(cs, c)
	}
	return cs, skipped
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
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

// measureFMA times an FMA kernel; outBytes is the size of one work-item's
// result.
func measureFMA(d Device, prog Program, opt PeakOptions, local int, k fmaKernel, args []Arg, outBytes int) (Ceiling, error) {
	return measureKernel(d, prog, opt, local, k, args, outBytes, fmaChains*fmaSteps)
}

// measureKernel calibrates the iteration count of a throughput kernel so
// that one launch lasts about opt.TargetNS, then times it. Each loop trip
// of a work-item issues opsPerIter operations of k.flopsPerFMA flops.
func measureKernel(d Device, prog Program, opt PeakOptions, local int, k fmaKernel, args []Arg, outBytes, opsPerIter int) (Ceiling, error) {
	kern, err := prog.Kernel(k.name)
	if err != nil {
		return Ceiling{}, err
	}
	defer kern.Release()
	// Enough work-groups to fill every compute unit several times over.
	global := max(1, d.Info().ComputeUnits) * 16 * local
	out, err := d.Alloc(int64(global * outBytes))
	if err != nil {
		return Ceiling{}, err
	}
	defer out.Release()
	run := func(iters, repeats int) ([]int64, error) {
		all := append(append([]Arg{Buf(out)}, args...), I32(int32(iters)))
		if err := kern.SetArgs(all...); err != nil {
			return nil, err
		}
		return timeLaunches(kern, []int{global}, []int{local}, repeats)
	}
	probe, err := run(calibrationIters, 3)
	if err != nil {
		return Ceiling{}, err
	}
	iters := calibrationIters * int(opt.TargetNS/max(1, slices.Min(probe)))
	iters = min(max(iters, calibrationIters), 1<<24)
	samples, err := run(iters, opt.Repeats)
	if err != nil {
		return Ceiling{}, err
	}
	flops := float64(global) * float64(iters) * float64(opsPerIter*k.flopsPerFMA)
	c := ceiling("", "GFLOP/s", flops, samples)
	c.Kernel = k.label
	return c, nil
}

// timeLaunches launches the kernel peakWarmups times untimed, then repeats
// times, back to back, and returns the device times.
func timeLaunches(k Kernel, global, local []int, repeats int) ([]int64, error) {
	next, stop := BackToBack(func() (Event, error) { return k.Launch(global, local) })
	defer stop()
	samples := make([]int64, 0, repeats)
	for i := range peakWarmups + repeats {
		ns, err := next()
		if err != nil {
			return nil, err
		}
		if i >= peakWarmups {
			samples = append(samples, ns)
		}
	}
	if stats.Median(samples) <= 0 {
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

// ceiling is the rate of the fastest launch: a ceiling is the most the
// device can do, and on a shared machine a launch is slowed by other work
// far more often than sped up (the raw samples are kept).
func ceiling(name, unit string, work float64, samples []int64) Ceiling {
	// work per nanosecond is GB/s or GFLOP/s.
	return Ceiling{Name: name, Unit: unit, Work: work, Value: work / float64(slices.Min(samples)), SamplesNS: samples}
}
