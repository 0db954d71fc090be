package check

import "tltune/compiler/ir"

// scopes tracks the values in scope. Each region the verifier enters opens
// a scope; a value belongs to the scope open when it is defined and is
// visible while that scope is. Closing a scope is one store, not a
// deletion per value: a lowered GEMM defines hundreds of values, and
// deleting each from an ir.ValueMap and listing them for it (pointer
// stores, under the garbage collector's write barrier while it marks)
// made verifying the nvidia pipelined GEMM a tenth slower.
//
// Values are found by ID (ir.Func.Number), which is a hint only: a slot
// remembers its value, and a value whose ID is out of range or taken by
// another lives in a map instead, as in an ir.ValueMap.
type scopes struct {
	values []*ir.Value // by ID: the value defined with it
	scope  []int32     // by ID: the scope of that value
	other  map[*ir.Value]int32
	open   []bool // by scope: whether it is still open
	cur    int32  // the innermost open scope
}

// reset empties s for a function of n values and opens its outermost
// scope, reusing the tables where they are large enough (the checkers are
// recycled from compile to compile).
func (s *scopes) reset(n int) {
	clear(s.values)
	if cap(s.values) < n {
		s.values, s.scope = make([]*ir.Value, n), make([]int32, n)
	}
	s.values, s.scope = s.values[:n], s.scope[:n]
	s.other = nil
	s.open = append(s.open[:0], true)
	s.cur = 0
}

// enter opens a scope inside the current one and returns the one to
// restore with leave.
func (s *scopes) enter() (outer int32) {
	outer = s.cur
	s.cur = int32(len(s.open))
	s.open = append(s.open, true)
	return outer
}

// leave closes the current scope, making its values invisible, and goes
// back to outer.
func (s *scopes) leave(outer int32) {
	s.open[s.cur] = false
	s.cur = outer
}

// define makes v visible in the current scope.
func (s *scopes) define(v *ir.Value) {
	if id := v.ID; uint(id) < uint(len(s.values)) {
		if old := s.values[id]; old == v || old == nil && !s.elsewhere(v) {
			s.values[id], s.scope[id] = v, s.cur
			return
		}
	}
	if s.other == nil {
		s.other = map[*ir.Value]int32{}
	}
	s.other[v] = s.cur
}

// elsewhere reports whether v lives in the map.
func (s *scopes) elsewhere(v *ir.Value) bool {
	if s.other == nil { // as it nearly always is: no lookup
		return false
	}
	_, ok := s.other[v]
	return ok
}

// visible reports whether v is defined in an open scope.
func (s *scopes) visible(v *ir.Value) bool {
	if id := v.ID; uint(id) < uint(len(s.values)) && s.values[id] == v {
		return s.open[s.scope[id]]
	}
	if s.other == nil {
		return false
	}
	sc, ok := s.other[v]
	return ok && s.open[sc]
}
