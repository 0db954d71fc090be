package tuning

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"tltune/internal/speak"
)

// How says how a lookup found its configuration.
type How int

const (
	NoMatch How = iota // nothing usable: the compiler falls back to its heuristic
	Exact              // an entry for exactly this device and problem
	Nearest            // the closest tuned problem of the same device, op, trans, dtype and precision
)

var howNames = [...]string{NoMatch: "no match", Exact: "exact", Nearest: "nearest"}

func (h How) String() string { return howNames[h] }

// A Match is the answer of Lookup: the entry used (unless How is NoMatch) and
// enough context to explain the choice.
type Match struct {
	How      How
	Key      Key     // what was asked
	Entry    Entry   // the entry used; zero when How is NoMatch
	Distance float64 // log2-space distance to Entry's shape (Nearest only)
	others   int     // entries in the table, for the no-match explanation
}

// Params returns the chosen configuration and whether there is one.
func (m Match) Params() (Params, bool) {
	return m.Entry.Params, m.How != NoMatch
}

// String explains the match in one line, as `tltune compile --explain`
// prints it.
func (m Match) String() string {
	e := &m.Entry
	from := ""
	if e.Origin != "" {
		from = " in " + e.Origin
	}
	switch m.How {
	case Exact:
		return fmt.Sprintf("tuning table: exact match for %s%s (run %d, median %s): %s",
			m.Key, from, e.Run, speak.Duration(e.MedianNS), e.Params.For(e.Op))
	case Nearest:
		return fmt.Sprintf("tuning table: no entry for %s; nearest tuned shape %s%s (log2 distance %.2f%s): %s",
			m.Key, e.Shape(), from, m.Distance, tunedFor(m.Key.Problem, e), e.Params.For(e.Op))
	}
	return fmt.Sprintf("tuning table: no entry for %s, nor for its device, op, transposes, dtype and precision among %d entries; using the heuristic",
		m.Key, m.others)
}

// Lookup finds the configuration for k: the entry with exactly this key,
// else the entry of the same device, op, trans, dtype and precision whose
// shape is nearest, else no match. Among nearest candidates one with the
// same accumulation type is preferred to a closer one with another; ties go
// to the smaller shape (its tiles do not overhang the requested one) and
// then to key order, so the answer never depends on entry order.
func (t *Table) Lookup(k Key) Match {
	m := Match{How: NoMatch, Key: k, others: len(t.Entries)}
	var best *Entry
	for i := range t.Entries {
		e := &t.Entries[i]
		ek := e.Key()
		if ek == k {
			return Match{How: Exact, Key: k, Entry: *e}
		}
		if ek.family() != k.family() {
			continue
		}
		if best == nil || nearer(k, ek, best.Key()) {
			best = e
		}
	}
	if best != nil {
		m.How, m.Entry, m.Distance = Nearest, *best, distance(k, best.Key())
	}
	return m
}

// tunedFor names what the entry was tuned for where it differs from the
// asked problem apart from the shape, e.g. `, tuned with acc "f16", beta=1`.
func tunedFor(asked speak.Problem, e *Entry) string {
	var diffs []string
	if e.Acc != asked.Acc {
		diffs = append(diffs, fmt.Sprintf("acc %q", e.Acc))
	}
	if e.legacy {
		diffs = append(diffs, "unknown alpha, beta and layout (a version 1 table)")
		return ", tuned with " + strings.Join(diffs, ", ")
	}
	for _, f := range []struct{ name, asked, got string }{
		{"alpha", asked.Alpha, e.Alpha}, {"beta", asked.Beta, e.Beta}, {"layout", asked.Layout, e.Layout},
	} {
		if f.asked != f.got {
			diffs = append(diffs, f.name+"="+f.got)
		}
	}
	if asked.Atomic != e.Atomic {
		diffs = append(diffs, fmt.Sprintf("atomic=%v", e.Atomic))
	}
	if len(diffs) == 0 {
		return ""
	}
	return ", tuned with " + strings.Join(diffs, ", ")
}

// nearer reports whether candidate a is a better nearest match for k than b:
// the same accumulation type first, then the fewest differences in α, β,
// atomic update and layout, then the shape.
func nearer(k, a, b Key) bool {
	return cmp.Or(
		cmp.Compare(boolRank(a.Acc != k.Acc), boolRank(b.Acc != k.Acc)),
		cmp.Compare(epilogueMismatch(k.Problem, a.Problem), epilogueMismatch(k.Problem, b.Problem)),
		cmp.Compare(distance(k, a), distance(k, b)),
		cmp.Compare(volume(a), volume(b)),
		compareKeys(a, b),
	) < 0
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// distance is the Euclidean distance between two shapes in log2 space.
//
// Log space because what makes a configuration fit a shape is multiplicative:
// tile counts, work-group occupancy and the K-loop trip count change with the
// ratio of sizes, so 32 is as far from 64 as 512 is from 1024. A linear
// distance would call every small shape close to every other and let the
// largest dimension decide alone. A zero size (k of gemv/ger) counts as 1.
func distance(a, b Key) float64 {
	d := 0.0
	for _, p := range [][2]int{{a.M, b.M}, {a.N, b.N}, {a.K, b.K}} {
		x := log2(p[0]) - log2(p[1])
		d += x * x
	}
	return math.Sqrt(d)
}

func log2(n int) float64 { return math.Log2(float64(max(n, 1))) }

func volume(k Key) int { return max(k.M, 1) * max(k.N, 1) * max(k.K, 1) }
