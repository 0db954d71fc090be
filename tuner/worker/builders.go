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

// builders is a worker's pool of builder processes.
type builders struct {
	// slots holds the free builders, and nil for the worker itself: a
	// build takes one and gives it back.
	slots  chan *proc
	nextID atomic.Uint64

	mu    sync.Mutex
	procs []*proc // every builder started, for close
}

// startBuilders starts n builders of device spec with launch, in the
// background: each joins the pool once it has opened the device. A builder
// that fails to start is left out.
func startBuilders(launch Launcher, spec string, n int) *builders {
	b := &builders{slots: make(chan *proc, n+1)}
	b.slots <- nil
	for i := range n {
		go b.start(launch, spec, i+1)
	}
	return b
}

func (b *builders) start(launch Launcher, spec string, gen int) {
	p, err := startProc(launch, gen)
	if err != nil {
		return
	}
	b.mu.Lock()
	b.procs = append(b.procs, p)
	b.mu.Unlock()
	if _, err := b.call(context.Background(), p, request{Op: opOpen, Device: spec}); err != nil {
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
	b.procs = nil
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
