package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"tltune/compiler/hostcall/devcall"
	"tltune/device"
	"tltune/kernels"
	"tltune/tuner"
	"tltune/tuner/bench"
	"tltune/tuner/bincache"
)

// Server is the worker's side: it owns the device, the session of the
// shape being tuned and the programs built for it. Builds run on several
// goroutines at once (drivers build in parallel); everything else runs on
// one goroutine, in the order the requests came, as the device wants.
type Server struct {
	// Open opens the device a spec names.
	Open func(spec string) (device.Device, error)
	// BuildThreads bounds the builds running at once; default GOMAXPROCS.
	BuildThreads int
	// Faults to inject (TLTUNE_FAULT).
	Faults Faults
	// Launch starts a builder process (see builders); nil: the worker
	// builds everything itself.
	Launch Launcher

	mu       sync.Mutex // guards what the build goroutines share: dev, cache, programs, next
	dev      device.Device
	cache    *bincache.Cache // nil: build everything
	builders *builders       // nil: none
	building chan struct{}   // a token per build running in this process
	programs map[uint64]device.Program
	next     uint64

	// Owned by the device goroutine.
	session *bench.Session
	kernels map[kernelKey]device.Kernel

	out *encoder
}

type kernelKey struct {
	handle uint64
	symbol string
}

// Serve answers the requests read from in on out until in ends, then
// releases everything. It returns nil when in ended between frames.
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	s.out = newEncoder(out)
	s.programs = map[uint64]device.Program{}
	s.kernels = map[kernelKey]device.Kernel{}
	threads := s.BuildThreads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	s.building = make(chan struct{}, threads)
	deviceQ := make(chan request, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for req := range deviceQ {
			s.reply(s.onDevice(req))
		}
	})
	dec := newDecoder(in)
	var err error
	for {
		var req request
		if err = dec.Decode(&req); err != nil {
			break
		}
		switch req.Op {
		case opBuild:
			wg.Go(func() { s.reply(s.build(req)) })
		case opCompile:
			wg.Go(func() { s.reply(s.compile(req)) })
		default:
			deviceQ <- req
		}
	}
	close(deviceQ)
	wg.Wait()
	s.close()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// reply writes rep; a failure means the parent is gone, and the next read
// ends the worker.
func (s *Server) reply(rep reply) {
	if rep.ID == 0 {
		return // a request without reply (release)
	}
	_ = s.out.send(rep)
}

// fail is the reply to req for err, classified with fallback.
func fail(req request, err error, fallback tuner.Kind) reply {
	e := Classify(err, fallback)
	return reply{ID: req.ID, Kind: e.Kind, Err: e.Err.Error()}
}

func (s *Server) device() device.Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dev
}

var errNoDevice = errors.New("the worker has no device open")

// build builds a program, or loads its kernels' programs from the binary
// cache; it runs on a build goroutine. The reply says how many builders
// have started so far.
func (s *Server) build(req request) reply {
	rep := s.buildOrLoad(req)
	s.mu.Lock()
	if s.builders != nil {
		rep.BuilderProcs = s.builders.count()
	}
	s.mu.Unlock()
	return rep
}

func (s *Server) buildOrLoad(req request) reply {
	d, cache := s.deviceAndCache()
	if d == nil {
		return fail(req, errNoDevice, tuner.LaunchError)
	}
	if rep, ok := s.fromCache(d, cache, req); ok {
		return rep
	}
	prog, builder, err := s.buildProgram(d, req.Program)
	if err != nil {
		return fail(req, err, tuner.CompileError)
	}
	handle := s.add(prog)
	rep := reply{ID: req.ID, Builder: builder}
	for _, k := range req.Program.Kernels {
		rep.Kernels = append(rep.Kernels, builtKernel{handle, k.Symbol})
	}
	if cache != nil && len(req.CacheKeys) == len(req.Program.Kernels) {
		// The cache only saves time: a failure to keep the binary is no
		// failure of the build.
		_ = s.store(d, cache, req, prog)
	}
	return rep
}

// buildProgram builds f on d, through the builders when there are.
func (s *Server) buildProgram(d device.Device, f devcall.Form) (prog device.Program, builder bool, err error) {
	s.mu.Lock()
	b := s.builders
	s.mu.Unlock()
	if b == nil {
		prog, err = s.buildHere(d, f)
		return prog, false, err
	}
	return b.build(d, f, s.buildHere)
}

