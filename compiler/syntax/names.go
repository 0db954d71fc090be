package syntax

import "tltune/compiler/ir"

// nameTable maps the visible local names to their values. It is a hash
// table with linear probing whose entries leave in the reverse order of
// their arrival (scopes close innermost first, and a name is defined
// once while visible), so that removing one only frees its slot: no
// chain of an older entry passes through it. A Go map, with its
// deletions, was a twentieth of parsing a GEMM kernel.
type nameTable struct {
	entries []nameEntry // in definition order
	slots   []int32     // 1 + the index of an entry, 0 for a free slot; a power of two long
}

type nameEntry struct {
	name string
	v    *ir.Value
}

// len is the number of names defined.
func (t *nameTable) len() int { return len(t.entries) }

// lookup returns the value of name, nil if it has none.
func (t *nameTable) lookup(name string) *ir.Value {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint32(len(t.slots) - 1)
	for i := nameHash(name) & mask; ; i = (i + 1) & mask {
		e := t.slots[i]
		if e == 0 {
			return nil
		}
		if en := &t.entries[e-1]; en.name == name {
			return en.v
		}
	}
}

// define adds name, which has no value, with value v.
func (t *nameTable) define(name string, v *ir.Value) {
	t.entries = append(t.entries, nameEntry{name, v})
	if 2*len(t.entries) > len(t.slots) {
		t.rehash(max(16, 2*len(t.slots)))
		return
	}
	t.place(len(t.entries) - 1)
}

// place puts entry e into the first free slot of its chain.
func (t *nameTable) place(e int) {
	mask := uint32(len(t.slots) - 1)
	i := nameHash(t.entries[e].name) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = int32(e + 1)
}

// rehash makes n slots and places the entries in definition order, which
// keeps the order of removal the reverse of placement.
func (t *nameTable) rehash(n int) {
	if cap(t.slots) >= n {
		t.slots = t.slots[:n]
		clear(t.slots)
	} else {
		t.slots = make([]int32, n)
	}
	for e := range t.entries {
		t.place(e)
	}
}

// truncate removes the entries defined after the first n, latest first.
func (t *nameTable) truncate(n int) {
	mask := uint32(len(t.slots) - 1)
	for e := len(t.entries) - 1; e >= n; e-- {
		i := nameHash(t.entries[e].name) & mask
		for t.slots[i] != int32(e+1) {
			i = (i + 1) & mask
		}
		t.slots[i] = 0
	}
	clear(t.entries[n:]) // the values belong to the program, not to the parser
	t.entries = t.entries[:n]
}

// reset empties t, keeping its tables for the next source.
func (t *nameTable) reset() {
	t.truncate(0)
}

// nameHash is FNV-1a: local names are a few bytes long.
func nameHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}
