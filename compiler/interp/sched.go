package interp

import (
	"errors"
	"fmt"
	"math"

	"tltune/compiler/ir"
)

// errAborted unwinds the work-items of an SPMD region after another
// work-item failed; the scheduler reports that first error instead.
var errAborted = errors.New("aborted")

// workItem is one work-item of an SPMD region, run as a goroutine that
// executes only while the scheduler has handed it control.
type workItem struct {
	id, sg, lane int
	s            *scheduler
	resume       chan struct{}

	at     *ir.Inst // the meeting point it waits at; nil while running or done
	args   []value  // the operands it brings to the meeting point
	result value    // set by the scheduler when the meeting resolves
	done   bool
	err    error

	copies copyQueue // its asynchronous copies in flight
}

// scheduler runs the work-items of one work-group through one SPMD region.
// Exactly one goroutine (a work-item or the scheduler) runs at any time;
// control passes over the unbuffered channels, which also orders their
// memory accesses.
type scheduler struct {
	m      *machine
	items  []*workItem
	parked chan *workItem // a work-item reached a meeting point or finished
	abort  chan struct{}
}

// spmd runs body once per work-item of the work-group and returns when all
// have finished.
func (e *exec) spmd(body func(w *exec) error) error {
	m := e.m
	s := &scheduler{m: m, parked: make(chan *workItem), abort: make(chan struct{})}
	for id := range m.numItems {
		w := &workItem{id: id, sg: id / m.sgSize, lane: id % m.sgSize, s: s, resume: make(chan struct{})}
		s.items = append(s.items, w)
		go s.start(w, &exec{m: m, group: e.group, item: w}, body)
	}
	err := s.run()
	if err != nil {
		close(s.abort)
	}
	return err
}

func (s *scheduler) start(w *workItem, e *exec, body func(w *exec) error) {
	select {
	case <-w.resume:
	case <-s.abort:
		return
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				w.err = fmt.Errorf("internal error in work-item %d: %v", w.id, r)
			}
		}()
		w.err = body(e)
	}()
	w.done, w.at = true, nil
	select {
	case s.parked <- w:
	case <-s.abort:
	}
}

// meet parks the work-item at the meeting point in with its operands and
// returns the value the meeting gives it.
func (w *workItem) meet(in *ir.Inst, args []value) (value, error) {
	w.at, w.args = in, args
	select {
	case w.s.parked <- w:
	case <-w.s.abort:
		return value{}, errAborted
	}
	select {
	case <-w.resume:
	case <-w.s.abort:
		return value{}, errAborted
	}
	return w.result, nil
}

// run hands control to each runnable work-item in turn until it parks or
// finishes, then resolves the meetings that are complete, until every
// work-item is done.
func (s *scheduler) run() error {
	runnable := s.items
	for len(runnable) > 0 {
		for _, w := range runnable {
			w.at = nil
			w.resume <- struct{}{}
			<-s.parked
			if w.done && w.err != nil {
				return w.err
			}
		}
		var err error
		if runnable, err = s.resolve(); err != nil {
			return err
		}
	}
	return nil
}

// resolve completes the subgroup meetings whose lanes are all present, or
// else a barrier that every work-item reached, and returns the work-items
// that may continue (nil when all are done).
func (s *scheduler) resolve() ([]*workItem, error) {
	var ready []*workItem
	n := s.m.sgSize
	for sg := range s.m.numSubgroups() {
		lanes := s.items[sg*n : (sg+1)*n]
		in := subgroupMeeting(lanes)
		if in == nil {
			continue
		}
		for _, w := range lanes {
			if w.at != in {
				return nil, locate(in, fmt.Errorf("subgroup %d: lane %d is %s, not at this instruction (divergent control flow)", sg, w.lane, w.where()))
			}
		}
		if err := s.perform(in, lanes); err != nil {
			return nil, locate(in, fmt.Errorf("subgroup %d: %w", sg, err))
		}
		ready = append(ready, lanes...)
	}
	if len(ready) > 0 {
		return ready, nil
	}
	return s.barrier()
}

// subgroupMeeting returns the subgroup instruction some lane waits at, or nil.
func subgroupMeeting(lanes []*workItem) *ir.Inst {
	for _, w := range lanes {
		if w.at != nil && w.at.Op != ir.OpBarrier {
			return w.at
		}
	}
	return nil
}

func (w *workItem) where() string {
	switch {
	case w.done:
		return "finished"
	case w.at != nil:
		return "waiting at " + w.at.Mnemonic() + " (" + w.at.Pos.String() + ")"
	}
	return "running"
}

// barrier releases every work-item if all wait at the same barrier.
func (s *scheduler) barrier() ([]*workItem, error) {
	var at *ir.Inst
	for _, w := range s.items {
		if w.at != nil {
			at = w.at
			break
		}
	}
	if at == nil {
		return nil, nil // all done
	}
	for _, w := range s.items {
		if w.at != at {
			return nil, locate(at, fmt.Errorf("barrier not reached by every work-item: work-item %d is %s", w.id, w.where()))
		}
	}
	return s.items, nil
}

