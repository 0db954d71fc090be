package tuner

import (
	"context"
	"sync"
	"time"
)

// Phase is a kind of work whose wall time a run accounts for.
type Phase int

// The phases, most device-bound first: when several goroutines work at
// once, the wall time goes to the first of their phases in this order (see
// Split).
const (
	PhaseTime    Phase = iota // timing a verified configuration on the device
	PhaseRetime               // timing the fastest again with the full protocol at the end (racing)
	PhaseVerify               // running it once and checking the output against the reference
	PhaseBuild                // the driver building a program for the device
	PhaseCompile              // tltune's compiler: source to OpenCL C or SPIR-V
	PhaseRecord               // committing outcomes to the store
	PhasePropose              // the strategy choosing and the recipe generating source; pruning
	PhaseSetup                // preparing inputs, reference and buffers before the search
	PhaseIdle                 // none of the above
	numPhases
)

var phaseNames = [numPhases]string{"time", "retime", "verify", "build", "compile", "record", "propose", "setup", "idle"}

func (p Phase) String() string { return phaseNames[p] }

// Phases lists every phase in report order: the pipeline's order, idle last.
var Phases = []Phase{PhaseSetup, PhasePropose, PhaseCompile, PhaseBuild, PhaseVerify, PhaseTime, PhaseRetime, PhaseRecord, PhaseIdle}

// Split is where a run's wall time went. The phases partition the wall
// time: at each instant the time goes to the most device-bound phase any
// goroutine was in (the order of the Phase constants), so a build that
// overlaps timing is not counted, and one the device waits for is. Busy is
// the time spent in each phase summed over goroutines, which may exceed
// the wall time where work overlaps.
type Split struct {
	Wall   time.Duration
	Phases [numPhases]time.Duration
	Busy   [numPhases]time.Duration
}

// Add puts d of wall time into phase p, as work done outside the tuner's
// own clock (preparing a session, say) on the critical path.
func (s *Split) Add(p Phase, d time.Duration) {
	s.Wall += d
	s.Phases[p] += d
	s.Busy[p] += d
}

// Seconds is the wall time of each phase in seconds, by name.
func (s *Split) Seconds() map[string]float64 { return byName(&s.Phases) }

// BusySeconds is the busy time of each phase in seconds, by name.
func (s *Split) BusySeconds() map[string]float64 { return byName(&s.Busy) }

func byName(d *[numPhases]time.Duration) map[string]float64 {
	m := make(map[string]float64, numPhases)
	for _, p := range Phases {
		m[p.String()] = d[p].Seconds()
	}
	return m
}

// phaseClock attributes the wall time of a run to phases as the goroutines
// (lanes) of the tuner enter and leave them.
type phaseClock struct {
	now   func() time.Time
	mu    sync.Mutex
	start time.Time
	last  time.Time
	lanes [][]Phase // each lane's stack of phases; its top is what it does
	split Split
}

func newPhaseClock(now func() time.Time) *phaseClock {
	t := now()
	return &phaseClock{now: now, start: t, last: t}
}

// laneKey finds a goroutine's lane in a context.
type laneKey struct{}

type lane struct {
	clock *phaseClock
	id    int
}

// newLane gives a goroutine its lane: ctx carries it to Track.
func (c *phaseClock) newLane(ctx context.Context) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lanes = append(c.lanes, nil)
	return context.WithValue(ctx, laneKey{}, lane{c, len(c.lanes) - 1})
}

// Track marks the calling goroutine as working in phase p until the
// returned function is called; a phase tracked inside another one takes
// over until it ends. A Compiler or Measurer calls it with the context the
// tuner gave it to say where its time goes (the tuner counts a whole
// Compile call as PhaseCompile and a whole Measure call as PhaseTime);
// without a tuner's context it does nothing.
func Track(ctx context.Context, p Phase) (end func()) {
	l, ok := ctx.Value(laneKey{}).(lane)
	if !ok {
		return func() {}
	}
	c := l.clock
	c.mu.Lock()
	c.advance(c.now())
	depth := len(c.lanes[l.id])
	c.lanes[l.id] = append(c.lanes[l.id], p)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.advance(c.now())
		// Back to the depth before p: this also ends phases tracked inside
		// p whose end was skipped (a panic the tuner recovered from).
		c.lanes[l.id] = c.lanes[l.id][:depth]
	}
}

// advance gives the time since the last change to the phases the lanes
// are in.
func (c *phaseClock) advance(now time.Time) {
	dt := now.Sub(c.last)
	c.last = now
	wall := PhaseIdle
	for _, stack := range c.lanes {
		if len(stack) == 0 {
			continue
		}
		top := stack[len(stack)-1]
		c.split.Busy[top] += dt
		wall = min(wall, top)
	}
	c.split.Phases[wall] += dt
}

// stop ends the clock and returns the split.
func (c *phaseClock) stop() Split {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.advance(now)
	c.split.Wall = now.Sub(c.start)
	return c.split
}
