package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/compiler/hostcall/devcall"
	"tltune/device"
	"tltune/kernels"
	"tltune/tuner"
	"tltune/tuner/measure"
)

// Client is the tuning process's side: it starts workers, sends them
// requests and supervises them (see the package comment). It is safe for
// concurrent use: builds come from the tuner's compile pool while its
// device goroutine verifies and times.
type Client struct {
	// Timeout limits each request of a configuration, from the moment it
	// is sent: a worker that has not answered by then is stuck on it and
	// is killed (a configuration's timeout). 0: no limit.
	Timeout time.Duration
	// Builders is how many builder processes each worker starts beside
	// itself to build programs (see builders); 0: none. Set before Open.
	Builders int
	// Prestart starts each worker's builders as the worker opens the
	// device, not as builds need them: for a run that will build, whose
	// builders then open the device (seconds, on some GPUs) while the
	// worker does. Set before Open.
	Prestart bool

	launch Launcher
	nextID atomic.Uint64

	// Requests hold gate shared; a configuration retried after a crash
	// holds it alone, so that a second crash is its own.
	gate sync.RWMutex

	mu        sync.Mutex
	proc      *proc
	gen       int
	setup     []request              // the device and the session, replayed to each new worker
	suspicion map[string]*DeathError // configurations in flight when a worker died, with that death
	crashed   map[string]*DeathError // configurations that were alone when a worker died
	stats     Stats
}

// Stats counts what happened to the workers of a client.
type Stats struct {
	Started  int // worker processes started
	Died     int // deaths the client did not cause
	Timeouts int // workers killed at a configuration's time limit
	Lost     int // workers retired because their device was lost

	Builds        int // programs built (or loaded) in a worker
	CachedBuilds  int // of which the binary cache supplied the binaries
	BuilderBuilds int // of which a builder process built
	BuilderProcs  int // the most builder processes a worker started
}

// NewClient returns a client that starts workers with launch, the first
// one with the first request.
func NewClient(launch Launcher) *Client {
	return &Client{launch: launch, suspicion: map[string]*DeathError{}, crashed: map[string]*DeathError{}}
}

// Stats returns the counts so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close ends the worker.
func (c *Client) Close() error {
	c.mu.Lock()
	w := c.proc
	c.proc = nil
	c.mu.Unlock()
	if w != nil {
		w.close()
	}
	return nil
}

// Open opens the device a spec names in the worker (and in every worker
// started after it) and returns its properties. cache is the directory of
// the binary cache the worker builds through; "" builds everything.
func (c *Client) Open(ctx context.Context, spec, cache string) (device.Info, error) {
	rep, err := c.setupRequest(ctx, request{Op: opOpen, Device: spec, Cache: cache, Builders: c.Builders, Prestart: c.Prestart}, 0)
	return rep.Info, err
}

// Session prepares a recipe's inputs and timing buffers on the device, in
// place of the previous session (and in every worker started after it).
func (c *Client) Session(ctx context.Context, s Session) (measure.BatchPlan, error) {
	rep, err := c.setupRequest(ctx, request{Op: opSession, Session: s}, 1)
	return rep.Plan, err
}

// Peak measures the device's ceilings.
func (c *Client) Peak(ctx context.Context, opt device.PeakOptions) (device.Peak, error) {
	rep, err := c.do(ctx, "", func(ctx context.Context, w *proc) (reply, error) {
		return c.call(ctx, w, request{Op: opPeak, Peak: opt})
	})
	return rep.Peak, err
}

// setupRequest sends req, which every later worker must receive first too,
// as setup[slot].
func (c *Client) setupRequest(ctx context.Context, req request, slot int) (reply, error) {
	rep, err := c.do(ctx, "", func(ctx context.Context, w *proc) (reply, error) {
		return c.call(ctx, w, req)
	})
	if err == nil {
		c.mu.Lock()
		c.setup = append(c.setup[:min(slot, len(c.setup))], req)
		c.mu.Unlock()
	}
	return rep, err
}

// Program is a compiled program the worker builds, of one or more kernels:
// the form, and where it is built. It is built again in a worker that
// replaced the one it was built in.
type Program struct {
	c         *Client
	form      devcall.Form
	keys      []string // per kernel: the configuration it belongs to, for crash accounting
	cacheKeys []string // per kernel: its key in the binary cache ("": none)

	mu     sync.Mutex
	gen    int           // the worker it is built in; 0: none
	built  []builtKernel // per kernel, where the worker has it
	cached bool          // the last build came from the binary cache
}

