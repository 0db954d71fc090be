package search

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"tltune/compiler/tuning"
	"tltune/internal/parallel"
)

// Why a Gaussian process with expected improvement, not successive halving:
// in this tuner an evaluation's cost is dominated by compiling the
// configuration (a generated kernel through the compiler and the driver),
// while timing it to a 1 % interval takes milliseconds. Successive halving
// saves repetitions — the cheap part — and still compiles every candidate
// in its first rung; a model that picks which configurations to compile at
// all saves the expensive part. The candidate set is finite and small after
// pruning (hundreds to tens of thousands), the parameters are ordinal
// (powers of two, best on a log scale), and run times vary smoothly with
// them apart from cliffs (register spills), which is the setting GP-EI
// handles well with a few dozen observations.
//
// The model: features are log2 of every parameter, scaled to [0, 1] over
// the candidates; the target is log(median ns), standardised; the kernel is
// Matérn 5/2 with one length scale per feature (ARD), chosen by maximising
// the marginal likelihood on a grid followed by one coordinate pass, refitted
// as observations grow by a quarter. Failed configurations count as the worst
// time seen, so the model learns to avoid their region without a cliff
// dominating its scale. Proposals still being evaluated are "believed" at
// the model's mean (kriging believer), which shrinks the variance around
// them so a pipelined loop does not propose their neighbours over and over.

const (
	gpInit           = 6    // random proposals before the model is used
	gpMaxScored      = 2048 // candidates scored per proposal (a subset beyond: see subset)
	gpNeighbourhoods = 8    // best observations whose neighbours are always scored
	gpXi             = 0.01 // exploration margin of expected improvement, in standardised units
	gpRefitGrowth    = 1.25 // refit hyperparameters when observations grew by this factor
	// gpCheapGain weighs the expected improvement of a candidate that is
	// cheap to evaluate (its binary is in the cache: PreferCheap), as
	// improvement per second would: on an H100, gemm 64x64x32 f16, 48
	// configurations took 2.5 s to evaluate with every one built (8
	// builder processes) and 0.40-0.56 s with every one cached, 4.5 to
	// 6.3 times less.
	gpCheapGain = 5
	// gpPathSlack is how far below the best score a step of an earlier
	// run's path (Retrace) may fall and still be taken: that run chose it
	// as the best, so a gap comes from its measurements' scatter or from
	// its pipeline finishing evaluations in another order. Leaving the
	// path costs a build at once and likely more later, against one
	// cached evaluation: on an H100 (gemm 64x64x32 f16, 48 evaluations)
	// a run with every program cached took 0.25-0.27 s, one with a
	// single build 0.48 s. With 5 a second run left the path in one of
	// three; with 20 the synthetic runs stay on it at a 10 % scatter.
	gpPathSlack = 20
	// gpPathFloor is the expected improvement, in log time (a fraction of
	// the best time), below which no candidate is worth leaving an earlier
	// run's path for, however far its score lies above the path's next
	// step: less than half the 1 % to which a median is measured (--ci
	// 0.01), it is within the noise the run cannot tell apart anyway, and
	// leaving costs a build. Near the end of a search every expected
	// improvement is tiny and their ratios are wide, so the slack alone let
	// a second run leave the path (an H100, gemm 64x64x32 f16: two builds
	// in a run of 48 that every cached program would have taken, 0.84 s
	// against 0.23 s).
	gpPathFloor = 0.005
	// gpMaxTrain caps the observations the model is fitted on (the best
	// half and the most recent half), so that a proposal costs the same
	// after a thousand evaluations as after a hundred: fitting is cubic.
	gpMaxTrain = 128
	// gpStartDraws is how many random candidates a proposal of the random
	// start draws, keeping the one farthest from every proposal so far
	// (a maximin design): the start covers the space, so that a small
	// region holding the optimum is not left to chance. Replays of
	// stored H100 runs (300 seeds, 11 in flight, tltune replay) found the
	// optimum within 48 evaluations (3 %) in 100 % of the trials at
	// gemm 16³ f32 (86 % with plain random draws), 55 % at 256³ f16
	// (52 %) and 71 % at 64×64×32 f32 (68 %); 8 or 16 draws did a little
	// less well.
	gpStartDraws = 32
)

