package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"tltune/compiler/hostcall/devcall"
	"tltune/device"
	"tltune/tuner"
)

// Builder processes. A driver may build one program at a time per process:
// NVIDIA's OpenCL does (measured on an H100, driver 580.159.04: 16 programs
// of one GEMM kernel took 1.44 s one after another and 1.75 s on 16
// threads of one process, while 16 processes built one each side by side
// in 0.08-0.23 s apiece). So a worker may start builders: tltune workers
// of their own that open the same device only to build programs and hand
// back their binaries, which the worker loads (clCreateProgramWithBinary:
// 16 programs and their kernels in 1-3 ms on that H100). The worker itself
// is one more builder, so the builders only add to what it did alone:
// builds start at once, before any builder is ready, and a builder that
// dies or whose binary the driver refuses costs a build in the worker, which
// then fails as it would have without builders (and a crash there is the
// configuration's, as ever).
//
// (NVIDIA's lock is the context's: two contexts of one process built 40
// PTX programs in 1.0-1.3 s where one took 1.9-2.6 s, on an H200. But a
// context costs as much as a process: 1.3-1.7 s to create there, either
// way.)
//
// Builders start on demand, one for each build the binary cache could not
// supply, up to their number: a run whose programs all come from the cache
// starts none. Starting one is no small thing (a process that opens the
// device, which creates a driver context on the GPU: 0.6 s alone on that
// H100, 1.4-1.7 s on the H200, 2.4-2.9 s apiece when eight start at once
// there), and it should not compete with a run that has nothing to build.
// A run that will build asks for them all at once (request.Prestart): they
// then open the device while the worker does, and each builds a trivial
// program first (warmUp), so that neither cost falls on the run's first
// builds.

// builders is a worker's pool of builder processes.
type builders struct {
	// slots holds the free builders, and nil for the worker itself: a
	// build takes one and gives it back.
	slots  chan *proc
	nextID atomic.Uint64

	launch Launcher
	spec   string // the device the builders open
	max    int    // the builders to start at most

	mu      sync.Mutex
	procs   []*proc // every builder started, for close
	started int     // builders started, those that failed included
	warm    bool    // builders started from now on warm up (startAll)
	closed  bool    // close has run: a builder that starts now is killed
}

// newBuilders returns a pool of up to n builders of device spec, started
// with launch as builds need them.
func newBuilders(launch Launcher, spec string, n int) *builders {
	b := &builders{slots: make(chan *proc, n+1), launch: launch, spec: spec, max: n}
	b.slots <- nil
	return b
}

// startAll starts every builder not started yet, in the background, each
// warming its driver's compiler once it has opened the device.
func (b *builders) startAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.warm = true
	for b.started < b.max {
		b.started++
		go b.start(b.started)
	}
}

// grow starts one more builder, unless all have started, in the
// background: it joins the pool once it has opened the device. One that
// fails to start is left out.
func (b *builders) grow() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started == b.max {
		return
	}
	b.started++
	go b.start(b.started)
}

// count is how many builders have started.
func (b *builders) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started
}

func (b *builders) start(gen int) {
	p, err := startProc(b.launch, gen)
	if err != nil {
		return
	}
	b.mu.Lock()
	closed, warm := b.closed, b.warm
	if !closed {
		b.procs = append(b.procs, p)
	}
	b.mu.Unlock()
	if closed {
		p.kill()
		return
	}
	if _, err := b.call(context.Background(), p, request{Op: opOpen, Device: b.spec, Warm: warm}); err != nil {
		p.kill()
		return
	}
	b.slots <- p
}

// call sends req to builder p; a failure it reports is a classified
// error.
func (b *builders) call(ctx context.Context, p *proc, req request) (reply, error) {
	req.ID = b.nextID.Add(1)
	rep, err := p.call(ctx, req, 0)
	if err == nil && rep.Kind != "" {
		err = tuner.Fail(rep.Kind, errors.New(rep.Err))
	}
	return rep, err
}

// build builds form for d on a free builder, or in this worker when the
// worker's own slot is the free one; builder says which did. The driver's
// refusal of the program in a builder is the build's outcome; any other
// failure there (its death, a binary this process's driver refuses) has
// the program built here, so that its error or crash is this worker's own.
func (b *builders) build(d device.Device, form devcall.Form, here buildFunc) (prog device.Program, builder bool, err error) {
	b.grow()
	p := <-b.slots
	if p == nil {
		defer func() { b.slots <- nil }()
		prog, err = here(d, form)
		return prog, false, err
	}
	rep, err := b.call(context.Background(), p, request{Op: opCompile, Program: form})
	if _, died := isDeath(err); !died {
		b.slots <- p
	}
	switch {
	case err == nil:
		if prog, err := d.BuildBinary(rep.Binary, ""); err == nil {
			return prog, true, nil
		}
	case kindOf(err) == tuner.CompileError:
		return nil, true, err
	}
	prog, err = here(d, form)
	return prog, false, err
}

// buildFunc builds a program in this process.
type buildFunc func(device.Device, devcall.Form) (device.Program, error)

// close ends every builder.
func (b *builders) close() {
	b.mu.Lock()
	procs := b.procs
	b.procs, b.closed = nil, true
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.close)
	}
	wg.Wait()
}

// compile builds req's program on the builder's device and replies with
// its binary: the builder's side of builders.build.
func (s *Server) compile(req request) reply {
	d := s.device()
	if d == nil {
		return fail(req, errNoDevice, tuner.LaunchError)
	}
	prog, err := s.buildHere(d, req.Program)
	if err != nil {
		return fail(req, err, tuner.CompileError)
	}
	defer prog.Release()
	bin, err := prog.Binary()
	if err != nil {
		return fail(req, err, tuner.LaunchError)
	}
	return reply{ID: req.ID, Binary: bin}
}
