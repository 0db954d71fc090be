package ir

import "testing"

// TestNumber numbers parameters, region arguments and results in program
// order.
func TestNumber(t *testing.T) {
	f := NewFunc("k", nil, []*Type{Index})
	b := NewBuilder(f.Body)
	one := b.IntConst(1, Index)
	loop := b.For(one, f.Params[0], nil)
	iv := loop.Body().Args[0]
	NewBuilder(loop.Body()).Arith(Add, iv, one)
	last := b.IntConst(2, Index)
	if n := f.Number(); n != 5 {
		t.Fatalf("%d values numbered, want 5", n)
	}
	for want, v := range []*Value{f.Params[0], one, iv} {
		if int(v.ID) != want {
			t.Errorf("value %d has ID %d", want, v.ID)
		}
	}
	if last.ID != 4 {
		t.Errorf("the last constant has ID %d, want 4", last.ID)
	}
}

// TestValueMapStaleIDs: values that share an ID, or whose ID is far out
// of range, are still kept apart, found and deleted.
func TestValueMapStaleIDs(t *testing.T) {
	a, b, c := &Value{ID: 1}, &Value{ID: 1}, &Value{ID: 1 << 30}
	var m ValueMap[string]
	m.Set(a, "a")
	m.Set(b, "b")
	m.Set(c, "c")
	for v, want := range map[*Value]string{a: "a", b: "b", c: "c"} {
		if got, ok := m.Get(v); !ok || got != want {
			t.Errorf("Get = %q, %v; want %q", got, ok, want)
		}
	}
	n := 0
	for v, x := range m.All() {
		if want := map[*Value]string{a: "a", b: "b", c: "c"}[v]; x != want {
			t.Errorf("All yields %q for a value of %q", x, want)
		}
		n++
	}
	if n != 3 {
		t.Errorf("All yields %d entries, want 3", n)
	}
	m.Delete(a)
	m.Set(b, "b2") // b lives in the overflow map; the freed slot must not shadow it
	if got, _ := m.Get(b); got != "b2" {
		t.Errorf("b = %q after an update, want b2", got)
	}
	m.Delete(b)
	if _, ok := m.Get(b); ok {
		t.Error("b found after Delete")
	}
	if _, ok := m.Get(a); ok {
		t.Error("a found after Delete")
	}
	if _, ok := m.Get(&Value{ID: 0}); ok {
		t.Error("an unknown value found")
	}
}
