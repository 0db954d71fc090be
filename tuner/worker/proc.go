package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Launcher returns the command that runs one worker: tltune in its worker
// mode. The client connects its file descriptors 3 and 4, its stdout and its
// stderr, and starts it.
type Launcher func() *exec.Cmd

// proc is one worker process as the client sees it.
type proc struct {
	gen  int // the client's count of workers started, this one's number
	cmd  *exec.Cmd
	reqs *os.File // the write end of the worker's fd 3
	enc  *encoder

	mu      sync.Mutex
	waiting map[uint64]chan reply

	dead   chan struct{} // closed once the worker has exited and death is set
	death  *DeathError
	killed atomic.Bool // by the client: not the worker's doing
	output *outputTail
}

// startProc starts a worker with its pipes; gen is its number.
func startProc(launch Launcher, gen int) (*proc, error) {
	cmd := launch()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		repR.Close()
		repW.Close()
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{reqR, repW}
	cmd.Stdout, cmd.Stderr = outW, outW
	// The worker dies with the tuning process, even one killed with -9.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	reqR.Close() // the worker's ends
	repW.Close()
	outW.Close()
	if err != nil {
		reqW.Close()
		repR.Close()
		outR.Close()
		// %v: the executable missing is the installation's fault, not a
		// file the user named.
		return nil, fmt.Errorf("starting the worker process: %v", err)
	}
	w := &proc{gen: gen, cmd: cmd, reqs: reqW, enc: newEncoder(reqW), waiting: map[uint64]chan reply{},
		dead: make(chan struct{}), output: newOutputTail()}
	go w.output.consume(outR)
	go w.readReplies(repR)
	return w, nil
}

// readReplies hands each reply to the request waiting for it; when the
// stream ends the worker is gone (or broken: then it is killed), and its
// death is recorded.
func (w *proc) readReplies(r *os.File) {
	defer r.Close()
	dec := newDecoder(r)
	for {
		var rep reply
		if err := dec.Decode(&rep); err != nil {
			break
		}
		w.mu.Lock()
		ch := w.waiting[rep.ID]
		w.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
	exited := make(chan struct{})
	go func() {
		w.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		// It closed its replies or wrote garbage, yet runs: it is of no
		// more use, and it is not the configuration's doing.
		w.kill()
		<-exited
	}
	w.output.wait(time.Second)
	w.death = w.describeDeath()
	w.reqs.Close()
	close(w.dead)
}

// kill ends the worker on the client's behalf.
func (w *proc) kill() {
	w.killed.Store(true)
	w.cmd.Process.Kill()
}

// isDead reports whether the worker has exited.
func (w *proc) isDead() bool {
	select {
	case <-w.dead:
		return true
	default:
		return false
	}
}

// errNoAnswer is a request that got no reply within its time limit: the
// worker is stuck on it.
type errNoAnswer struct{ limit time.Duration }

func (e *errNoAnswer) Error() string {
	return fmt.Sprintf("no answer from the worker within %v", e.limit)
}

// call sends req and waits for its reply, the worker's death (a
// *DeathError), the time limit (an *errNoAnswer; 0: none) or the end of
// ctx (its error).
func (w *proc) call(ctx context.Context, req request, limit time.Duration) (reply, error) {
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expired = t.C
	}
	ch := make(chan reply, 1)
	w.mu.Lock()
	w.waiting[req.ID] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiting, req.ID)
		w.mu.Unlock()
	}()
	if err := w.send(req); err != nil {
		// A write fails when the worker is gone; its death follows.
		select {
		case <-w.dead:
			return reply{}, w.death
		case <-expired:
			return reply{}, &errNoAnswer{limit}
		case <-ctx.Done():
			return reply{}, ctx.Err()
		}
	}
	select {
	case rep := <-ch:
		return rep, nil
	case <-w.dead:
		select {
		case rep := <-ch: // answered, then exited
			return rep, nil
		default:
			return reply{}, w.death
		}
	case <-expired:
		return reply{}, &errNoAnswer{limit}
	case <-ctx.Done():
		return reply{}, ctx.Err()
	}
}

