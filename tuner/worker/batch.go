package worker

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"tltune/compiler/hostcall/devcall"
	"tltune/tuner"
)

// Batcher is a tuner.Compiler that compiles the configurations the
// tuner's compile workers hand it up to Size of them into one program (one
// kernel per configuration, helpers written once) and has the worker build
// that program: one driver build for many configurations, and several such
// builds running in the worker while the device times earlier ones. A
// program that does not build is no verdict on its kernels: each is built
// alone when it is measured (BatchKernel.Build), so that a failure is the
// failing kernel's only.
//
// Unless Lazy, a program is built as soon as it is compiled. On a CPU
// device the driver's compiler would compete with the kernels being timed
// for the same cores; there a program is built when its first kernel is
// measured (Lazy).
type Batcher struct {
	Client *Client
	Size   int  // kernels per program; 1 or less: one each
	Lazy   bool // build when measured
	// CompileMany compiles sources of one function each into one program
	// whose kernels are named names[i], in that order.
	CompileMany func(srcs [][]byte, names []string) (devcall.Form, error)
	// CacheKey is the binary-cache key of the kernel of the source with
	// hash hash in a program of form path; nil: no cache keys.
	CacheKey func(path devcall.Path, hash string) string
	// Quiet is how long a batch waits for another configuration before it
	// is compiled short; default batchQuiet.
	Quiet time.Duration

	mu      sync.Mutex
	pending []*pendingKernel
	timer   *time.Timer
}

// batchQuiet is how long a batch waits for another configuration before
// it is compiled short: compiling one takes well under a millisecond, so
// a longer silence means the tuner has no more to give for now.
const batchQuiet = 3 * time.Millisecond

// pendingKernel is a configuration waiting for its batch.
type pendingKernel struct {
	ctx  context.Context
	src  string
	hash string
	done chan struct{}
	art  *BatchKernel
	err  error
}

// Compile queues src for the next program and returns its kernel there
// once that program is compiled (and built, unless Lazy).
func (b *Batcher) Compile(ctx context.Context, src string) (tuner.Artifact, error) {
	pk := &pendingKernel{ctx: ctx, src: src, hash: tuner.SourceHash(src), done: make(chan struct{})}
	if batch := b.add(pk); batch != nil {
		b.flush(batch)
	}
	select {
	case <-pk.done:
		if pk.err != nil {
			return nil, pk.err
		}
		return pk.art, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// add queues pk and returns a full batch to compile, if pk completed one;
// else the batch goes when no configuration has come for batchQuiet.
func (b *Batcher) add(pk *pendingKernel) []*pendingKernel {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, pk)
	if len(b.pending) >= b.Size {
		return b.take()
	}
	quiet := cmp.Or(b.Quiet, batchQuiet)
	if b.timer == nil {
		b.timer = time.AfterFunc(quiet, b.flushQuiet)
	} else {
		b.timer.Reset(quiet)
	}
	return nil
}

// take empties the queue; b.mu is held.
func (b *Batcher) take() []*pendingKernel {
	batch := b.pending
	b.pending = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	return batch
}

func (b *Batcher) flushQuiet() {
	b.mu.Lock()
	batch := b.take()
	b.mu.Unlock()
	if len(batch) > 0 {
		b.flush(batch)
	}
}

// flush compiles a batch into one program, builds it unless Lazy, and
// hands each configuration its kernel. Configurations the compiler
// rejects get their own error: the batch is compiled again one by one.
func (b *Batcher) flush(batch []*pendingKernel) {
	prog, err := b.program(batch)
	if err != nil && len(batch) > 1 {
		for _, pk := range batch {
			b.flush([]*pendingKernel{pk})
		}
		return
	}
	if err == nil && !b.Lazy {
		// On the lane of the first configuration, which waits for it. A
		// failure is no verdict: its kernels are built alone when measured.
		end := tuner.Track(batch[0].ctx, tuner.PhaseBuild)
		prog.build(batch[0].ctx, tuner.Evaluation(batch[0].ctx))
		end()
	}
	for i, pk := range batch {
		if err != nil {
			pk.err = err
		} else {
			pk.art = newBatchKernel(b, prog, i, pk)
		}
		close(pk.done)
	}
}

// program compiles batch into one program known to the client.
func (b *Batcher) program(batch []*pendingKernel) (*sharedProgram, error) {
	srcs, names, keys := make([][]byte, len(batch)), make([]string, len(batch)), make([]string, len(batch))
	for i, pk := range batch {
		// The name follows the source, so that a kernel keeps its symbol in
		// whatever program it is built: the binary cache finds it there.
		srcs[i], names[i], keys[i] = []byte(pk.src), "k_"+pk.hash[:16], pk.hash
	}
	form, err := b.CompileMany(srcs, names)
	if err != nil {
		return nil, err
	}
	if len(form.Kernels) != len(batch) {
		return nil, fmt.Errorf("%d sources compiled into %d kernels", len(batch), len(form.Kernels))
	}
	var cacheKeys []string
	if b.CacheKey != nil {
		cacheKeys = make([]string, len(batch))
		for i := range batch {
			cacheKeys[i] = b.CacheKey(form.Path, keys[i])
		}
	}
	return &sharedProgram{Program: b.Client.Program(form, keys, cacheKeys), size: len(batch)}, nil
}

// sharedProgram is a program with the kernels of several configurations:
// released when the last of them is.
type sharedProgram struct {
	*Program
	size int
	refs atomic.Int32

	mu     sync.Mutex
	failed error // the build of several kernels failed: each goes alone
}

// build builds the program unless it is built, or failed with several
// kernels (not tried again: its kernels are built alone).
func (p *sharedProgram) build(ctx context.Context, seq int) error {
	p.mu.Lock()
	failed := p.failed
	p.mu.Unlock()
	if failed != nil {
		return failed
	}
	_, err := p.Build(ctx, seq)
	if err != nil && p.size > 1 {
		p.mu.Lock()
		p.failed = err
		p.mu.Unlock()
	}
	return err
}

// BatchKernel is a configuration compiled by a Batcher, in a program with
// others: the tuner's artifact, which its cache closes when it evicts it.
type BatchKernel struct {
	batcher *Batcher
	src     *pendingKernel
	prog    *sharedProgram
	kernel  *Kernel
}

func newBatchKernel(b *Batcher, prog *sharedProgram, i int, pk *pendingKernel) *BatchKernel {
	prog.refs.Add(1)
	return &BatchKernel{batcher: b, src: pk, prog: prog, kernel: prog.Kernel(i)}
}

// Kernel is the configuration's kernel in the worker.
func (k *BatchKernel) Kernel() *Kernel { return k.kernel }

// Close releases the kernel's share of its program.
func (k *BatchKernel) Close() error {
	if k.prog.refs.Add(-1) == 0 {
		return k.prog.Close()
	}
	return nil
}

// Build builds the kernel's program, unless it is built. When a program
// of several kernels does not build, the kernel is compiled and built
// alone: one kernel the driver refuses (or crashes on) must not fail the
// others.
func (k *BatchKernel) Build(ctx context.Context, seq int) error {
	err := k.prog.build(ctx, seq)
	if err == nil || k.prog.size == 1 {
		return err
	}
	alone, err := k.batcher.program([]*pendingKernel{k.src})
	if err != nil {
		return err
	}
	k.Close()
	alone.refs.Add(1)
	k.prog, k.kernel = alone, alone.Kernel(0)
	return alone.build(ctx, seq)
}