// buildHere builds f on d in this process, within BuildThreads.
func (s *Server) buildHere(d device.Device, f devcall.Form) (device.Program, error) {
	s.building <- struct{}{}
	defer func() { <-s.building }()
	return f.Build(d)
}

// programKey is the binary-cache key of a program built on d.
func programKey(d device.Device, f devcall.Form) string {
	info := d.Info()
	text := f.Source
	if f.Path == devcall.PathSPIRV {
		text = string(f.SPIRV)
	}
	return bincache.Key("program", info.Name, info.Driver, info.Runtime, "" /* build options */, string(f.Path), text)
}

// store keeps prog's binary, and where each kernel of req is in it.
func (s *Server) store(d device.Device, cache *bincache.Cache, req request, prog device.Program) error {
	bin, err := prog.Binary()
	if err != nil {
		return err
	}
	key := programKey(d, req.Program)
	if err := cache.Put(key, bin); err != nil {
		return err
	}
	for i, k := range req.Program.Kernels {
		if req.CacheKeys[i] != "" {
			if err := cache.Index(req.CacheKeys[i], key, k.Symbol); err != nil {
				return err
			}
		}
	}
	return nil
}

// fromCache loads the programs of req's kernels from the binary cache, when
// every kernel is there.
func (s *Server) fromCache(d device.Device, cache *bincache.Cache, req request) (reply, bool) {
	if cache == nil || len(req.CacheKeys) != len(req.Program.Kernels) || slices.Contains(req.CacheKeys, "") {
		return reply{}, false
	}
	rep := reply{ID: req.ID, Cached: true}
	loaded := map[string]uint64{}
	undo := func() (reply, bool) {
		for _, h := range loaded {
			s.releaseProgram(h)
		}
		return reply{}, false
	}
	for _, key := range req.CacheKeys {
		pk, symbol, ok := cache.Lookup(key)
		if !ok {
			return undo()
		}
		h, ok := loaded[pk]
		if !ok {
			bin, found := cache.Get(pk)
			if !found {
				return undo()
			}
			prog, err := d.BuildBinary(bin, "")
			if err != nil { // a binary the driver no longer takes: build anew
				return undo()
			}
			h = s.add(prog)
			loaded[pk] = h
		}
		rep.Kernels = append(rep.Kernels, builtKernel{h, symbol})
	}
	return rep, true
}

// add gives a built program its handle.
func (s *Server) add(prog device.Program) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.programs[s.next] = prog
	return s.next
}

func (s *Server) deviceAndCache() (device.Device, *bincache.Cache) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dev, s.cache
}

// onDevice serves every request but builds, in order.
func (s *Server) onDevice(req request) reply {
	switch req.Op {
	case opOpen:
		return s.open(req)
	case opPeak:
		d := s.device()
		if d == nil {
			return fail(req, errNoDevice, tuner.LaunchError)
		}
		p, err := device.MeasurePeak(d, req.Peak)
		if err != nil {
			return fail(req, err, tuner.LaunchError)
		}
		return reply{ID: req.ID, Peak: p}
	case opSession:
		return s.startSession(req)
	case opRelease:
		s.release(req.Handle)
		return reply{}
	case opVerify:
		return s.verify(req)
	case opTime:
		return s.time(req)
	case opRun:
		return s.run(req)
	}
	return fail(req, fmt.Errorf("unknown request %d", req.Op), tuner.LaunchError)
}

func (s *Server) open(req request) reply {
	if s.device() != nil {
		return fail(req, errors.New("the worker has a device open already"), tuner.LaunchError)
	}
	var b *builders
	if req.Builders > 0 && s.Launch != nil {
		b = newBuilders(s.Launch, req.Device, req.Builders)
		if req.Prestart {
			b.startAll()
		}
	}
	d, cache, err := s.openDevice(req)
	if err != nil {
		if b != nil {
			b.close()
		}
		return fail(req, err, tuner.LaunchError)
	}
	if req.Warm {
		warmUp(d)
	}
	s.mu.Lock()
	s.dev, s.cache, s.builders = d, cache, b
	s.mu.Unlock()
	return reply{ID: req.ID, Info: d.Info()}
}

// openDevice opens req's device and binary cache.
func (s *Server) openDevice(req request) (device.Device, *bincache.Cache, error) {
	d, err := s.Open(req.Device)
	if err != nil {
		return nil, nil, err
	}
	if req.Cache == "" {
		return d, nil, nil
	}
	cache, err := bincache.Open(req.Cache, 0)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return d, cache, nil
}