// Program makes form known to the client, not built yet. keys name the
// configuration each kernel belongs to (its source hash, say); cacheKeys,
// when given, each kernel's key in the worker's binary cache, which lets a
// worker load kernels built before in other programs.
func (c *Client) Program(form devcall.Form, keys, cacheKeys []string) *Program {
	return &Program{c: c, form: form, keys: keys, cacheKeys: cacheKeys}
}

// key is the crash-accounting key of building p: its kernels'.
func (p *Program) key() string { return strings.Join(p.keys, "+") }

// Build builds p in the worker, unless it is built there already, and
// says whether the binary cache supplied it; seq is the evaluation number
// of its first kernel.
func (p *Program) Build(ctx context.Context, seq int) (cached bool, err error) {
	_, err = p.c.do(ctx, p.key(), func(ctx context.Context, w *proc) (reply, error) {
		return reply{}, p.buildIn(ctx, w, seq)
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cached, err
}

// buildIn builds p in worker w, unless it is built there.
func (p *Program) buildIn(ctx context.Context, w *proc, seq int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == w.gen {
		return nil
	}
	rep, err := p.c.call(ctx, w, request{Op: opBuild, Seq: seq, Program: p.form, CacheKeys: p.cacheKeys})
	if err != nil {
		return err
	}
	if len(rep.Kernels) != len(p.form.Kernels) {
		return fmt.Errorf("the worker built %d kernels of %d", len(rep.Kernels), len(p.form.Kernels))
	}
	p.gen, p.built, p.cached = w.gen, rep.Kernels, rep.Cached
	p.c.count(func(s *Stats) {
		s.Builds++
		if rep.Cached {
			s.CachedBuilds++
		}
		if rep.Builder {
			s.BuilderBuilds++
		}
		s.BuilderProcs = max(s.BuilderProcs, rep.BuilderProcs)
	})
	return nil
}

// Close releases p in the worker it is built in, if that one still runs.
func (p *Program) Close() error {
	p.mu.Lock()
	gen, built := p.gen, p.built
	p.gen, p.built = 0, nil
	p.mu.Unlock()
	c := p.c
	c.mu.Lock()
	w := c.proc
	c.mu.Unlock()
	if gen == 0 || w == nil || w.gen != gen || w.isDead() {
		return nil
	}
	released := map[uint64]bool{}
	for _, b := range built {
		if !released[b.Handle] {
			released[b.Handle] = true
			_ = w.send(request{Op: opRelease, Handle: b.Handle})
		}
	}
	return nil
}

// Kernel is kernel i of p (in the order of p's form).
func (p *Program) Kernel(i int) *Kernel { return &Kernel{p: p, i: i} }

// Kernel is one kernel of a Program.
type Kernel struct {
	p *Program
	i int
}

// ABI is the kernel's argument ABI and launch.
func (k *Kernel) ABI() compiler.Kernel { return k.p.form.Kernels[k.i] }

// Verify runs the kernel once on the session's verification inputs and
// returns what it wrote; seq is its evaluation number.
func (k *Kernel) Verify(ctx context.Context, seq int) (*kernels.Buffer, error) {
	rep, err := k.onDevice(ctx, request{Op: opVerify, Seq: seq})
	return &rep.Output, err
}

// Time times the kernel with the protocol.
func (k *Kernel) Time(ctx context.Context, seq int, protocol measure.Protocol) (measure.Result, error) {
	rep, err := k.onDevice(ctx, request{Op: opTime, Seq: seq, Protocol: protocol})
	return rep.Result, err
}

// Run launches the kernel once on c's arguments and leaves the results in
// c's buffers. For a kernel of no configuration (key ""), a worker that
// dies meanwhile is an error, not a reason to launch again.
func (k *Kernel) Run(ctx context.Context, c *hostcall.Call) error {
	rep, err := k.onDevice(ctx, request{Op: opRun, Call: callOf(c)})
	if err != nil {
		return err
	}
	if len(rep.Blobs) != len(c.Blobs) {
		return fmt.Errorf("the worker sent %d buffers back, not %d", len(rep.Blobs), len(c.Blobs))
	}
	for i, b := range c.Blobs {
		copy(b.Data, rep.Blobs[i])
	}
	return nil
}

// onDevice sends a request about the kernel, building its program first
// where the worker lacks it.
func (k *Kernel) onDevice(ctx context.Context, req request) (reply, error) {
	p := k.p
	return p.c.do(ctx, p.keys[k.i], func(ctx context.Context, w *proc) (reply, error) {
		if err := p.buildIn(ctx, w, req.Seq); err != nil {
			return reply{}, err
		}
		p.mu.Lock()
		b := p.built[k.i]
		p.mu.Unlock()
		req.Handle, req.Kernel = b.Handle, p.form.Kernels[k.i]
		req.Kernel.Symbol = b.Symbol
		return p.c.call(ctx, w, req)
	})
}

// count updates the statistics.
func (c *Client) count(f func(*Stats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.stats)
}

// startLimit bounds the requests that set a new worker up (opening the
// device, uploading the session's buffers): they are no configuration's
// work, and may take long on a large device.
const startLimit = 5 * time.Minute

// call sends req to w and turns a failure the worker reported into a
// classified error. A configuration's requests get the client's Timeout,
// the others startLimit.
func (c *Client) call(ctx context.Context, w *proc, req request) (reply, error) {
	req.ID = c.nextID.Add(1)
	limit := startLimit
	switch req.Op {
	case opBuild, opVerify, opTime, opRun:
		limit = c.Timeout
	}
	rep, err := w.call(ctx, req, limit)
	if err == nil && rep.Kind != "" {
		err = tuner.Fail(rep.Kind, errors.New(rep.Err))
	}
	return rep, err
}

// do runs attempt on a live worker until it gets an answer. A worker that
// dies meanwhile is replaced and attempt runs again: at once when the
// client killed it (another request's time limit), alone when the worker
// died on its own — unless key's configuration was alone the last time,
// which makes it a crash. A request with no answer before ctx's deadline
// kills the worker and is a timeout. key "" marks a request of no
// configuration, whose worker's death is an error.
func (c *Client) do(ctx context.Context, key string, attempt func(context.Context, *proc) (reply, error)) (reply, error) {
	for {
		c.mu.Lock()
		crashed, suspect := c.crashed[key], c.suspicion[key]
		c.mu.Unlock()
		if crashed != nil {
			return reply{}, crashError(crashed)
		}
		alone := suspect != nil
		if alone {
			c.gate.Lock()
		} else {
			c.gate.RLock()
		}
		w, err := c.worker(ctx)
		var rep reply
		if err == nil {
			rep, err = attempt(ctx, w)
		}
		if alone {
			c.gate.Unlock()
		} else {
			c.gate.RUnlock()
		}
		var stuck *errNoAnswer
		death, died := isDeath(err)
		switch {
		case err == nil:
			return rep, nil
		case errors.As(err, &stuck):
			c.retire(w, func(s *Stats) { s.Timeouts++ })
			return reply{}, tuner.Fail(tuner.Timeout, fmt.Errorf("%w; killed it", err))
		case died && death.Killed:
			continue // killed for someone else: not this request's doing
		case died && key == "":
			return reply{}, err
		case died:
			c.mu.Lock()
			if alone {
				c.crashed[key] = death
			} else {
				c.suspicion[key] = death
			}
			c.mu.Unlock()
			continue
		}
		if kindOf(err) == tuner.DeviceLost {
			// The device is gone with this worker's context; a new worker
			// opens it afresh.
			c.retire(w, func(s *Stats) { s.Lost++ })
		}
		return rep, err
	}
}

// crashError is the outcome of a configuration during which the worker
// died twice.
func crashError(d *DeathError) error {
	kind := tuner.Crash
	if d.Lost {
		kind = tuner.DeviceLost
	}
	return tuner.Fail(kind, fmt.Errorf("the worker process died on it twice (not retried): %s", d.Detail()))
}

// worker returns the running worker, starting one (with the device and
// session of the run) when there is none or it died.
func (c *Client) worker(ctx context.Context) (*proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil && !c.proc.isDead() {
		return c.proc, nil
	}
	if c.proc != nil && !c.proc.death.Killed {
		c.stats.Died++
	}
	c.gen++
	w, err := startProc(c.launch, c.gen)
	if err != nil {
		return nil, err
	}
	c.stats.Started++
	c.proc = w
	for _, req := range c.setup {
		if _, err := c.call(ctx, w, req); err != nil {
			// Not the death of a configuration's request: %v keeps it
			// from being counted as one.
			w.kill()
			return nil, fmt.Errorf("starting a worker: %v", err)
		}
	}
	return w, nil
}

// retire kills w, if it is still the worker, and counts why.
func (c *Client) retire(w *proc, count func(*Stats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == w {
		count(&c.stats)
	}
	w.kill()
}