// perform executes the subgroup instruction in for the lanes, which all
// wait at it, and hands each lane its result.
func (s *scheduler) perform(in *ir.Inst, lanes []*workItem) error {
	switch in.Op {
	case ir.OpSubgroupBroadcast:
		return broadcast(lanes)
	case ir.OpSubgroupShuffleXor:
		return shuffleXor(lanes)
	case ir.OpSubgroupAdd, ir.OpSubgroupMax, ir.OpSubgroupMin:
		scan(in, lanes)
		return nil
	case ir.OpCoopMatrixLoad:
		return s.coopLoad(in, lanes)
	case ir.OpCoopMatrixStore:
		return s.coopStore(in, lanes)
	}
	return s.performReleased(in, lanes)
}

// subgroupOp brings the operands of a subgroup instruction to the meeting
// of the work-item's subgroup and defines its result.
func (e *exec) subgroupOp(in *ir.Inst, env *env) error {
	args := make([]value, len(in.Operands))
	for i, v := range in.Operands {
		args[i] = env.get(v)
	}
	r, err := e.item.meet(in, args)
	if err != nil {
		return err
	}
	if res := in.Result(); res != nil {
		env.set(res, r)
	}
	return nil
}

// uniform checks that operand i is the same on every lane.
func uniform(lanes []*workItem, i int, what string) error {
	for _, w := range lanes[1:] {
		if !sameValue(w.args[i], lanes[0].args[i]) {
			return fmt.Errorf("%s is not dynamically uniform (lane 0 and lane %d differ)", what, w.lane)
		}
	}
	return nil
}

// sameValue compares two run-time values bit for bit (so NaN equals NaN)
// and memrefs and cooperative matrices by content.
func sameValue(a, b value) bool {
	if a.i != b.i || math.Float64bits(a.f) != math.Float64bits(b.f) ||
		math.Float64bits(real(a.c)) != math.Float64bits(real(b.c)) ||
		math.Float64bits(imag(a.c)) != math.Float64bits(imag(b.c)) {
		return false
	}
	switch x := a.ref.(type) {
	case *Memref:
		y, ok := b.ref.(*Memref)
		return ok && x.Buf == y.Buf && x.Offset == y.Offset && equalInts(x.Shape, y.Shape) && equalInts(x.Stride, y.Stride)
	case *coopMatrix:
		y, ok := b.ref.(*coopMatrix)
		if !ok || len(x.data) != len(y.data) {
			return false
		}
		for i := range x.data {
			if !sameValue(x.data[i], y.data[i]) {
				return false
			}
		}
		return true
	}
	return a.ref == b.ref
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func broadcast(lanes []*workItem) error {
	if err := uniform(lanes, 1, "the lane index"); err != nil {
		return err
	}
	src := lanes[0].args[1].i
	if src < 0 || src >= int64(len(lanes)) {
		return fmt.Errorf("lane index %d outside the subgroup of %d", src, len(lanes))
	}
	for _, w := range lanes {
		w.result = lanes[src].args[0]
	}
	return nil
}

// shuffleXor gives each lane the value of lane (its lane XOR the mask).
func shuffleXor(lanes []*workItem) error {
	if err := uniform(lanes, 1, "the mask"); err != nil {
		return err
	}
	mask := lanes[0].args[1].i
	for i, w := range lanes {
		src := int64(i) ^ mask
		if src < 0 || src >= int64(len(lanes)) {
			return fmt.Errorf("lane %d XOR mask %d is lane %d, outside the subgroup of %d", i, mask, src, len(lanes))
		}
		w.result = lanes[src].args[0]
	}
	return nil
}

// scan computes subgroup_add/max/min: lane i receives the combination of the
// contributions of lanes 0..i (inclusive), 0..i-1 (exclusive, the identity
// for lane 0) or of all lanes (reduce), combined left to right in the
// operand's type.
func scan(in *ir.Inst, lanes []*workItem) {
	t := in.Operands[0].Type
	combine := func(a, b value) value {
		switch in.Op {
		case ir.OpSubgroupMax:
			v, _ := arith(ir.Max, t, a, b)
			return v
		case ir.OpSubgroupMin:
			v, _ := arith(ir.Min, t, a, b)
			return v
		}
		v, _ := arith(ir.Add, t, a, b)
		return v
	}
	acc := scanIdentity(in.Op, t)
	prefix := make([]value, len(lanes)+1)
	prefix[0] = acc
	for i, w := range lanes {
		acc = combine(acc, w.args[0])
		prefix[i+1] = acc
	}
	for i, w := range lanes {
		switch in.Scan {
		case ir.ExclusiveScan:
			w.result = prefix[i]
		case ir.InclusiveScan:
			w.result = prefix[i+1]
		default:
			w.result = acc
		}
	}
}

func scanIdentity(op ir.Op, t *ir.Type) value {
	switch {
	case op == ir.OpSubgroupAdd:
		return value{}
	case t.IsInteger() && op == ir.OpSubgroupMax:
		return intVal(-1 << (t.Bits() - 1))
	case t.IsInteger():
		return intVal(1<<(t.Bits()-1) - 1)
	case op == ir.OpSubgroupMax:
		return floatVal(math.Inf(-1))
	}
	return floatVal(math.Inf(1))
}
