package device

import (
	"fmt"
	"strings"

	"tltune/device/internal/cl"
)

// probeOpenCL lists the OpenCL devices: the loader's platforms first, then
// those of vendor libraries the loader does not know (no .icd file).
func probeOpenCL() ([]Info, Status) {
	loader := envOr("TLTUNE_OPENCL_LOADER", openCLLoader)
	disc := cl.Discover(loader, vendorLibraries())
	st := Status{Runtime: OpenCL, Library: loader, Extra: disc.Vendors}
	var infos []Info
	for _, p := range disc.Platforms {
		devs, err := p.Devices()
		if err != nil {
			continue // a broken platform must not hide the others
		}
		for _, d := range devs {
			info := openCLInfo(p, d)
			info.ID = fmt.Sprintf("opencl:%d", len(infos))
			infos = append(infos, info)
		}
	}
	st.Devices = len(infos)
	switch {
	case len(infos) > 0:
		st.Note = fmt.Sprintf("%d device(s) on %d platform(s)", len(infos), len(disc.Platforms))
	case !disc.LoaderFound && len(disc.Platforms) == 0:
		st.Err = &MissingError{Runtime: "OpenCL", Library: loader, Package: openCLPackage}
		st.Note = "loader " + loader + " not found"
	default:
		st.Err = &MissingError{Runtime: "OpenCL", Library: loader, Package: openCLDriverPkg, Detail: "loader found, no platform or device"}
		st.Note = "loader found, no platform or device"
	}
	return infos, st
}

func openCLInfo(p cl.Platform, d cl.Device) Info {
	info := Info{
		Runtime:          OpenCL,
		Type:             clType(cl.Uint(d, cl.DeviceType)),
		Name:             cl.String(d, cl.DeviceName),
		Vendor:           cl.String(d, cl.DeviceVendor),
		Driver:           cl.String(d, cl.DriverVersion),
		Platform:         cl.String(p, cl.PlatformName),
		Version:          cl.String(d, cl.DeviceVersion),
		OpenCLC:          cl.String(d, cl.DeviceOpenCLCVersion),
		ComputeUnits:     int(cl.Uint(d, cl.DeviceComputeUnits)),
		ClockMHz:         int(cl.Uint(d, cl.DeviceClockMHz)),
		GlobalMemBytes:   cl.Uint(d, cl.DeviceGlobalMemSize),
		MaxAllocBytes:    cl.Uint(d, cl.DeviceMaxMemAllocSize),
		LocalMemBytes:    cl.Uint(d, cl.DeviceLocalMemSize),
		CacheBytes:       cl.Uint(d, cl.DeviceCacheSize),
		MaxWorkGroupSize: int(cl.Uint(d, cl.DeviceMaxWorkGroupSize)),
		Extensions:       strings.Fields(cl.String(d, cl.DeviceExtensions)),
		ILVersions:       strings.Fields(cl.String(d, cl.DeviceILVersion)),
	}
	for i, s := range cl.Sizes(d, cl.DeviceMaxWorkItemSizes) {
		if i < 3 {
			info.MaxWorkItemSizes[i] = int(s)
		}
	}
	info.FP16 = info.HasExtension("cl_khr_fp16")
	info.FP64 = info.HasExtension("cl_khr_fp64") || cl.Uint(d, cl.DeviceDoubleFPConfig) != 0
	info.SubgroupSizes = clSubgroupSizes(&info, d)
	info.open = func(i Info) (Device, error) { return openOpenCL(i, d) }
	return info
}

func clType(t uint64) string {
	switch {
	case t&cl.TypeGPU != 0:
		return "gpu"
	case t&cl.TypeCPU != 0:
		return "cpu"
	case t&cl.TypeAccelerator != 0:
		return "accelerator"
	}
	return "other"
}

// clSubgroupSizes reads the sizes from the vendor queries that exist:
// Intel's list (cl_intel_required_subgroup_size) or NVIDIA's warp size.
// Core OpenCL has no device-level query, so other devices report none.
func clSubgroupSizes(info *Info, d cl.Device) []int {
	var sizes []int
	if info.HasExtension("cl_intel_required_subgroup_size") {
		for _, s := range cl.Sizes(d, cl.DeviceSubGroupSizesIntel) {
			sizes = append(sizes, int(s))
		}
	}
	if len(sizes) == 0 && info.HasExtension("cl_nv_device_attribute_query") {
		if w := cl.Uint(d, cl.DeviceWarpSizeNV); w > 0 {
			sizes = []int{int(w)}
		}
	}
	return sizes
}

// clDevice is an opened OpenCL device.
type clDevice struct {
	info Info
	q    *cl.Queue
}

func openOpenCL(info Info, d cl.Device) (Device, error) {
	q, err := cl.NewQueue(d)
	if err != nil {
		return nil, classifyCL(err)
	}
	return &clDevice{info: info, q: q}, nil
}

func (d *clDevice) Info() Info   { return d.info }
func (d *clDevice) Close() error { return classifyCL(d.q.Release()) }

func (d *clDevice) Alloc(size int64) (Buffer, error) {
	m, err := d.q.CreateBuffer(size)
	if err != nil {
		return nil, classifyCL(err)
	}
	return &clBuffer{q: d.q, m: m, size: size}, nil
}

