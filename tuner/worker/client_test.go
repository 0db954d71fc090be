package worker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/tuning"
	"tltune/kernels"
	"tltune/tuner"
	"tltune/tuner/measure"
)

var bg = context.Background()

var testSpec = kernels.Spec{Op: kernels.GEMMOp, M: 8, N: 8, K: 8, DType: kernels.F32, Acc: kernels.F32, Layout: kernels.Strided, Alpha: 1}

// compiled is a real recipe kernel: the fake device ignores the program,
// but the session binds the kernel's arguments by its ABI.
func compiled(t testing.TB) devcall.Form {
	t.Helper()
	r, err := kernels.New(testSpec)
	if err != nil {
		t.Fatal(err)
	}
	src, err := r.Source(tuning.Params{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile([]byte(src), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatal(err)
	}
	return devcall.Form{Path: devcall.PathOpenCLC, Source: res.OpenCL, Kernels: res.Kernels}
}

// marked is form with a marker the fake device acts on.
func marked(form devcall.Form, marker string) devcall.Form {
	form.Source += "\n// " + marker + "\n"
	return form
}

// newFakeClient starts a client of the fake device with a session.
func newFakeClient(t testing.TB, timeout time.Duration, env ...string) *Client {
	t.Helper()
	c := NewClient(launchFake(env...))
	c.Timeout = timeout
	t.Cleanup(func() { c.Close() })
	if _, err := c.Open(bg, "fake", ""); err != nil {
		t.Fatal(err)
	}
	plan, err := c.Session(bg, Session{Spec: testSpec, Seed: 1, Goal: quickGoal})
	if err != nil || plan.Batch != 2 {
		t.Fatalf("session: plan %+v, %v", plan, err)
	}
	return c
}

func kindIs(err error, want tuner.Kind) bool {
	var e *tuner.Error
	return errors.As(err, &e) && e.Kind == want
}

var quick = measure.Protocol{Warmup: 1, MinSamples: 6, MaxSamples: 6}

// quickGoal is the tests' session batch: 2 entries.
var quickGoal = measure.BatchGoal{MinBatch: 2, MaxBatch: 2, Hot: true}

func TestRoundTrip(t *testing.T) {
	c := newFakeClient(t, time.Minute)
	form := compiled(t)
	p := c.Program(form, []string{"a"}, nil)
	if _, err := p.Build(bg, 1); err != nil {
		t.Fatal(err)
	}
	out, err := p.Kernel(0).Verify(bg, 1)
	if err != nil || out.Len() != 8*8*8 || out.Batch != 8 {
		t.Fatalf("verify: %d elements in %d entries, %v; want the 8 verification entries of an 8x8 C", out.Len(), out.Batch, err)
	}
	if !math.IsNaN(real(out.At(0))) {
		t.Errorf("the fake kernel writes nothing, and β = 0 poisons C with NaN; got %v", out.At(0))
	}
	res, err := p.Kernel(0).Time(bg, 1, quick)
	if err != nil || res.Summary.N != 6 || res.Summary.Median != 1000 {
		t.Fatalf("time: %+v, %v; want 6 samples of 1000 ns", res.Summary, err)
	}
	p.Close()
	if s := c.Stats(); s.Started != 1 || s.Died != 0 {
		t.Errorf("stats %+v: want one worker, alive", s)
	}
}

// TestBinaryCache: a kernel built once is loaded from the binary cache
// next time, by another worker and in another program; a program with a
// kernel the cache lacks is built.
func TestBinaryCache(t *testing.T) {
	dir := t.TempDir()
	form := compiled(t)
	for round, want := range []bool{false, true} {
		c := NewClient(launchFake())
		t.Cleanup(func() { c.Close() })
		if _, err := c.Open(bg, "fake", dir); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Session(bg, Session{Spec: testSpec, Seed: 1, Goal: quickGoal}); err != nil {
			t.Fatal(err)
		}
		p := c.Program(marked(form, fmt.Sprint("round ", round)), []string{"a"}, []string{"kernel a"})
		cached, err := p.Build(bg, 1)
		if err != nil || cached != want {
			t.Fatalf("round %d: cached %v, %v; want %v", round, cached, err, want)
		}
		if _, err := p.Kernel(0).Verify(bg, 1); err != nil {
			t.Fatalf("round %d: verify: %v", round, err)
		}
		both := c.Program(form, []string{"a", "b"}, []string{"kernel a", "kernel b"})
		both.form.Kernels = append(both.form.Kernels, both.form.Kernels[0])
		if cached, err := both.Build(bg, 2); err != nil || cached != want {
			t.Errorf("round %d: a program with an uncached kernel: cached %v, %v; want %v", round, cached, err, want)
		}
		if s := c.Stats(); s.Builds != 2 || s.CachedBuilds != 2*btoi(want) {
			t.Errorf("round %d: stats %+v", round, s)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestBuildErrorIsCompileError(t *testing.T) {
	c := newFakeClient(t, time.Minute)
	form := compiled(t)
	_, err := c.Program(marked(form, "BUILD_FAIL"), []string{"a"}, nil).Build(bg, 1)
	if !kindIs(err, tuner.CompileError) || !strings.Contains(err.Error(), "fake build failure") {
		t.Fatalf("build: %v; want a compile error with the log's line", err)
	}
}

// TestCrashTwiceIsCrash: a configuration that crashes the worker, alone
// the second time, is a crash with the worker's last words; the next one
// runs in a new worker.
func TestCrashTwiceIsCrash(t *testing.T) {
	c := newFakeClient(t, time.Minute, FaultEnv+"=abort@2")
	form := compiled(t)
	for seq, key := range []string{"", "a", "b", "c"} {
		if seq == 0 {
			continue
		}
		p := c.Program(form, []string{key}, nil)
		_, err := p.Kernel(0).Verify(bg, seq)
		switch {
		case seq == 2 && !kindIs(err, tuner.Crash):
			t.Fatalf("evaluation 2: %v; want a crash", err)
		case seq == 2 && !strings.Contains(err.Error(), "injected fault abort at evaluation 2") || seq == 2 && !strings.Contains(err.Error(), "twice"):
			t.Errorf("crash message %q lacks the worker's last output or the count", err)
		case seq != 2 && err != nil:
			t.Fatalf("evaluation %d: %v", seq, err)
		}
	}
	if s := c.Stats(); s.Started != 3 || s.Died != 2 {
		t.Errorf("stats %+v: want 3 workers started after 2 deaths", s)
	}
}

// TestInFlightNotBlamed: a build in flight when another one crashes the
// worker is built again and succeeds; only the crashing one is a crash.
func TestInFlightNotBlamed(t *testing.T) {
	c := newFakeClient(t, time.Minute)
	form := compiled(t)
	crasher := c.Program(marked(form, "CRASH_BUILD"), []string{"crasher"}, nil)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			if i == 0 {
				time.Sleep(200 * time.Millisecond) // the others are in flight
				_, errs[i] = crasher.Build(bg, 1)
				return
			}
			// Slow enough to be in flight when the crasher crashes.
			_, errs[i] = c.Program(marked(form, "SLEEP_BUILD"), []string{string(rune('a' + i))}, nil).Build(bg, 2)
		})
	}
	wg.Wait()
	if !kindIs(errs[0], tuner.Crash) {
		t.Errorf("crasher: %v; want a crash", errs[0])
	}
	for _, err := range errs[1:] {
		if err != nil {
			t.Errorf("a build in flight during the crash failed: %v", err)
		}
	}
}

// TestTimeoutKills: a request the worker does not answer in time is a
// timeout, and the worker is replaced; a request in flight meanwhile is
// sent again, not blamed.
func TestTimeoutKills(t *testing.T) {
	c := newFakeClient(t, time.Second)
	form := compiled(t)
	var wg sync.WaitGroup
	var slowErr, otherErr error
	wg.Go(func() { _, slowErr = c.Program(marked(form, "SLOW_BUILD"), []string{"slow"}, nil).Build(bg, 1) })
	wg.Go(func() {
		time.Sleep(800 * time.Millisecond) // in flight when the slow one's second is up
		_, otherErr = c.Program(marked(form, "SLEEP_BUILD"), []string{"other"}, nil).Build(bg, 2)
	})
	wg.Wait()
	if !kindIs(slowErr, tuner.Timeout) || otherErr != nil {
		t.Fatalf("slow build: %v (want a timeout); the other: %v (want success)", slowErr, otherErr)
	}
	if _, err := c.Program(form, []string{"next"}, nil).Kernel(0).Verify(bg, 3); err != nil {
		t.Fatalf("after the timeout: %v", err)
	}
	if s := c.Stats(); s.Timeouts != 1 || s.Died != 0 || s.Started != 2 {
		t.Errorf("stats %+v: want one timeout, no death, two workers", s)
	}
}

func TestInjectedFaults(t *testing.T) {
	c := newFakeClient(t, time.Second, FaultEnv+"=hang@1,lost@2,wrong@3,segv@4")
	form := compiled(t)
	verify := func(seq int) (*kernels.Buffer, error) {
		return c.Program(form, []string{string(rune('a' + seq))}, nil).Kernel(0).Verify(bg, seq)
	}
	if _, err := verify(1); !kindIs(err, tuner.Timeout) {
		t.Errorf("hang: %v; want a timeout", err)
	}
	if _, err := verify(2); !kindIs(err, tuner.DeviceLost) {
		t.Errorf("lost: %v; want device_lost", err)
	}
	if out, err := verify(3); err != nil || math.IsNaN(real(out.At(0))) {
		t.Errorf("wrong: %v, %v; want an output changed from the NaN the fake leaves", out.At(0), err)
	}
	if _, err := verify(4); !kindIs(err, tuner.Crash) || !strings.Contains(err.Error(), "SIGSEGV") {
		t.Errorf("segv: %v; want a crash naming SIGSEGV", err)
	}
	if _, err := verify(5); err != nil {
		t.Errorf("after the faults: %v", err)
	}
	if s := c.Stats(); s.Timeouts != 1 || s.Lost != 1 || s.Died != 2 {
		t.Errorf("stats %+v: want a timeout, a lost device, two deaths", s)
	}
}

func TestParseFaults(t *testing.T) {
	fs, err := ParseFaults(" abort@3, hang@5,segv@6,wrong@7,lost@9 ")
	if err != nil || len(fs) != 5 || fs[3] != FaultAbort || fs[9] != FaultLost {
		t.Errorf("ParseFaults: %v, %v", fs, err)
	}
	for _, bad := range []string{"abort", "abort@0", "abort@x", "melt@3"} {
		if _, err := ParseFaults(bad); err == nil || !strings.Contains(err.Error(), FaultEnv) {
			t.Errorf("ParseFaults(%q) = %v; want an error naming %s", bad, err, FaultEnv)
		}
	}
}

func TestOutputTail(t *testing.T) {
	tail := newOutputTail()
	for _, l := range []string{"a", "", "b", "c", "d", "e", "f", "pocl error: device lost",
		"SIGABRT: abort", "PC=0x1 m=0", "signal arrived during cgo execution", "goroutine 1 [syscall]:"} {
		tail.add(l)
	}
	report, lines := tail.snapshot()
	if report != "SIGABRT: abort; signal arrived during cgo execution" {
		t.Errorf("report %q", report)
	}
	if want := []string{"b", "c", "d", "e", "f", "pocl error: device lost"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", lines, want)
	}
	if !lostDevice.MatchString(lines[len(lines)-1]) {
		t.Error("a lost device is not recognised")
	}
}

// BenchmarkEvaluationOverhead measures what the worker process adds to one
// evaluation: the build, verification and timing requests with their
// replies, on a fake device whose work takes no time. One op is one
// evaluation.
func BenchmarkEvaluationOverhead(b *testing.B) {
	c := newFakeClient(b, time.Minute)
	form := compiled(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := c.Program(form, []string{"k"}, nil)
		if _, err := p.Build(bg, i); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Kernel(0).Verify(bg, i); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Kernel(0).Time(bg, i, quick); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}
