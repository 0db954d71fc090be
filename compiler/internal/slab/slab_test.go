package slab

import "testing"

// TestOf: what a slab hands out is zero, does not overlap, keeps its
// values when the slab grows, and is zero again after a recycle.
func TestOf(t *testing.T) {
	var s Of[int]
	var held []*int
	var taken [][]int
	for i := range 100 {
		held = append(held, s.Hold(i))
		xs := s.Take(i % 5)
		for j := range xs {
			if xs[j] != 0 {
				t.Fatalf("Take(%d) handed out %v, want zeros", i%5, xs)
			}
			xs[j] = -i
		}
		if cap(xs) != len(xs) {
			t.Fatalf("Take(%d) has capacity %d", len(xs), cap(xs))
		}
		taken = append(taken, xs)
	}
	for i, p := range held {
		if *p != i {
			t.Errorf("held value %d is now %d", i, *p)
		}
		for _, x := range taken[i] {
			if x != -i {
				t.Errorf("slice %d holds %v", i, taken[i])
			}
		}
	}
	s.Recycle()
	xs := s.Take(cap(s.buf))
	for _, x := range xs {
		if x != 0 {
			t.Fatalf("after Recycle the slab handed out %d", x)
		}
	}
}
