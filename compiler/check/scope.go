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
// Each value's scope is kept in an ir.ValueMap, so values are found by ID
// with the map's fallback for stale or shared IDs.
type scopes struct {
	of   ir.ValueMap[int32] // the scope each value was defined in
	open []bool             // by scope: whether it is still open
	cur  int32              // the innermost open scope
}

// reset empties s for a function of n values and opens its outermost
// scope, reusing the tables where they are large enough (the checkers are
// recycled from compile to compile).
func (s *scopes) reset(n int) {
	s.of.Reset(n)
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
func (s *scopes) define(v *ir.Value) { s.of.Set(v, s.cur) }

// visible reports whether v is defined in an open scope.
func (s *scopes) visible(v *ir.Value) bool {
	sc, ok := s.of.Get(v)
	return ok && s.open[sc]
}
