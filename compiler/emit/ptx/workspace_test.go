package ptx

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestPureTable checks pure's table against a map per scope, as pure
// kept them before, through random lookups, inserts (into the innermost
// scope or an outer one, as hoist does) and scopes entered and left,
// with few distinct hashes so that probing and deletion are exercised,
// wrapping around the slots too.
func TestPureTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab pureTable
	tab.reset()
	model := []map[string]string{{}}
	find := func(key string) (string, bool) {
		for _, s := range model {
			if reg, ok := s[key]; ok {
				return reg, true
			}
		}
		return "", false
	}
	for step := range 200000 {
		switch n := r.IntN(100); {
		case n < 5 && len(model) < 8:
			tab.enter()
			model = append(model, map[string]string{})
		case n < 10 && len(model) > 1:
			tab.leave()
			model = model[:len(model)-1]
		default:
			opcode := []string{"add.s32", "mul.lo.s32"}[r.IntN(2)]
			args := []string{"%r" + strconv.Itoa(r.IntN(40)), strconv.Itoa(r.IntN(4))}
			key := opcode + "\t" + args[0] + ", " + args[1]
			// Few hashes, collisions on purpose, half of them at the end
			// of the slots, whose probes wrap around.
			h := tab.hash(opcode, args)
			if h&1 == 0 {
				h &= 0x3f
			} else {
				h |= ^uint64(0xf)
			}
			got, ok := tab.lookup(h, opcode, args)
			want, wantOK := find(key)
			if got != want || ok != wantOK {
				t.Fatalf("step %d: %s is %q, %v; want %q, %v", step, key, got, ok, want, wantOK)
			}
			if !ok {
				scope := r.IntN(len(model))
				reg := "%r" + strconv.Itoa(step)
				tab.insert(scope, h, opcode, args, reg)
				model[scope][key] = reg
			}
		}
	}
}
