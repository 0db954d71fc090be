// Package worker runs the driver work of a tuning run — program builds,
// verification launches, timing, ceiling measurements — in a separate
// process, so that nothing a driver does ends the run: an abort or a
// segfault inside the OpenCL or Level Zero library kills the worker, not the
// tuner; a kernel that never ends is killed with the worker at the
// configuration's time limit; a lost device is left behind with its
// process.
//
// The tuning process (the parent) owns the database, the search, the host
// reference and the report; it starts tltune again in its worker mode
// (Serve) and talks to it through a Client. The two speak a small framed
// protocol over two pipes, the worker's file descriptors 3 (requests) and 4
// (replies): one gob stream each way, gob framing each request or reply
// with its length. The worker's stdout and stderr go to the
// client, which keeps their last lines for its crash reports (a driver
// printing to stdout cannot corrupt the protocol).
//
// The Client supervises: a request that gets no reply within its context's
// deadline kills the worker (the configuration is a timeout); a worker that
// dies on its own is a crash, with its signal and last output (or a lost
// device, when its output says so). Either way a new worker starts, is
// given the device and session again, and the requests in flight are sent
// again. A configuration that was in flight when a worker crashed runs
// again alone; if the worker dies again, the configuration is a crash and is
// not retried. TLTUNE_FAULT (see ParseFaults) injects each fault, for tests.
package worker

import (
	"bufio"
	"encoding/gob"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/compiler/hostcall/devcall"
	"tltune/device"
	"tltune/kernels"
	"tltune/tuner"
	"tltune/tuner/measure"
)

// op is what a request asks for.
type op uint8

const (
	opOpen    op = iota + 1 // open the device named by Device
	opPeak                  // measure the device's ceilings with Peak
	opSession               // prepare Session's inputs and timing buffers
	opBuild                 // build Program; the reply names it by Handle
	opRelease               // release program Handle; no reply
	opVerify                // run Kernel of program Handle once on the verification inputs
	opTime                  // time Kernel of program Handle with Protocol
	opRun                   // launch Kernel of program Handle once on Call's arguments
	opCompile               // build Program and reply with its binary (a builder's work)
)

// request is one message from the parent to the worker. Only the fields of
// its op are set.
type request struct {
	ID     uint64
	Op     op
	Seq    int // the evaluation it belongs to (1-based, proposal order); 0 for none
	Device string
	Cache  string // opOpen: the binary cache's directory; "": none
	// Builders is how many builder processes the worker starts (opOpen).
	Builders int
	// Prestart (opOpen) starts every builder at once, beside the worker's
	// own opening of the device, each warming its driver's compiler, in
	// place of one per build the cache cannot supply: for a run that will
	// build (see builders).
	Prestart bool
	// Warm (opOpen, to a builder) has the builder build a trivial program
	// once it has opened the device (see warmUp).
	Warm    bool
	Peak    device.PeakOptions
	Session Session
	Program devcall.Form
	// CacheKeys are the binary-cache keys of Program's kernels: when every
	// one is in the cache, the worker loads their programs' binaries instead
	// of building Program.
	CacheKeys []string
	Handle    uint64
	Kernel    compiler.Kernel
	Protocol  measure.Protocol
	Call      Call
}

// Call is a kernel launch with every argument bound (a hostcall.Call as
// plain data: arguments name their buffer by its index, so that buffers
// shared by several arguments stay shared).
type Call struct {
	Groups int64
	Args   []CallArg
	Blobs  []hostcall.Blob
}

// CallArg is one kernel argument of a Call.
type CallArg struct {
	compiler.Arg
	Blob   int // index into Blobs; -1 for a scalar
	Scalar []byte
}

// callOf is c as plain data.
func callOf(c *hostcall.Call) Call {
	index := map[*hostcall.Blob]int{}
	w := Call{Groups: c.Groups, Blobs: make([]hostcall.Blob, len(c.Blobs))}
	for i, b := range c.Blobs {
		index[b] = i
		w.Blobs[i] = *b
	}
	for _, a := range c.Args {
		arg := CallArg{Arg: a.Arg, Blob: -1, Scalar: a.Scalar}
		if a.Blob != nil {
			arg.Blob = index[a.Blob]
		}
		w.Args = append(w.Args, arg)
	}
	return w
}

// call rebuilds the hostcall.Call of kernel k.
func (w Call) call(k *compiler.Kernel) *hostcall.Call {
	c := &hostcall.Call{Kernel: k, Groups: w.Groups}
	for i := range w.Blobs {
		c.Blobs = append(c.Blobs, &w.Blobs[i])
	}
	for _, a := range w.Args {
		arg := hostcall.Arg{Arg: a.Arg, Scalar: a.Scalar}
		if a.Blob >= 0 && a.Blob < len(c.Blobs) {
			arg.Blob = c.Blobs[a.Blob]
		}
		c.Args = append(c.Args, arg)
	}
	return c
}

// Session says which recipe the worker prepares on its device, and how.
type Session struct {
	Spec        kernels.Spec
	Seed        uint64
	VerifyBatch int
	Goal        measure.BatchGoal
}

// reply is one message from the worker to the parent, for the request with the
// same ID.
type reply struct {
	ID      uint64
	Kind    tuner.Kind // the failure's outcome kind; "" when the request succeeded
	Err     string
	Info    device.Info       // opOpen
	Peak    device.Peak       // opPeak
	Plan    measure.BatchPlan // opSession
	Kernels []builtKernel     // opBuild: where each kernel of the program is
	Cached  bool              // opBuild: from the binary cache
	Builder bool              // opBuild: built by a builder process
	// BuilderProcs is how many builder processes the worker has started
	// (opBuild).
	BuilderProcs int
	Binary       []byte         // opCompile: the built program's binary
	Output       kernels.Buffer // opVerify: what the kernel wrote
	Result       measure.Result // opTime
	Blobs        [][]byte       // opRun: the contents of every buffer after the launch
}

// builtKernel is a kernel of a built program: the worker's program and the
// kernel's symbol there.
type builtKernel struct {
	Handle uint64
	Symbol string
}

// encoder writes one direction of the protocol: a gob stream, in which gob
// frames each message with its length, flushed after each message. It is
// safe for concurrent use. One encoder per stream sends each type's
// description once, not with every message.
type encoder struct {
	mu  sync.Mutex
	buf *bufio.Writer
	enc *gob.Encoder
}

func newEncoder(w io.Writer) *encoder {
	buf := bufio.NewWriterSize(w, 64<<10)
	return &encoder{buf: buf, enc: gob.NewEncoder(buf)}
}

func (e *encoder) send(v any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	return e.buf.Flush()
}

// newDecoder reads one direction of the protocol. Decode returns io.EOF
// when the stream ended between messages.
func newDecoder(r io.Reader) *gob.Decoder { return gob.NewDecoder(bufio.NewReaderSize(r, 64<<10)) }

// workerEnv marks a process started as a worker: its file descriptors 3
// and 4 are the protocol's pipes.
const workerEnv = "TLTUNE_WORKER"

// Command returns the command that runs a worker as name with args (tltune
// and its worker mode), marked so that Pipes finds its pipes.
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	return cmd
}

// ErrNotWorker is returned by Pipes in a process not started by a Client.
var ErrNotWorker = errors.New("not started as a worker: the tuning commands start it, with its pipes")

// Pipes returns the worker's request and reply pipes.
func Pipes() (requests, replies *os.File, err error) {
	if os.Getenv(workerEnv) != "1" {
		return nil, nil, ErrNotWorker
	}
	return os.NewFile(3, "requests"), os.NewFile(4, "replies"), nil
}
