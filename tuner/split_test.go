package tuner

import (
	"context"
	"testing"
	"time"
)

// TestSplitAttribution drives the clock by hand: two goroutines' lanes
// overlap, and at each instant the wall time goes to the most
// device-bound phase; a nested phase takes over its lane.
func TestSplitAttribution(t *testing.T) {
	now := time.Unix(0, 0)
	at := func(s int) { now = time.Unix(int64(s), 0) }
	c := newPhaseClock(func() time.Time { return now })
	compiler := c.newLane(context.Background())
	device := c.newLane(context.Background())

	endCompile := Track(compiler, PhaseCompile) // 0–10
	at(5)
	endTime := Track(device, PhaseTime) // 5–15
	at(7)
	endVerify := Track(device, PhaseVerify) // 7–9, inside timing
	at(9)
	endVerify()
	at(10)
	endCompile()
	at(15)
	endTime()
	at(20)
	s := c.stop()

	sec := func(d time.Duration) int { return int(d / time.Second) }
	want := map[Phase]int{PhaseCompile: 5, PhaseTime: 8, PhaseVerify: 2, PhaseIdle: 5}
	for _, p := range Phases {
		if got := sec(s.Phases[p]); got != want[p] {
			t.Errorf("wall %s = %ds, want %ds", p, got, want[p])
		}
	}
	if sec(s.Wall) != 20 {
		t.Errorf("wall %v, want 20s", s.Wall)
	}
	if sec(s.Busy[PhaseCompile]) != 10 || sec(s.Busy[PhaseTime]) != 8 || sec(s.Busy[PhaseVerify]) != 2 {
		t.Errorf("busy compile %v, time %v, verify %v; want 10s, 8s, 2s", s.Busy[PhaseCompile], s.Busy[PhaseTime], s.Busy[PhaseVerify])
	}
	if got := s.Seconds(); len(got) != len(Phases) || got["time"] != 8 {
		t.Errorf("Seconds() = %v", got)
	}
}

// TestTrackEndsInnerPhases: ending a phase ends those tracked inside it
// whose end was skipped (a panic recovered by the tuner).
func TestTrackEndsInnerPhases(t *testing.T) {
	now := time.Unix(0, 0)
	c := newPhaseClock(func() time.Time { return now })
	lane := c.newLane(context.Background())
	end := Track(lane, PhaseTime)
	Track(lane, PhaseVerify) // never ended
	now = now.Add(time.Second)
	end()
	now = now.Add(time.Second)
	if s := c.stop(); s.Phases[PhaseVerify] != time.Second || s.Phases[PhaseIdle] != time.Second {
		t.Errorf("split %v: want 1s verify, then idle", s.Phases)
	}
}

// TestTrackWithoutTuner: a Compiler or Measurer called outside a tuner
// tracks nothing and does not fail.
func TestTrackWithoutTuner(t *testing.T) {
	Track(context.Background(), PhaseBuild)()
}

// TestRunSplit: a run's phases add up to its wall time, and the time the
// measurer spends is on the device's side of the split.
func TestRunSplit(t *testing.T) {
	const delay = 5 * time.Millisecond
	tu, _ := newTuner(t, &memRecorder{}, &fakeMeasurer{delay: delay}, Options{Strategy: "exhaustive", Budget: 6, ConfigTimeout: time.Second})
	rep, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	for _, p := range Phases {
		sum += rep.Split.Phases[p]
	}
	if sum != rep.Split.Wall || rep.Split.Wall <= 0 {
		t.Errorf("phases add up to %v, wall %v", sum, rep.Split.Wall)
	}
	measured := rep.Evaluated() - rep.Counts[CompileError] - rep.Counts[ResourceError]
	if min := time.Duration(measured) * delay; rep.Split.Phases[PhaseTime] < min {
		t.Errorf("time %v for %d measurements of %v each", rep.Split.Phases[PhaseTime], measured, delay)
	}
	if rep.Split.Busy[PhasePropose] <= 0 || rep.Split.Busy[PhaseRecord] <= 0 {
		t.Errorf("busy %v: proposing and recording took no time", rep.Split.Busy)
	}
}
