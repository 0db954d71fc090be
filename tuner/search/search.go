// Package search owns the search strategies: given the configurations that
// survived pruning, each proposes the next one to evaluate and learns from
// the outcomes. Budget and time limits are the caller's (the tuning loop
// stops asking); a strategy only decides the order.
//
// Strategies:
//   - exhaustive: every candidate in enumeration order;
//   - random: every candidate in a seeded random order;
//   - gp: a Gaussian-process model of log(time) over the parameters with
//     expected improvement (gp.go says why this one).
package search

import (
	"fmt"
	"math/rand/v2"

	"tltune/compiler/tuning"
)

// Strategy proposes configurations and learns from their outcomes. Next and
// Observe are called from one goroutine. Observe may report configurations
// that were never proposed (results of an interrupted run being resumed);
// they are never proposed afterwards.
type Strategy interface {
	// Next returns the next configuration to evaluate; false when none is
	// left. A proposal not yet observed is pending: a strategy that looks
	// ahead accounts for it.
	Next() (tuning.Params, bool)
	// Observe reports an outcome: cost is the median time in ns when ok;
	// a failed configuration (compile error, wrong result, ...) has ok false.
	Observe(p tuning.Params, cost float64, ok bool)
}

// Names lists the strategies New knows, for flags and messages.
var Names = []string{"exhaustive", "random", "gp"}

// New returns the strategy called name over candidates (in enumeration
// order, without duplicates); seed makes random choices reproducible.
func New(name string, candidates []tuning.Params, seed uint64) (Strategy, error) {
	switch name {
	case "exhaustive":
		return newOrdered(candidates, nil), nil
	case "random":
		return newOrdered(candidates, rand.New(rand.NewPCG(seed, 0x7e57))), nil
	case "gp":
		return newGP(candidates, seed), nil
	}
	return nil, fmt.Errorf("unknown strategy %q; want one of %v", name, Names)
}

// PreferCheap tells s which candidates cost little to evaluate: those whose
// device binaries are in the binary cache, which the driver need not build.
// The gp strategy starts from them and weighs their expected improvement
// by what an evaluation saves (gpCheapGain), so that a second run of a
// space builds little; the exhaustive and random orders do not change.
func PreferCheap(s Strategy, cheap []tuning.Params) {
	if c, ok := s.(interface{ preferCheap([]tuning.Params) }); ok {
		c.preferCheap(cheap)
	}
}

// Retrace gives s the proposals of an earlier run of the same space with
// the same seed, in its order. The gp strategy takes them again, step by
// step, while each stays within reach of the best expected improvement
// (gpPathSlack): measurements scatter from run to run, and without the
// path a second run soon proposes other configurations than the first,
// which the binary cache does not hold. Other strategies repeat
// themselves anyway.
func Retrace(s Strategy, path []tuning.Params) {
	if r, ok := s.(interface{ retrace([]tuning.Params) }); ok {
		r.retrace(path)
	}
}

// ordered proposes candidates in a fixed order, skipping those already seen.
type ordered struct {
	order []tuning.Params
	next  int
	seen  map[tuning.Params]bool
}

// newOrdered keeps the enumeration order, or shuffles it when r is not nil.
func newOrdered(candidates []tuning.Params, r *rand.Rand) *ordered {
	order := append([]tuning.Params(nil), candidates...)
	if r != nil {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return &ordered{order: order, seen: map[tuning.Params]bool{}}
}

func (o *ordered) Next() (tuning.Params, bool) {
	for ; o.next < len(o.order); o.next++ {
		if p := o.order[o.next]; !o.seen[p] {
			o.seen[p] = true
			o.next++
			return p, true
		}
	}
	return tuning.Params{}, false
}

func (o *ordered) Observe(p tuning.Params, _ float64, _ bool) { o.seen[p] = true }

// WarmStart proposes first (the best configurations of tuned neighbouring
// shapes, say) before anything s proposes, skipping those already observed,
// and passes every observation on to s so that s learns from them too.
func WarmStart(s Strategy, first []tuning.Params) Strategy {
	return &warm{Strategy: s, first: first, seen: map[tuning.Params]bool{}}
}

type warm struct {
	Strategy
	first []tuning.Params
	seen  map[tuning.Params]bool
}

func (w *warm) Next() (tuning.Params, bool) {
	for len(w.first) > 0 {
		p := w.first[0]
		w.first = w.first[1:]
		if !w.seen[p] {
			w.seen[p] = true
			return p, true
		}
	}
	for {
		p, ok := w.Strategy.Next()
		if !ok || !w.seen[p] {
			if ok {
				w.seen[p] = true
			}
			return p, ok
		}
	}
}

func (w *warm) Observe(p tuning.Params, cost float64, ok bool) {
	w.seen[p] = true
	w.Strategy.Observe(p, cost, ok)
}