type gp struct {
	cands []tuning.Params
	feats [][]float64 // scaled features of each candidate
	index map[tuning.Params]int
	lo    []float64 // per raw feature: minimum over the candidates
	span  []float64 // per raw feature: max - min; 0 drops the feature
	r     *rand.Rand

	done    []bool // per candidate: proposed or observed
	cheap   []bool // per candidate: cheap to evaluate (PreferCheap); nil: none is
	path    []int  // candidates an earlier run proposed, in its order (Retrace)
	pending []int  // candidates proposed, not yet observed, in order
	obs     []observation

	scales []float64 // ARD length scales of the used features
	noise  float64   // noise variance, standardised units
	fitN   int       // observations at the last hyperparameter fit
}

type observation struct {
	x  []float64
	y  float64 // log(cost) when ok
	ok bool
}

func newGP(candidates []tuning.Params, seed uint64) *gp {
	g := &gp{
		cands: candidates,
		index: make(map[tuning.Params]int, len(candidates)),
		r:     rand.New(rand.NewPCG(seed, 0x6a09)),
		done:  make([]bool, len(candidates)),
	}
	// Tens of thousands of candidates: their features are worked out on
	// every processor, once.
	raw := make([][]float64, len(candidates))
	parallel.For(len(candidates), func(i int) { raw[i] = rawFeatures(candidates[i]) })
	g.lo, g.span = featureRanges(raw)
	g.feats = make([][]float64, len(candidates))
	parallel.For(len(candidates), func(i int) { g.feats[i] = g.scaled(raw[i]) })
	for i, p := range candidates {
		g.index[p] = i
	}
	return g
}

// rawFeatures is the unscaled feature vector of p.
func rawFeatures(p tuning.Params) []float64 {
	l := func(v int) float64 { return math.Log2(float64(max(v, 1))) }
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	return []float64{
		l(p.SubgroupSize), l(p.WorkGroupSize[0]), l(p.WorkGroupSize[1]),
		l(p.Tile[0]), l(p.Tile[1]),
		l(p.Coopmatrix[0]), l(p.Coopmatrix[1]), l(p.Coopmatrix[2]),
		l(p.Unroll), l(p.BatchPerGroup), b(p.StageLocal),
		float64(max(p.Stages, 1)), l(p.LocalPad + 1), b(p.LocalEpilogue), l(p.VectorWidth),
		l(max(p.Split, 1)), b(p.LocalSwizzle),
	}
}

// featureRanges returns the least value and the span of each raw feature;
// without candidates every span is 0, and every feature is dropped.
func featureRanges(raw [][]float64) (lo, span []float64) {
	n := len(rawFeatures(tuning.Params{}))
	lo, span = make([]float64, n), make([]float64, n)
	for i, f := range raw {
		if i == 0 {
			copy(lo, f)
			continue
		}
		for j, v := range f {
			hi := lo[j] + span[j]
			lo[j] = math.Min(lo[j], v)
			span[j] = math.Max(hi, v) - lo[j]
		}
	}
	return lo, span
}

// features scales p's features to [0, 1] and drops constant ones: a
// candidate's were worked out once, in newGP.
func (g *gp) features(p tuning.Params) []float64 {
	if i, known := g.index[p]; known {
		return g.feats[i]
	}
	return g.scaled(rawFeatures(p))
}

// scaled is raw features scaled to [0, 1], constant ones dropped.
func (g *gp) scaled(raw []float64) []float64 {
	var x []float64
	for j, v := range raw {
		if g.span[j] > 0 {
			x = append(x, (v-g.lo[j])/g.span[j])
		}
	}
	return x
}

