package device

import (
	"errors"
	"testing"
)

// fakeEvent records what was done with it.
type fakeEvent struct {
	ns               int64
	waited, released bool
}

func (e *fakeEvent) Wait() error                 { e.waited = true; return nil }
func (e *fakeEvent) Nanoseconds() (int64, error) { e.waited = true; return e.ns, nil }
func (e *fakeEvent) Release() error              { e.released = true; return nil }

// TestBackToBack: each sample is the time of the oldest launch, with
// LaunchesAhead more queued behind it when it is read; stop waits for and
// releases the rest; a failed launch is the sample's error.
func TestBackToBack(t *testing.T) {
	var launched []*fakeEvent
	next, stop := BackToBack(func() (Event, error) {
		ev := &fakeEvent{ns: int64(100 * (len(launched) + 1))}
		launched = append(launched, ev)
		return ev, nil
	})
	for i := range 3 {
		ns, err := next()
		if err != nil || ns != int64(100*(i+1)) {
			t.Fatalf("sample %d: %d ns, %v; want %d", i, ns, err, 100*(i+1))
		}
		if len(launched) != i+1+LaunchesAhead {
			t.Fatalf("sample %d read with %d launched; want %d", i, len(launched), i+1+LaunchesAhead)
		}
		if !launched[i].released {
			t.Errorf("sample %d's event was not released", i)
		}
	}
	stop()
	for i, ev := range launched {
		if !ev.waited || !ev.released {
			t.Errorf("launch %d: waited %v, released %v after stop", i, ev.waited, ev.released)
		}
	}
	next, stop = BackToBack(func() (Event, error) { return nil, errors.New("CL_OUT_OF_RESOURCES") })
	if _, err := next(); err == nil {
		t.Error("a failed launch gave a sample")
	}
	stop()
}
