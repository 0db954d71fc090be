package device

import (
	"fmt"
	"strings"

	"tltune/device/internal/ze"
)

// probeLevelZero lists the Level Zero devices. The loader alone is not
// enough: without a driver (intel-level-zero-gpu) zeInit fails with
// ZE_RESULT_ERROR_UNINITIALIZED, which is a Status, not an error.
func probeLevelZero() ([]Info, Status) {
	loader := envOr("TLTUNE_ZE_LOADER", zeLoader)
	st := Status{Runtime: LevelZero, Library: loader}
	noDriver := func() ([]Info, Status) {
		st.Note = "loader found, no driver or device"
		st.Err = &MissingError{Runtime: "Level Zero", Library: loader, Package: zeDriverPackage, Detail: st.Note}
		return nil, st
	}
	if !ze.Load(loader) {
		st.Note = "loader " + loader + " not found"
		st.Err = &MissingError{Runtime: "Level Zero", Library: loader, Package: zePackage}
		return nil, st
	}
	if err := ze.Init(); err != nil {
		return noDriver()
	}
	drivers, err := ze.Drivers()
	if err != nil {
		return noDriver()
	}
	var infos []Info
	for _, drv := range drivers {
		devs, err := drv.Devices()
		if err != nil {
			continue
		}
		for _, d := range devs {
			info, err := zeInfo(drv, d)
			if err != nil {
				continue
			}
			info.ID = fmt.Sprintf("ze:%d", len(infos))
			infos = append(infos, info)
		}
	}
	if len(infos) == 0 {
		return noDriver()
	}
	st.Devices = len(infos)
	st.Note = fmt.Sprintf("%d device(s) on %d driver(s)", len(infos), len(drivers))
	return infos, st
}

func zeInfo(drv ze.Driver, d ze.Device) (Info, error) {
	p, err := d.Properties()
	if err != nil {
		return Info{}, err
	}
	version, _ := drv.Version()
	info := Info{
		Runtime:          LevelZero,
		Type:             p.Type,
		Name:             p.Name,
		Vendor:           pciVendor(p.VendorID),
		Driver:           zeDriverVersion(version),
		Platform:         "Level Zero",
		Version:          "SPIR-V " + p.SPIRVVersion,
		ComputeUnits:     int(p.EUs),
		ClockMHz:         int(p.ClockMHz),
		GlobalMemBytes:   p.GlobalMemBytes,
		MaxAllocBytes:    p.MaxAllocBytes,
		LocalMemBytes:    uint64(p.LocalMemBytes),
		CacheBytes:       p.CacheBytes,
		MaxWorkGroupSize: int(p.MaxGroupSize),
		MaxWorkItemSizes: [3]int{int(p.MaxGroupSizes[0]), int(p.MaxGroupSizes[1]), int(p.MaxGroupSizes[2])},
		Extensions:       drv.Extensions(),
		ILVersions:       []string{"SPIR-V_" + p.SPIRVVersion},
		FP16:             p.FP16,
		FP64:             p.FP64,
	}
	for _, s := range p.SubgroupSizes {
		info.SubgroupSizes = append(info.SubgroupSizes, int(s))
	}
	info.open = func(i Info) (Device, error) { return openLevelZero(i, d, p) }
	return info, nil
}

// zeDriverVersion spells the driver version number the way Intel's compute
// runtime packs it: major in bits 31-24, minor in 23-16, build in 15-0.
func zeDriverVersion(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>24, v>>16&0xff, v&0xffff)
}

func pciVendor(id uint32) string {
	switch id {
	case 0x8086:
		return "Intel"
	case 0x10de:
		return "NVIDIA"
	case 0x1002:
		return "AMD"
	}
	return fmt.Sprintf("PCI vendor 0x%04x", id)
}

// zeDevice is an opened Level Zero device.
type zeDevice struct {
	info  Info
	props ze.Properties
	q     *ze.Queue
}

func openLevelZero(info Info, d ze.Device, p ze.Properties) (Device, error) {
	q, err := ze.NewQueue(d)
	if err != nil {
		return nil, classifyZE(err)
	}
	return &zeDevice{info: info, props: p, q: q}, nil
}

func (d *zeDevice) Info() Info   { return d.info }
func (d *zeDevice) Close() error { return classifyZE(d.q.Release()) }

func (d *zeDevice) Alloc(size int64) (Buffer, error) {
	m, err := d.q.Alloc(size)
	if err != nil {
		return nil, classifyZE(err)
	}
	return &zeBuffer{q: d.q, m: m, size: size}, nil
}

// BuildSource compiles OpenCL C to SPIR-V with clang-15 and llvm-spirv-15
// (Level Zero consumes SPIR-V only); the options go to clang.
func (d *zeDevice) BuildSource(src, options string) (Program, error) {
	spv, err := CompileOpenCLC(src, strings.Fields(options)...)
	if err != nil {
		return nil, err
	}
	return d.BuildSPIRV(spv, "")
}

func (d *zeDevice) BuildSPIRV(spv []byte, options string) (Program, error) {
	m, log, err := d.q.BuildModule(spv, options)
	if err != nil {
		return nil, &BuildError{Log: log, Err: classifyZE(err)}
	}
	return &zeProgram{m: m, log: log, props: &d.props}, nil
}