func (g *gp) Observe(p tuning.Params, cost float64, ok bool) {
	if i, known := g.index[p]; known {
		g.done[i] = true
		if j := slices.Index(g.pending, i); j >= 0 {
			g.pending = slices.Delete(g.pending, j, j+1)
		}
	}
	ok = ok && cost > 0 && !math.IsInf(cost, 0) && !math.IsNaN(cost)
	y := 0.0
	if ok {
		y = math.Log(cost)
	}
	g.obs = append(g.obs, observation{g.features(p), y, ok})
}

func (g *gp) Next() (tuning.Params, bool) {
	open := g.open()
	if len(open) == 0 {
		return tuning.Params{}, false
	}
	var i int
	if x, y := g.training(); len(y) < gpInit || !g.spread(y) {
		i = g.randomStart(open)
	} else {
		i = g.propose(open, x, y)
	}
	g.done[i] = true
	g.pending = append(g.pending, i)
	return g.cands[i], true
}

// randomStart picks a proposal of the random start: the earlier run's
// next step while its path lasts (that run drew it at random with the
// same seed), else one of the cheap candidates while there are any (they
// ran correctly before and cost no build), else of all, spread out
// (farthest).
func (g *gp) randomStart(open []int) int {
	if steps := g.pathAhead(); len(steps) > 0 {
		return steps[0]
	}
	if cheap := slices.DeleteFunc(slices.Clone(open), func(c int) bool { return !g.isCheap(c) }); len(cheap) > 0 {
		open = cheap
	}
	return g.farthest(open)
}

