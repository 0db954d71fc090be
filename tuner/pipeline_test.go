package tuner

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"tltune/compiler/tuning"
)

// handshake is a compiler and measurer that only make progress if
// compilation overlaps measurement and compilations run in parallel: the
// first measurement waits until two later configurations are being compiled
// at the same time. Run serially, they would wait forever (the test gives
// up after a generous timeout and fails).
type handshake struct {
	measuring chan struct{} // closed when the first measurement starts
	both      chan struct{} // closed when two compilations run at once
	mu        sync.Mutex
	compiling int
	once      sync.Once
	first     sync.Once
}

func (h *handshake) Compile(ctx context.Context, src string) (Artifact, error) {
	if src == "kernel 1" {
		return artifact{}, nil // the first configuration compiles at once
	}
	select {
	case <-h.measuring:
	case <-time.After(5 * time.Second):
		return nil, errors.New("compiled before anything was measured")
	}
	h.mu.Lock()
	h.compiling++
	if h.compiling == 2 {
		h.once.Do(func() { close(h.both) })
	}
	h.mu.Unlock()
	select {
	case <-h.both:
		return artifact{}, nil
	case <-time.After(5 * time.Second):
		return nil, errors.New("no second compilation in parallel")
	}
}

func (h *handshake) Measure(ctx context.Context, _ Artifact, _ tuning.Params) (Measurement, error) {
	h.first.Do(func() { close(h.measuring) })
	select {
	case <-h.both:
	case <-time.After(5 * time.Second):
		return Measurement{}, errors.New("measured without compilations in parallel")
	}
	return Measurement{Verify: Verification{Tolerance: 1}, Result: samples(100)}, nil
}

func TestPipelineOverlaps(t *testing.T) {
	h := &handshake{measuring: make(chan struct{}), both: make(chan struct{})}
	tu, _ := newTuner(t, &memRecorder{}, nil, Options{Strategy: "exhaustive", Budget: 3, CompileWorkers: 2, ConfigTimeout: time.Minute})
	tu.Compiler, tu.Measurer = h, h
	n := 0
	tu.Generate = func(tuning.Params) (string, error) {
		n++
		return "kernel " + string(rune('0'+n)), nil
	}
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[OK] != 3 {
		for _, o := range rep.Outcomes {
			t.Logf("%d %s %s", o.Seq, o.Kind, o.Message)
		}
		t.Errorf("counts %v: compilation did not overlap measurement", rep.Counts)
	}
}
