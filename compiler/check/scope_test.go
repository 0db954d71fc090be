package check

import (
	"testing"

	"tltune/compiler/ir"
)

// TestScopesStaleIDs: values whose IDs are out of range or shared are
// found all the same (through the map), and closing a scope hides exactly
// the values defined in it.
func TestScopesStaleIDs(t *testing.T) {
	var s scopes
	s.reset(2)
	a, b := &ir.Value{ID: 0}, &ir.Value{ID: 0} // b's ID is a's
	far, neg := &ir.Value{ID: 7}, &ir.Value{ID: -1}
	never := &ir.Value{ID: 1}
	s.define(a)
	outer := s.enter()
	for _, v := range []*ir.Value{b, far, neg} {
		s.define(v)
	}
	for _, v := range []*ir.Value{a, b, far, neg} {
		if !s.visible(v) {
			t.Errorf("value %p (ID %d) is not visible in its scope", v, v.ID)
		}
	}
	if s.visible(never) {
		t.Error("a value never defined is visible")
	}
	s.leave(outer)
	if !s.visible(a) {
		t.Error("the outer value is hidden by closing the inner scope")
	}
	for _, v := range []*ir.Value{b, far, neg} {
		if s.visible(v) {
			t.Errorf("value %p (ID %d) is visible after its scope closed", v, v.ID)
		}
	}
	s.define(b) // defined again, now in the outer scope
	if !s.visible(b) {
		t.Error("a value defined again is not visible")
	}
	s.reset(0)
	for _, v := range []*ir.Value{a, b, far, neg} {
		if s.visible(v) {
			t.Errorf("value %p (ID %d) is kept by reset", v, v.ID)
		}
	}
}