// farthest draws gpStartDraws candidates of open at random and returns
// the one whose least squared distance to the proposals so far (observed
// or pending) is largest; the first draw when nothing was proposed yet.
func (g *gp) farthest(open []int) int {
	var taken [][]float64
	for _, o := range g.obs {
		taken = append(taken, o.x)
	}
	for _, c := range g.pending {
		taken = append(taken, g.feats[c])
	}
	best, bestDist := open[g.r.IntN(len(open))], -1.0
	if len(taken) == 0 {
		return best
	}
	for range gpStartDraws {
		c := open[g.r.IntN(len(open))]
		dist := math.Inf(1)
		for _, x := range taken {
			dist = math.Min(dist, squaredDistance(x, g.feats[c]))
		}
		if dist > bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

func squaredDistance(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

// pathAhead lists the open candidates of the earlier run's path, in its
// order.
func (g *gp) pathAhead() []int {
	var ahead []int
	for _, c := range g.path {
		if !g.done[c] {
			ahead = append(ahead, c)
		}
	}
	return ahead
}

// open lists the indices of the candidates not yet proposed or observed.
func (g *gp) open() []int {
	var open []int
	for i, done := range g.done {
		if !done {
			open = append(open, i)
		}
	}
	return open
}

// training returns the observations as model inputs: log costs, failures
// at the worst log cost seen; none until something succeeded.
func (g *gp) training() (xs [][]float64, ys []float64) {
	worst, any := math.Inf(-1), false
	for _, o := range g.obs {
		if o.ok {
			worst, any = math.Max(worst, o.y), true
		}
	}
	if !any {
		return nil, nil
	}
	for _, i := range g.trainingSet() {
		o := g.obs[i]
		y := o.y
		if !o.ok {
			y = worst
		}
		xs, ys = append(xs, o.x), append(ys, y)
	}
	return xs, ys
}

// trainingSet picks the observations to fit: all of them up to gpMaxTrain,
// else the best successful half and the most recent rest, in order.
func (g *gp) trainingSet() []int {
	all := make([]int, len(g.obs))
	for i := range all {
		all[i] = i
	}
	if len(all) <= gpMaxTrain {
		return all
	}
	byCost := slices.Clone(all)
	slices.SortStableFunc(byCost, func(a, b int) int {
		oa, ob := g.obs[a], g.obs[b]
		switch {
		case oa.ok != ob.ok:
			if oa.ok {
				return -1
			}
			return 1
		case oa.y < ob.y:
			return -1
		case oa.y > ob.y:
			return 1
		}
		return 0
	})
	chosen := map[int]bool{}
	for _, i := range byCost[:gpMaxTrain/2] {
		chosen[i] = true
	}
	for i := len(all) - 1; len(chosen) < gpMaxTrain; i-- {
		chosen[i] = true
	}
	return slices.DeleteFunc(all, func(i int) bool { return !chosen[i] })
}

// spread reports whether ys vary at all; a flat sample gives the model
// nothing to fit.
func (g *gp) spread(ys []float64) bool {
	return slices.Max(ys) > slices.Min(ys)
}

// propose fits the model and returns the open candidate of highest
// expected improvement.
func (g *gp) propose(open []int, xs [][]float64, ys []float64) int {
	zs, _, sdY := standardize(ys)
	if g.scales == nil || float64(len(g.obs)) >= gpRefitGrowth*float64(g.fitN) {
		g.scales, g.noise = fitHyper(xs, zs, len(xs[0]))
		g.fitN = len(g.obs)
	}
	m := fitModel(xs, zs, g.scales, g.noise)
	if len(g.pending) > 0 {
		// Kriging believer: pretend pending points returned the mean.
		for _, c := range g.pending {
			x := g.feats[c]
			mu, _ := m.predict([][]float64{x})
			xs, zs = append(xs, x), append(zs, mu[0])
		}
		m = fitModel(xs, zs, g.scales, g.noise)
	}
	best := slices.Min(zs[:len(ys)])
	scored := g.subset(open)
	cx := make([][]float64, len(scored))
	for i, c := range scored {
		cx[i] = g.feats[c]
	}
	mu, sd := m.predict(cx)
	score := make([]float64, len(scored))
	bestI := 0
	for i, c := range scored {
		score[i] = expectedImprovement(best, mu[i], sd[i])
		if g.isCheap(c) {
			score[i] *= gpCheapGain
		}
		if score[i] > score[bestI] {
			bestI = i
		}
	}
	// The earlier run's first step still worth taking, if any. Scores
	// are in standardised log time: times sdY, in log time.
	belowNoise := expectedImprovement(best, mu[bestI], sd[bestI])*sdY < gpPathFloor
	for _, c := range g.pathAhead() {
		if i := slices.Index(scored, c); i >= 0 && (belowNoise || score[i]*gpPathSlack >= score[bestI]) {
			return c
		}
	}
	return scored[bestI]
}

// preferCheap marks the candidates of cheap as cheap to evaluate.
func (g *gp) preferCheap(cheap []tuning.Params) {
	for _, p := range cheap {
		if i, known := g.index[p]; known {
			if g.cheap == nil {
				g.cheap = make([]bool, len(g.cands))
			}
			g.cheap[i] = true
		}
	}
}

func (g *gp) isCheap(c int) bool { return g.cheap != nil && g.cheap[c] }

// retrace makes path, an earlier run's proposals in order, the way this
// run goes while its steps stay within gpPathSlack of the best score.
func (g *gp) retrace(path []tuning.Params) {
	g.path = g.path[:0]
	for _, p := range path {
		if i, known := g.index[p]; known && !slices.Contains(g.path, i) {
			g.path = append(g.path, i)
		}
	}
}

// subset picks the candidates to score when there are more than
// gpMaxScored: the open steps of an earlier run's path, the open cheap
// ones, then the open neighbours (one parameter changed) of the best
// observations, where an optimum is likeliest, these filling at most
// half, then random others.
func (g *gp) subset(open []int) []int {
	if len(open) <= gpMaxScored {
		return open
	}
	taken := make([]bool, len(open))
	var scored []int
	ahead := map[int]bool{}
	for _, c := range g.pathAhead() {
		ahead[c] = true
	}
	near := g.nearBest(open)
	onPath := func(k int) bool { return ahead[open[k]] }
	cheap := func(k int) bool { return g.isCheap(open[k]) }
	for _, always := range []func(int) bool{onPath, cheap, func(k int) bool { return near[k] }} {
		for k, c := range open {
			if len(scored) < gpMaxScored/2 && !taken[k] && always(k) {
				scored, taken[k] = append(scored, c), true
			}
		}
	}
	for _, k := range g.r.Perm(len(open)) {
		if len(scored) == gpMaxScored {
			break
		}
		if !taken[k] {
			scored = append(scored, open[k])
		}
	}
	return scored
}

// nearChunk is how many candidates one goroutine of nearBest checks.
const nearChunk = 4096

// nearBest reports for each candidate of open whether it neighbours one
// of the best observations (gpNeighbourhoods), on all processors: tens of
// thousands of candidates are open in a large space.
func (g *gp) nearBest(open []int) []bool {
	best := g.bestObserved(gpNeighbourhoods)
	near := make([]bool, len(open))
	parallel.For((len(open)+nearChunk-1)/nearChunk, func(chunk int) {
		for k := chunk * nearChunk; k < min((chunk+1)*nearChunk, len(open)); k++ {
			near[k] = slices.ContainsFunc(best, func(x []float64) bool { return neighbours(x, g.feats[open[k]]) })
		}
	})
	return near
}

// bestObserved returns the features of the n fastest successful
// observations.
func (g *gp) bestObserved(n int) [][]float64 {
	var ok []observation
	for _, o := range g.obs {
		if o.ok {
			ok = append(ok, o)
		}
	}
	slices.SortStableFunc(ok, func(a, b observation) int { return cmp.Compare(a.y, b.y) })
	var xs [][]float64
	for _, o := range ok[:min(n, len(ok))] {
		xs = append(xs, o.x)
	}
	return xs
}

// neighbours reports whether feature vectors a and b differ in exactly one
// feature (they come from the same scaling, so equal values are equal bits).
func neighbours(a, b []float64) bool {
	diff := 0
	for i := range a {
		if a[i] != b[i] {
			if diff++; diff > 1 {
				return false
			}
		}
	}
	return diff == 1
}

// expectedImprovement of a point with posterior N(mu, sd²) over best, for
// minimisation.
func expectedImprovement(best, mu, sd float64) float64 {
	d := best - mu - gpXi
	if sd <= 1e-12 {
		return math.Max(d, 0)
	}
	z := d / sd
	return d*normCDF(z) + sd*normPDF(z)
}

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func standardize(ys []float64) (zs []float64, mean, sd float64) {
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	for _, y := range ys {
		sd += (y - mean) * (y - mean)
	}
	sd = math.Sqrt(sd / float64(len(ys)))
	if sd == 0 {
		sd = 1
	}
	zs = make([]float64, len(ys))
	for i, y := range ys {
		zs[i] = (y - mean) / sd
	}
	return zs, mean, sd
}

// model is a Gaussian process conditioned on standardised observations.
type model struct {
	xs     [][]float64
	scales []float64
	chol   mat.Cholesky
	alpha  *mat.VecDense // K⁻¹ y
	lml    float64       // log marginal likelihood
}

// matern52 is the Matérn 5/2 covariance with unit signal variance.
func matern52(a, b, scales []float64) float64 {
	r2 := 0.0
	for i := range a {
		d := (a[i] - b[i]) / scales[i]
		r2 += d * d
	}
	r := math.Sqrt(5 * r2)
	return (1 + r + r*r/3) * math.Exp(-r)
}

// fitModel conditions the GP on (xs, zs), adding diagonal jitter until the
// covariance factorises.
func fitModel(xs [][]float64, zs, scales []float64, noise float64) *model {
	n := len(xs)
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			k.SetSym(i, j, matern52(xs[i], xs[j], scales))
		}
	}
	m := &model{xs: xs, scales: scales}
	for jitter := noise + 1e-8; ; jitter *= 10 {
		for i := range n {
			k.SetSym(i, i, 1+jitter)
		}
		if m.chol.Factorize(k) {
			break
		}
	}
	y := mat.NewVecDense(n, slices.Clone(zs))
	m.alpha = mat.NewVecDense(n, nil)
	m.lml = math.Inf(-1)
	if usable(m.chol.SolveVecTo(m.alpha, y)) {
		m.lml = -0.5*mat.Dot(y, m.alpha) - 0.5*m.chol.LogDet() - float64(n)/2*math.Log(2*math.Pi)
	}
	return m
}

// predictChunk is how many points one goroutine of predict handles.
const predictChunk = 256

// predict returns the posterior mean and standard deviation at each x,
// in chunks on all processors: scoring a few thousand candidates against a
// hundred observations is the bulk of a proposal's cost.
func (m *model) predict(xs [][]float64) (mu, sd []float64) {
	mu, sd = make([]float64, len(xs)), make([]float64, len(xs))
	var l mat.TriDense
	m.chol.LTo(&l)
	chunks := (len(xs) + predictChunk - 1) / predictChunk
	parallel.For(chunks, func(c int) {
		lo, hi := c*predictChunk, min((c+1)*predictChunk, len(xs))
		m.predictInto(&l, xs[lo:hi], mu[lo:hi], sd[lo:hi])
	})
	return mu, sd
}

// predictInto fills mu and sd for xs, given the Cholesky factor l.
func (m *model) predictInto(l *mat.TriDense, xs [][]float64, mu, sd []float64) {
	n, c := len(m.xs), len(xs)
	ks := mat.NewDense(n, c, nil)
	for j, x := range xs {
		for i, xi := range m.xs {
			ks.Set(i, j, matern52(xi, x, m.scales))
		}
	}
	var meanV mat.VecDense
	meanV.MulVec(ks.T(), m.alpha)
	var v mat.Dense
	solved := usable(v.Solve(l, ks))
	for j := range c {
		mu[j] = meanV.AtVec(j)
		s := 1.0 // the prior variance, if the solve failed
		for i := 0; solved && i < n; i++ {
			s -= v.At(i, j) * v.At(i, j)
		}
		sd[j] = math.Sqrt(math.Max(s, 1e-12))
	}
}

// usable reports whether a gonum solve left a usable result: for an
// ill-conditioned system it solves anyway and returns a mat.Condition.
func usable(err error) bool {
	var c mat.Condition
	return err == nil || errors.As(err, &c)
}

// fitHyper chooses length scales and noise by marginal likelihood: a shared
// scale and noise on a grid, then one pass over the features trying each
// scale halved, doubled and quadrupled.
func fitHyper(xs [][]float64, zs []float64, dims int) ([]float64, float64) {
	uniform := func(s float64) []float64 {
		sc := make([]float64, dims)
		for i := range sc {
			sc[i] = s
		}
		return sc
	}
	bestScales, bestNoise, bestLML := uniform(0.5), 1e-3, math.Inf(-1)
	for _, s := range []float64{0.1, 0.2, 0.35, 0.5, 0.8, 1.2, 2} {
		for _, noise := range []float64{1e-4, 1e-3, 1e-2, 1e-1} {
			if m := fitModel(xs, zs, uniform(s), noise); m.lml > bestLML {
				bestScales, bestNoise, bestLML = uniform(s), noise, m.lml
			}
		}
	}
	for d := range dims {
		base := bestScales[d]
		for _, f := range []float64{0.5, 2, 4} {
			trial := slices.Clone(bestScales)
			trial[d] = base * f
			if m := fitModel(xs, zs, trial, bestNoise); m.lml > bestLML {
				bestScales, bestLML = trial, m.lml
			}
		}
	}
	return bestScales, bestNoise
}
