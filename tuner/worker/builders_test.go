package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tltune/tuner"
)

// newBuildersClient starts a client of the fake device whose worker has n
// builders, and waits until builders have built n programs: they start in
// the background, and the worker builds alone meanwhile.
func newBuildersClient(t *testing.T, n int) *Client {
	t.Helper()
	c := NewClient(launchFake())
	c.Timeout = time.Minute
	c.Builders = n
	t.Cleanup(func() { c.Close() })
	if _, err := c.Open(bg, "fake", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Session(bg, Session{Spec: testSpec, Seed: 1, Goal: quickGoal}); err != nil {
		t.Fatal(err)
	}
	form := compiled(t)
	deadline := time.Now().Add(time.Minute)
	for i := 0; c.Stats().BuilderBuilds < n; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no builder built a program in a minute: stats %+v", c.Stats())
		}
		p := c.Program(marked(form, fmt.Sprint("warm-up ", i)), []string{fmt.Sprint("w", i)}, nil)
		if _, err := p.Build(bg, 1); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	return c
}

// TestBuildersBuild: programs built by builders run in the worker, and
// the worker and its builders take turns; builders are no workers of the
// client.
func TestBuildersBuild(t *testing.T) {
	c := newBuildersClient(t, 2)
	form := compiled(t)
	before := c.Stats()
	for i := range 6 {
		p := c.Program(marked(form, fmt.Sprint("program ", i)), []string{fmt.Sprint("p", i)}, nil)
		if _, err := p.Kernel(0).Time(bg, i+1, quick); err != nil {
			t.Fatalf("program %d: %v", i, err)
		}
	}
	s := c.Stats()
	// The worker and the ready builders take turns: 4 of 6 once both are
	// ready, 3 while the second still starts.
	if n := s.BuilderBuilds - before.BuilderBuilds; s.Builds-before.Builds != 6 || n < 3 || n > 4 {
		t.Errorf("stats %+v after %+v: want 6 builds, 3 or 4 of them by the builders", s, before)
	}
	if s.Started != 1 || s.Died != 0 {
		t.Errorf("stats %+v: want one worker, alive", s)
	}
}

// TestBuilderCompileError: a program the driver refuses is a compile
// error with the driver's log, whichever process built it.
func TestBuilderCompileError(t *testing.T) {
	c := newBuildersClient(t, 2)
	form := compiled(t)
	for i := range 3 {
		_, err := c.Program(marked(form, fmt.Sprint("BUILD_FAIL ", i)), []string{fmt.Sprint("f", i)}, nil).Build(bg, i+1)
		if !kindIs(err, tuner.CompileError) || !strings.Contains(err.Error(), "fake build failure") {
			t.Errorf("build %d: %v; want a compile error with the log's line", i, err)
		}
	}
}

// TestBuilderCrash: a builder that dies building a program leaves the
// program to the worker, which builds it; the configuration does not
// suffer for it.
func TestBuilderCrash(t *testing.T) {
	c := newBuildersClient(t, 1)
	form := compiled(t)
	// The worker and the builder take turns: one of two goes to the builder.
	for i := range 2 {
		p := c.Program(marked(form, fmt.Sprint("CRASH_IN_BUILDER ", i)), []string{fmt.Sprint("c", i)}, nil)
		if _, err := p.Kernel(0).Verify(bg, i+1); err != nil {
			t.Errorf("build %d: %v; want the worker to build it when its builder crashed", i, err)
		}
	}
	if s := c.Stats(); s.Started != 1 || s.Died != 0 {
		t.Errorf("stats %+v: want one worker, alive", s)
	}
}

// TestBuildersStartOnDemand: a builder starts for each build the binary
// cache cannot supply, up to their number; a worker whose programs all
// come from the cache starts none.
func TestBuildersStartOnDemand(t *testing.T) {
	dir := t.TempDir()
	form := compiled(t)
	for round, want := range []int{1, 0} {
		c := NewClient(launchFake())
		c.Builders = 2
		t.Cleanup(func() { c.Close() })
		if _, err := c.Open(bg, "fake", dir); err != nil {
			t.Fatal(err)
		}
		p := c.Program(form, []string{"a"}, []string{"kernel a"})
		if _, err := p.Build(bg, 1); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.BuilderProcs != want || s.CachedBuilds != 1-want {
			t.Errorf("round %d: stats %+v; want %d builder(s) started, %d cached build(s)", round, s, want, 1-want)
		}
	}
}

// TestBuildersPrestart: a worker asked to prestart its builders starts
// them all as it opens the device, before any build asks, and each warms
// its driver's compiler; the worker itself does not.
func TestBuildersPrestart(t *testing.T) {
	warm := filepath.Join(t.TempDir(), "warm")
	c := NewClient(launchFake(fakeWarmEnv + "=" + warm))
	c.Timeout = time.Minute
	c.Builders, c.Prestart = 3, true
	t.Cleanup(func() { c.Close() })
	if _, err := c.Open(bg, "fake", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for warmUps(t, warm) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 builders warmed up in a minute", warmUps(t, warm))
		}
		time.Sleep(10 * time.Millisecond)
	}
	p := c.Program(compiled(t), []string{"a"}, []string{"kernel a"})
	if _, err := p.Build(bg, 1); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.BuilderProcs != 3 {
		t.Errorf("stats %+v after one build; want the 3 builders started", s)
	}
	time.Sleep(50 * time.Millisecond)
	if n := warmUps(t, warm); n != 3 {
		t.Errorf("%d warm-up builds; want one per builder and none in the worker", n)
	}
}

// warmUps counts the fake warm-up builds noted in the file name.
func warmUps(t *testing.T, name string) int {
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}