func (d *zeDevice) BuildBinary(bin []byte, options string) (Program, error) {
	m, log, err := d.q.ModuleFromNative(bin, options)
	if err != nil {
		return nil, &BuildError{Log: log, Err: classifyZE(err)}
	}
	return &zeProgram{m: m, log: log, props: &d.props}, nil
}

func (d *zeDevice) BuildSPIR([]byte, string) (Program, error) {
	return nil, fmt.Errorf("SPIR bitcode is an OpenCL format (cl_khr_spir); give Level Zero the SPIR-V: %w", ErrUnsupported)
}

type zeProgram struct {
	m     *ze.Module
	log   string
	props *ze.Properties
}

func (p *zeProgram) Log() string { return p.log }

func (p *zeProgram) Binary() ([]byte, error) {
	b, err := p.m.NativeBinary()
	return b, classifyZE(err)
}
func (p *zeProgram) Release() error { return classifyZE(p.m.Release()) }

func (p *zeProgram) Kernel(name string) (Kernel, error) {
	k, err := p.m.Kernel(name)
	if err != nil {
		return nil, classifyZE(err)
	}
	return &zeKernel{k: k, props: p.props}, nil
}

type zeKernel struct {
	k     *ze.Kernel
	props *ze.Properties
}

func (k *zeKernel) SetArgs(args ...Arg) error { return setArgs(k, args) }
func (k *zeKernel) Release() error            { return classifyZE(k.k.Release()) }

func (k *zeKernel) setBytes(i int, v []byte) error { return classifyZE(k.k.SetBytes(i, v)) }
func (k *zeKernel) setLocal(i int, size int) error { return classifyZE(k.k.SetLocal(i, size)) }

func (k *zeKernel) setBuffer(i int, b Buffer) error {
	zb, ok := b.(*zeBuffer)
	if !ok {
		return fmt.Errorf("kernel argument %d: buffer of another runtime", i)
	}
	return classifyZE(k.k.SetMem(i, zb.m))
}

// Launch turns OpenCL-style sizes into Level Zero's group size and group
// count. The list is synchronous, so the kernel has run when Launch returns.
func (k *zeKernel) Launch(global, local []int) (Event, error) {
	if err := checkRange(global, local); err != nil {
		return nil, err
	}
	g := [3]uint32{1, 1, 1}
	for i, x := range global {
		g[i] = uint32(x)
	}
	group := [3]uint32{1, 1, 1}
	if local == nil {
		var err error
		if group, err = k.k.SuggestGroup(g); err != nil {
			return nil, classifyZE(err)
		}
	} else {
		for i, x := range local {
			group[i] = uint32(x)
		}
	}
	var count [3]uint32
	for i := range count {
		if group[i] == 0 || g[i]%group[i] != 0 {
			return nil, fmt.Errorf("launch: global size %v is not a multiple of group size %v: %w", global, group, ErrWorkGroupSize)
		}
		count[i] = g[i] / group[i]
	}
	ev, err := k.k.Launch(group, count)
	if err != nil {
		return nil, classifyZE(err)
	}
	return &zeEvent{e: ev, props: k.props}, nil
}

type zeEvent struct {
	e     *ze.Event
	props *ze.Properties
}

func (e *zeEvent) Wait() error    { return classifyZE(e.e.Wait()) }
func (e *zeEvent) Release() error { return classifyZE(e.e.Release()) }

// Nanoseconds converts the kernel's timestamps, which count device timer
// ticks in TimestampBits bits and may wrap once during a kernel.
func (e *zeEvent) Nanoseconds() (int64, error) {
	start, end, err := e.e.Ticks()
	if err != nil {
		return 0, classifyZE(err)
	}
	bits := e.props.TimestampBits
	if bits == 0 || bits > 64 {
		bits = 64
	}
	mask := ^uint64(0) >> (64 - bits)
	ticks := (end - start) & mask
	return int64(float64(ticks) * e.props.TimerNS), nil
}

type zeBuffer struct {
	q    *ze.Queue
	m    ze.Mem
	size int64
}

func (b *zeBuffer) Size() int64 { return b.size }

func (b *zeBuffer) Write(src []byte) error {
	if err := checkFits(len(src), b.size); err != nil {
		return err
	}
	return classifyZE(b.q.Write(b.m, 0, src))
}

func (b *zeBuffer) WriteRepeated(period []byte) error {
	return classifyZE(writeRepeated(b.size, period,
		func(off int64, src []byte) error { return b.q.Write(b.m, off, src) },
		func(src, dst, n int64) error { return b.q.CopyWithin(b.m, src, dst, n) }))
}

func (b *zeBuffer) Read(dst []byte) error {
	if err := checkFits(len(dst), b.size); err != nil {
		return err
	}
	return classifyZE(b.q.Read(b.m, dst))
}

func (b *zeBuffer) Fill(pattern []byte) error { return classifyZE(b.q.Fill(b.m, pattern, b.size)) }
func (b *zeBuffer) Release() error            { return classifyZE(b.q.Free(b.m)) }
