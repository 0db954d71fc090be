package ir

import "iter"

// Number gives every value f defines (parameters, region arguments,
// instruction results) a distinct ID from 0, in program order, and returns
// how many there are (also kept in f.NumValues). It writes the IDs: the parser numbers the functions
// it builds, the pass pipeline those it rewrites, and analyses read them
// through ValueMaps, so number f again after adding values to it for speed.
func (f *Func) Number() int {
	n := 0
	for _, p := range f.Params {
		p.ID, n = int32(n), n+1
	}
	if f.Body != nil {
		n = f.Body.number(n)
	}
	f.NumValues = n
	return n
}

func (r *Region) number(n int) int {
	for _, a := range r.Args {
		a.ID, n = int32(n), n+1
	}
	for _, in := range r.Insts {
		for _, res := range in.Results {
			res.ID, n = int32(n), n+1
		}
		for _, sub := range in.Regions {
			n = sub.number(n)
		}
	}
	return n
}

// A ValueMap maps the values of one function to Ts, in slices indexed by
// the values' IDs (Func.Number): the compiler's analyses and back ends
// look a value up for nearly every instruction, and Go maps keyed by
// *Value were a fifth of a compile. IDs are a hint, never trusted: a slot
// remembers its value, and a value whose ID is stale (built after the
// numbering) or taken by another lives in an ordinary map instead. The
// zero ValueMap is empty and ready to use.
type ValueMap[T any] struct {
	keys  []*Value
	vals  []T
	other map[*Value]T
}

// maxDenseID bounds the slices: an ID beyond it (no function has that many
// values) goes to the map.
const maxDenseID = 1 << 24

// NewValueMap returns an empty map with room for the IDs below n.
func NewValueMap[T any](n int) *ValueMap[T] {
	return &ValueMap[T]{keys: make([]*Value, n), vals: make([]T, n)}
}

// Reset empties m and makes room for the IDs below n, reusing its slices
// where they are large enough: a compile's tables recycled from a pool
// cost neither the allocation nor the collector's assists, which are paid
// by the byte and were a tenth of a compile.
func (m *ValueMap[T]) Reset(n int) {
	if cap(m.keys) < n {
		m.keys, m.vals = make([]*Value, n), make([]T, n)
	} else {
		clear(m.keys)
		clear(m.vals)
		m.keys, m.vals = m.keys[:n], m.vals[:n]
	}
	m.other = nil
}

// Get returns v's entry and whether it has one.
func (m *ValueMap[T]) Get(v *Value) (T, bool) {
	if id := v.ID; uint(id) < uint(len(m.keys)) && m.keys[id] == v {
		return m.vals[id], true
	}
	if m.other == nil { // as nearly always: no lookup
		var none T
		return none, false
	}
	x, ok := m.other[v]
	return x, ok
}

// Set makes x v's entry.
func (m *ValueMap[T]) Set(v *Value, x T) {
	// As nearly always, v's slot is v's or free, and no value has its
	// entry in the map: no call of set. (Set itself is beyond the Go
	// compiler's inlining budget: a generic body's stores go through
	// its dictionary.)
	if id := uint(v.ID); id < uint(len(m.keys)) && m.other == nil {
		if k := m.keys[id]; k == v {
			m.vals[id] = x
			return
		} else if k == nil {
			m.keys[id], m.vals[id] = v, x
			return
		}
	}
	m.set(v, x)
}

// set is Set for every case.
func (m *ValueMap[T]) set(v *Value, x T) {
	id := int(v.ID)
	if id >= len(m.keys) && id < maxDenseID {
		m.grow(id + 1)
	}
	if uint(id) < uint(len(m.keys)) {
		switch m.keys[id] {
		case v:
			m.vals[id] = x
			return
		case nil:
			if !m.elsewhere(v) {
				m.keys[id], m.vals[id] = v, x
				return
			}
		}
	}
	if m.other == nil {
		m.other = map[*Value]T{}
	}
	m.other[v] = x
}

// elsewhere reports whether v's entry is in the map; with no map, as
// nearly always, without a lookup.
func (m *ValueMap[T]) elsewhere(v *Value) bool {
	if m.other == nil {
		return false
	}
	_, ok := m.other[v]
	return ok
}

// Delete removes v's entry, if any.
func (m *ValueMap[T]) Delete(v *Value) {
	if id := v.ID; uint(id) < uint(len(m.keys)) && m.keys[id] == v {
		var zero T
		m.keys[id], m.vals[id] = nil, zero
		return
	}
	delete(m.other, v)
}

// All yields every entry, in no particular order.
func (m *ValueMap[T]) All() iter.Seq2[*Value, T] {
	return func(yield func(*Value, T) bool) {
		for id, v := range m.keys {
			if v != nil && !yield(v, m.vals[id]) {
				return
			}
		}
		for v, x := range m.other {
			if !yield(v, x) {
				return
			}
		}
	}
}

func (m *ValueMap[T]) grow(n int) {
	n = max(n, 2*len(m.keys))
	keys, vals := make([]*Value, n), make([]T, n)
	copy(keys, m.keys)
	copy(vals, m.vals)
	m.keys, m.vals = keys, vals
}
