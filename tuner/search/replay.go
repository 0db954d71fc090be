package search

import (
	"math"

	"tltune/compiler/tuning"
)

// Cost is a known cost surface: the median ns of p and whether it ran
// correctly. Stored results of an exhaustive run, or a synthetic function.
type Cost func(p tuning.Params) (ns float64, ok bool)

// Replay drives s against cost for at most budget evaluations and returns
// how many evaluations it took to first propose a configuration within
// tolerance (0.05 for 5 %) of the optimum (the best ok cost over
// candidates), or budget+1 if it never did. Up to inFlight proposals are
// outstanding at a time, their costs observed in proposal order, as a
// tuning run keeps configurations in flight (each is proposed before the
// results of those ahead of it are in); 1 replays one at a time. It
// measures search efficiency on stored or synthetic data, without
// compiling or running anything.
func Replay(s Strategy, candidates []tuning.Params, cost Cost, tolerance float64, budget, inFlight int) int {
	best := math.Inf(1)
	for _, p := range candidates {
		if ns, ok := cost(p); ok {
			best = math.Min(best, ns)
		}
	}
	var queue []tuning.Params
	proposed, more := 0, true
	for n := 1; n <= budget; n++ {
		for more && proposed < budget && len(queue) < max(inFlight, 1) {
			var p tuning.Params
			if p, more = s.Next(); more {
				queue, proposed = append(queue, p), proposed+1
			}
		}
		if len(queue) == 0 {
			break
		}
		p := queue[0]
		queue = queue[1:]
		ns, ok := cost(p)
		s.Observe(p, ns, ok)
		if ok && ns <= best*(1+tolerance) {
			return n
		}
	}
	return budget + 1
}

// Efficiency replays strategy name over candidates once per seed (seeds
// first, first+1, ...), inFlight proposals outstanding (Replay), and
// returns the mean number of evaluations to get within tolerance of the
// optimum, and each trial's count. With the outcomes of a stored
// exhaustive run as cost, it answers how many evaluations the strategy
// would have needed on real data.
func Efficiency(name string, candidates []tuning.Params, cost Cost, tolerance float64, trials int, first uint64, inFlight int) (mean float64, runs []int, err error) {
	for i := range trials {
		s, err := New(name, candidates, first+uint64(i))
		if err != nil {
			return 0, nil, err
		}
		n := Replay(s, candidates, cost, tolerance, len(candidates), inFlight)
		runs = append(runs, n)
		mean += float64(n) / float64(trials)
	}
	return mean, runs, nil
}
