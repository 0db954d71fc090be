package tuner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

type closer struct{ closed *int }

func (c closer) Close() error { *c.closed++; return nil }

func TestCacheEvictsIdleLeastRecentlyUsed(t *testing.T) {
	c := newCompileCache(2)
	closed := 0
	get := func(h string) *cacheEntry {
		e, created := c.acquire(h)
		if created {
			c.finish(e, closer{&closed}, nil, "", time.Millisecond)
		}
		return e
	}
	a, b, e3 := get("a"), get("b"), get("c")
	c.release(e3) // over capacity, c is the only idle entry
	if _, ok := c.entries["c"]; ok || closed != 1 {
		t.Fatalf("after releasing c: entries %v, %d closed", keys(c), closed)
	}
	c.release(a) // a idle, but within capacity: kept
	if len(c.entries) != 2 || closed != 1 {
		t.Fatalf("after releasing a: entries %v, %d closed", keys(c), closed)
	}
	if again, created := c.acquire("b"); created || again != b {
		t.Error("b not served from the cache")
	}
	c.release(get("d")) // idle: a (least recent) and d; a goes
	if _, ok := c.entries["a"]; ok || closed != 2 {
		t.Errorf("after releasing d: entries %v, %d closed", keys(c), closed)
	}
	c.close()
	if closed != 4 || len(c.entries) != 0 {
		t.Errorf("close: %d closed, %d left", closed, len(c.entries))
	}
}

func keys(c *compileCache) []string {
	var ks []string
	for k := range c.entries {
		ks = append(ks, k)
	}
	return ks
}

// blockingCompiler never finishes a compilation before its deadline.
type blockingCompiler struct{}

func (blockingCompiler) Compile(ctx context.Context, _ string) (Artifact, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("offline compiler killed: %w", ctx.Err())
}

func TestCompileTimeout(t *testing.T) {
	rec := &memRecorder{}
	tu, _ := newTuner(t, rec, &fakeMeasurer{}, Options{Strategy: "exhaustive", Budget: 3, ConfigTimeout: 5 * time.Millisecond})
	tu.Compiler = blockingCompiler{}
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[Timeout] != 3 {
		t.Errorf("counts %v, want 3 timeouts", rep.Counts)
	}
	for _, o := range rep.Outcomes {
		if !strings.Contains(o.Message, "deadline") || (!o.CacheHit && o.CompileTime < 5*time.Millisecond) {
			t.Errorf("%v: message %q, compile time %v", o.Params, o.Message, o.CompileTime)
		}
	}
}

// A classified error wins over the deadline: a compiler that reports
// running out of registers just as time runs out is a resource error.
func TestClassify(t *testing.T) {
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-expired.Done()
	live := context.Background()
	cases := []struct {
		err      error
		ctx      context.Context
		fallback Kind
		want     Kind
	}{
		{errors.New("x"), live, CompileError, CompileError},
		{errors.New("x"), expired, LaunchError, Timeout},
		{fmt.Errorf("wrapped: %w", Fail(ResourceError, errors.New("regs"))), expired, CompileError, ResourceError},
		{Fail(DeviceLost, errors.New("gone")), live, LaunchError, DeviceLost},
	}
	for _, c := range cases {
		if got := classify(c.err, c.ctx, c.fallback); got != c.want {
			t.Errorf("classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if (Verification{RelErr: 1e-9, Tolerance: 0}).Passed() || !(Verification{RelErr: 0, Tolerance: 0}).Passed() {
		t.Error("Passed compares wrongly")
	}
}