// warmProgram is the trivial program a prestarted builder builds.
const warmProgram = "kernel void tltune_warm_up(global int* p) { p[0] = 0; }"

// warmUp builds a trivial OpenCL C program on d and drops it, so that the
// driver's compiler has started before the first real build: NVIDIA's
// first OpenCL C build in a process takes 0.4-0.7 s more than the next
// (NVVM starting; H100 and H200, driver 580.159.04). A failure is left
// for the real builds to meet. Level Zero devices build SPIR-V, which
// this does not warm.
func warmUp(d device.Device) {
	if d.Info().Runtime != device.OpenCL {
		return
	}
	if prog, err := d.BuildSource(warmProgram, ""); err == nil {
		prog.Release()
	}
}

// startSession replaces the session with one for req's recipe.
func (s *Server) startSession(req request) reply {
	d := s.device()
	if d == nil {
		return fail(req, errNoDevice, tuner.LaunchError)
	}
	if s.session != nil {
		s.session.Close()
		s.session = nil
	}
	r, err := kernels.New(req.Session.Spec)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	opt := bench.Options{Seed: req.Session.Seed, VerifyBatch: req.Session.VerifyBatch, Goal: req.Session.Goal}
	if s.session, err = bench.NewSession(d, r, opt); err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	return reply{ID: req.ID, Plan: s.session.Plan()}
}

// kernel returns the kernel of req, looked up by its symbol in its
// program once.
func (s *Server) kernel(req request) (device.Kernel, error) {
	key := kernelKey{req.Handle, req.Kernel.Symbol}
	if k, ok := s.kernels[key]; ok {
		return k, nil
	}
	s.mu.Lock()
	prog, ok := s.programs[req.Handle]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("program %d is not built in this worker", req.Handle)
	}
	k, err := prog.Kernel(req.Kernel.Symbol)
	if err != nil {
		return nil, err
	}
	s.kernels[key] = k
	return k, nil
}

var errNoSession = errors.New("the worker has no session")

// sessionKernel is the kernel of req bound to the session's inputs.
func (s *Server) sessionKernel(req request) (*bench.Kernel, error) {
	if s.session == nil {
		return nil, errNoSession
	}
	k, err := s.kernel(req)
	if err != nil {
		return nil, err
	}
	return bench.NewKernel(req.Kernel, k), nil
}

func (s *Server) verify(req request) reply {
	k, err := s.sessionKernel(req)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	out, err := s.session.Output(k)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	if err := s.Faults.strike(req.Seq, out); err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	return reply{ID: req.ID, Output: *out}
}

func (s *Server) time(req request) reply {
	k, err := s.sessionKernel(req)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	sample, stop, err := s.session.Sampler(k)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	defer stop()
	// The parent enforces the time limit: it kills a worker that does not
	// answer in time.
	res, err := req.Protocol.Run(context.Background(), sample)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	return reply{ID: req.ID, Result: res}
}

// run launches the kernel of req once on its call's arguments and sends
// back every buffer.
func (s *Server) run(req request) reply {
	k, err := s.kernel(req)
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	call := req.Call.call(&req.Kernel)
	if err := devcall.Run(s.device(), k, call); err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	rep := reply{ID: req.ID}
	for _, b := range call.Blobs {
		rep.Blobs = append(rep.Blobs, b.Data)
	}
	return rep
}

// release frees a program and the kernels looked up in it.
func (s *Server) release(handle uint64) {
	for key, k := range s.kernels {
		if key.handle == handle {
			k.Release()
			delete(s.kernels, key)
		}
	}
	s.releaseProgram(handle)
}

// releaseProgram frees a program.
func (s *Server) releaseProgram(handle uint64) {
	s.mu.Lock()
	prog, ok := s.programs[handle]
	delete(s.programs, handle)
	s.mu.Unlock()
	if ok {
		prog.Release()
	}
}

// close releases everything the worker holds.
func (s *Server) close() {
	s.mu.Lock()
	handles := make([]uint64, 0, len(s.programs))
	for h := range s.programs {
		handles = append(handles, h)
	}
	s.mu.Unlock()
	for _, h := range handles {
		s.release(h)
	}
	if s.session != nil {
		s.session.Close()
	}
	if s.builders != nil {
		s.builders.close()
	}
	if d := s.device(); d != nil {
		d.Close()
	}
}