// send writes req without waiting for a reply.
func (w *proc) send(req request) error { return w.enc.send(req) }

// close asks the worker to finish (its requests end) and waits a little
// for it before killing it.
func (w *proc) close() {
	w.enc.mu.Lock()
	w.reqs.Close()
	w.enc.mu.Unlock()
	select {
	case <-w.dead:
	case <-time.After(5 * time.Second):
		w.kill()
		<-w.dead
	}
}

// DeathError is a worker that exited without being asked to.
type DeathError struct {
	Killed bool     // the client killed it (a time limit, a restart)
	Status string   // how it ended: "exit status 2", "signal: killed"
	Report string   // the Go runtime's crash line, e.g. "SIGSEGV: segmentation violation"
	Output []string // its last lines of output before the crash report
	Lost   bool     // its output says the device was lost
}

func (e *DeathError) Error() string { return "the worker process died: " + e.Detail() }

// Detail says how the worker died and what it said last.
func (e *DeathError) Detail() string {
	var b strings.Builder
	if e.Report != "" {
		fmt.Fprintf(&b, "%s (%s)", e.Report, e.Status)
	} else {
		b.WriteString(e.Status)
	}
	if len(e.Output) > 0 {
		fmt.Fprintf(&b, "; last output: %s", strings.Join(e.Output, " | "))
	}
	return b.String()
}

func (w *proc) describeDeath() *DeathError {
	report, lines := w.output.snapshot()
	d := &DeathError{Killed: w.killed.Load(), Status: w.cmd.ProcessState.String(), Report: report, Output: lines}
	for _, l := range append(lines, report) {
		if lostDevice.MatchString(l) {
			d.Lost = true
		}
	}
	return d
}

// lostDevice matches what runtimes and drivers say of a lost device.
var lostDevice = regexp.MustCompile(`(?i)device[ _]lost|DEVICE_NOT_AVAILABLE|GPU has fallen off the bus`)

// outputTail keeps the worker's last lines of output before a crash
// report: the Go runtime's report of a fatal signal (its first line says
// which) is followed by a hundred lines of registers and goroutines that
// say nothing about the driver.
type outputTail struct {
	mu       sync.Mutex
	lines    []string
	report   string
	inReport bool
	done     chan struct{}
}

// tailLines is how many lines of output a crash report keeps.
const tailLines = 6

// crashReport matches the first line of the Go runtime's report of a fatal
// signal, a fatal error or a panic.
var crashReport = regexp.MustCompile(`^(SIG[A-Z0-9]+: |fatal error: |panic: )`)

func newOutputTail() *outputTail { return &outputTail{done: make(chan struct{})} }

func (t *outputTail) consume(r io.ReadCloser) {
	defer close(t.done)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		t.add(sc.Text())
	}
}

func (t *outputTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.inReport:
		if strings.HasPrefix(line, "signal arrived during") {
			t.report += "; " + line
		}
	case crashReport.MatchString(line):
		t.report, t.inReport = line, true
	case strings.TrimSpace(line) != "":
		t.lines = append(t.lines, line)
		if len(t.lines) > tailLines {
			t.lines = t.lines[len(t.lines)-tailLines:]
		}
	}
}

// wait waits until the output ended (the worker and whatever inherited its
// output exited), at most d.
func (t *outputTail) wait(d time.Duration) {
	select {
	case <-t.done:
	case <-time.After(d):
	}
}

func (t *outputTail) snapshot() (report string, lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.report, append([]string(nil), t.lines...)
}

// isDeath reports whether err is a worker's death, and which.
func isDeath(err error) (*DeathError, bool) {
	var d *DeathError
	ok := errors.As(err, &d)
	return d, ok
}