func (d *clDevice) BuildSource(src, options string) (Program, error) {
	p, err := d.q.ProgramFromSource(src)
	return d.build(p, err, options)
}

func (d *clDevice) BuildSPIRV(spv []byte, options string) (Program, error) {
	if !d.info.AcceptsSPIRV() {
		return nil, fmt.Errorf("%s lists no SPIR-V IL; convert with SPIRVToBitcode and use BuildSPIR: %w", d.info.Name, ErrUnsupported)
	}
	p, err := d.q.ProgramFromIL(spv)
	return d.build(p, err, options)
}

// spirOptions are the build options cl_khr_spir requires for SPIR 1.2.
const spirOptions = "-x spir -spir-std=1.2"

func (d *clDevice) BuildSPIR(bitcode []byte, options string) (Program, error) {
	if !d.info.HasExtension("cl_khr_spir") {
		return nil, fmt.Errorf("%s lacks cl_khr_spir, so it cannot build SPIR bitcode: %w", d.info.Name, ErrUnsupported)
	}
	p, err := d.q.ProgramFromBinary(bitcode)
	return d.build(p, err, strings.TrimSpace(spirOptions+" "+options))
}

func (d *clDevice) BuildBinary(bin []byte, options string) (Program, error) {
	p, err := d.q.ProgramFromBinary(bin)
	return d.build(p, err, options)
}

// build finishes every kind of program: a failed build returns a
// *BuildError with the driver's log.
func (d *clDevice) build(p *cl.Program, err error, options string) (Program, error) {
	if err != nil {
		err = classifyCL(err)
		if isBuild(err) {
			return nil, &BuildError{Log: err.Error(), Err: err}
		}
		return nil, err
	}
	if err := p.Build(options); err != nil {
		log := p.Log()
		p.Release()
		return nil, &BuildError{Log: log, Err: classifyCL(err)}
	}
	return &clProgram{p: p}, nil
}

type clProgram struct{ p *cl.Program }

func (p *clProgram) Log() string { return p.p.Log() }

func (p *clProgram) Binary() ([]byte, error) {
	b, err := p.p.Binary()
	return b, classifyCL(err)
}
func (p *clProgram) Release() error { return classifyCL(p.p.Release()) }

func (p *clProgram) Kernel(name string) (Kernel, error) {
	k, err := p.p.Kernel(name)
	if err != nil {
		return nil, classifyCL(err)
	}
	return &clKernel{k: k}, nil
}

type clKernel struct{ k *cl.Kernel }

func (k *clKernel) SetArgs(args ...Arg) error { return setArgs(k, args) }
func (k *clKernel) Release() error            { return classifyCL(k.k.Release()) }

func (k *clKernel) setBytes(i int, v []byte) error { return classifyCL(k.k.SetBytes(i, v)) }
func (k *clKernel) setLocal(i int, size int) error { return classifyCL(k.k.SetLocal(i, size)) }

func (k *clKernel) setBuffer(i int, b Buffer) error {
	cb, ok := b.(*clBuffer)
	if !ok {
		return fmt.Errorf("kernel argument %d: buffer of another runtime", i)
	}
	return classifyCL(k.k.SetMem(i, cb.m))
}

func (k *clKernel) Launch(global, local []int) (Event, error) {
	if err := checkRange(global, local); err != nil {
		return nil, err
	}
	ev, err := k.k.Enqueue(global, local)
	if err != nil {
		return nil, classifyCL(err)
	}
	return &clEvent{e: ev}, nil
}

type clEvent struct{ e *cl.Event }

func (e *clEvent) Wait() error    { return classifyCL(e.e.Wait()) }
func (e *clEvent) Release() error { return classifyCL(e.e.Release()) }

func (e *clEvent) Nanoseconds() (int64, error) {
	start, end, err := e.e.Times()
	if err != nil {
		return 0, classifyCL(err)
	}
	return int64(end - start), nil
}

type clBuffer struct {
	q    *cl.Queue
	m    cl.Mem
	size int64
}

func (b *clBuffer) Size() int64 { return b.size }

func (b *clBuffer) Write(src []byte) error {
	if err := checkFits(len(src), b.size); err != nil {
		return err
	}
	return classifyCL(b.q.Write(b.m, 0, src))
}

func (b *clBuffer) WriteRepeated(period []byte) error {
	err := writeRepeated(b.size, period,
		func(off int64, src []byte) error { return b.q.Write(b.m, off, src) },
		func(src, dst, n int64) error { return b.q.CopyWithin(b.m, src, dst, n) })
	if err == nil {
		err = b.q.Finish()
	}
	return classifyCL(err)
}

func (b *clBuffer) Read(dst []byte) error {
	if err := checkFits(len(dst), b.size); err != nil {
		return err
	}
	return classifyCL(b.q.Read(b.m, dst))
}

func (b *clBuffer) Fill(pattern []byte) error { return classifyCL(b.q.Fill(b.m, pattern, b.size)) }
func (b *clBuffer) Release() error            { return classifyCL(b.q.ReleaseBuffer(b.m)) }
