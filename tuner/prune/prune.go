// Package prune decides, before anything is compiled, which points of a
// search space can run on a device and are worth running for a shape. Every
// rejected point carries the rule that rejected it and why; a rejected point
// is counted as pruned, never as an evaluation.
//
// The rules are estimates where they must be (registers): a rule errs on the
// side of keeping a configuration, since a wrong keep costs one compilation
// and a wrong prune can hide the optimum.
package prune

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"tltune/compiler/ir"
	"tltune/compiler/lower"
	"tltune/compiler/tuning"
	"tltune/internal/parallel"
	"tltune/tuner/profile"
)

// Reason says why a configuration was pruned. Its message is formatted
// only when asked for: pruning a space formats one per rule, not one per
// rejected configuration.
type Reason struct {
	Rule   string // short rule name, for counts: "subgroup", "registers", ...
	format string
	args   []any
}

// Msg is the specific violation, with numbers.
func (r *Reason) Msg() string { return fmt.Sprintf(r.format, r.args...) }

func (r *Reason) String() string { return r.Rule + ": " + r.Msg() }

// Tally is the configurations one rule rejected: how many, and the first
// one's reason.
type Tally struct {
	Rule    string
	Count   int
	Example Reason
}

// rule checks one constraint; nil means satisfied.
type rule func(c *checker) *Reason

// rules run in order; the first violation is the reason. Cheap structural
// rules come first, so that a reason names the most basic problem.
var rules = []rule{
	subgroupSupported,
	halfWarpUseful,
	workGroupShape,
	coopmatrixUse,
	vectorWidth,
	coopmatrixShape,
	coopRowsUseful,
	tileDivisible,
	matvecTile,
	tileFitsProblem,
	subgroupsBusy,
	matvecBusy,
	splitUseful,
	unrollFitsK,
	matvecUnused,
	batchFits,
	stagingUseful,
	padUseful,
	swizzleUseful,
	pipelineFits,
	localEpilogueUse,
	localMemoryFits,
	registersFit,
}

// checker holds one configuration and its context while the rules run.
type checker struct {
	p      tuning.Params
	dev    *profile.Profile
	prob   Problem
	reason Reason // the last violation (why)
}

// Check returns why p is pruned for prob on dev, or nil if it is kept.
// prob must be valid (Problem.Validate).
func Check(p tuning.Params, dev *profile.Profile, prob Problem) *Reason {
	return (&checker{p: p, dev: dev, prob: prob}).check()
}

// check runs the rules on c's configuration.
func (c *checker) check() *Reason {
	for _, r := range rules {
		if why := r(c); why != nil {
			return why
		}
	}
	return nil
}

// Split checks every configuration of all and returns the kept ones, in
// order, and the pruned ones tallied by rule, in the order the rules first
// fired. Tallies, not the pruned configurations themselves: a space of
// 10⁵ points prunes most of them, and collecting them was most of the
// time pruning took.
func Split(all iter.Seq[tuning.Params], dev *profile.Profile, prob Problem) (keep []tuning.Params, pruned []Tally) {
	index := map[string]int{}
	// One checker for the walk: a checker each was half of what pruning
	// allocated.
	c := &checker{dev: dev, prob: prob}
	for p := range all {
		c.p = p
		why := c.check()
		if why == nil {
			keep = append(keep, p)
			continue
		}
		i, seen := index[why.Rule]
		if !seen {
			i, index[why.Rule] = len(pruned), len(pruned)
			pruned = append(pruned, Tally{Rule: why.Rule, Example: *why})
		}
		pruned[i].Count++
	}
	return keep, pruned
}

// SplitParts is Split of the points of parts, one part after the other,
// the parts walked side by side: one walk of the 36,856 candidates of the
// H100's gemm 64x64x32 f16 took 0.13 s on two cores, about as long as
// preparing the device's inputs.
func SplitParts(parts []iter.Seq[tuning.Params], dev *profile.Profile, prob Problem) (keep []tuning.Params, pruned []Tally) {
	keeps, tallies := make([][]tuning.Params, len(parts)), make([][]Tally, len(parts))
	parallel.For(len(parts), func(i int) { keeps[i], tallies[i] = Split(parts[i], dev, prob) })
	for i := range parts {
		keep = append(keep, keeps[i]...)
		pruned = addTallies(pruned, tallies[i])
	}
	return keep, pruned
}

// addTallies adds more to tallies, rule by rule, keeping the order in
// which the rules first fired and the first example of each.
func addTallies(tallies, more []Tally) []Tally {
	for _, t := range more {
		i := slices.IndexFunc(tallies, func(have Tally) bool { return have.Rule == t.Rule })
		if i < 0 {
			tallies = append(tallies, t)
			continue
		}
		tallies[i].Count += t.Count
	}
	return tallies
}

// Total is the number of configurations the tallies count.
func Total(pruned []Tally) int {
	n := 0
	for _, t := range pruned {
		n += t.Count
	}
	return n
}

// why is the reason c's configuration breaks rule. It is the checker's
// own, rewritten by the next violation: pruning a space finds millions, and
// a new one each was a fifth of what it allocated. Check's callers get a
// checker of their own; Split copies the reasons it keeps.
func (c *checker) why(rule, format string, args ...any) *Reason {
	c.reason = Reason{Rule: rule, format: format, args: args}
	return &c.reason
}

func subgroupSupported(c *checker) *Reason {
	if !slices.Contains(c.dev.SubgroupSizes, c.p.SubgroupSize) {
		return c.why("subgroup", "subgroup size %d is not one of %v on %s", c.p.SubgroupSize, c.dev.SubgroupSizes, c.dev.Name)
	}
	return nil
}

func workGroupShape(c *checker) *Reason {
	if err := c.p.FitsWorkGroup(c.dev.MaxWorkGroupSize, c.dev.OneSubgroupPerGroup); err != nil {
		return c.why("work-group", "%v", err)
	}
	return nil
}

// coopmatrixUse: gemm is built from coopmatrices; gemv and ger are not, and
// a coopmatrix there would only enumerate duplicates.
func coopmatrixUse(c *checker) *Reason {
	has := c.p.Coopmatrix != [3]int{}
	switch {
	case c.prob.Op == "gemm" && !has:
		return c.why("coopmatrix", "gemm needs a coopmatrix shape")
	case c.prob.Op != "gemm" && has:
		return c.why("coopmatrix", "%s does not use a coopmatrix", c.prob.Op)
	}
	return nil
}

// coopmatrixShape: where the target has matrix instructions for the dtype,
// the coopmatrix must be a grid of them (anything else would fall back to
// scalar FMAs on hardware bought for the instructions). Without them, the
// intel target spreads the coopmatrix rows over the lanes (DESIGN.md §4), so
// rows must be a multiple of the subgroup size; other targets take any shape.
func coopmatrixShape(c *checker) *Reason {
	if c.prob.Op != "gemm" {
		return nil
	}
	sg, cm, cn, ck := c.p.SubgroupSize, c.p.Coopmatrix[0], c.p.Coopmatrix[1], c.p.Coopmatrix[2]
	var x profile.Matrix // the first instruction listed, for the reason
	listed := false
	for m := range c.dev.MatrixFor(c.prob.Dtype) {
		if m.Fits(sg, cm, cn, ck) {
			return nil
		}
		if !listed {
			x, listed = m, true
		}
	}
	if listed {
		return c.why("coopmatrix", "%dx%dx%d on subgroup %d is no %s shape for %s (subgroup %d, m a multiple of one of %v, n of %d, k of %d)",
			cm, cn, ck, sg, x.Kind, c.prob.Dtype, x.SubgroupSize, x.M, x.N, x.K)
	}
	if c.dev.Target == profile.Intel && cm%sg != 0 {
		return c.why("coopmatrix", "coopmatrix rows %d are not a multiple of subgroup size %d (rows are spread over lanes)", cm, sg)
	}
	return nil
}

// CoopRowsUseful reports whether a gemm coopmatrix of cm rows is worth
// trying on dev for prob. On the nvidia target rows beyond a warp's 32
// pay only where no matrix engine takes the dtype: each lane then holds
// neighbouring rows, which it reads from a column-major panel and writes
// to C as one vector (128³ f32 on an H100, exhaustively: 64 rows 131.8
// µs, 32 rows 137.2 µs, all else the same). For mma.sync a coopmatrix of
// more rows only groups more of the engine's blocks of a tile, and listing
// them spread the default search over more points (256³ f16: 93.6 µs
// found against 83.6-84.3 µs without them). Elsewhere every size of the
// space is tried.
func CoopRowsUseful(dev *profile.Profile, prob Problem, cm int) bool {
	if dev.Target != profile.NVIDIA || cm <= warp {
		return true
	}
	for range dev.MatrixFor(prob.Dtype) {
		return false
	}
	return true
}

// warp is the lanes of an NVIDIA warp, which the nvidia target's
// subgroups fill or halve.
const warp = 32

// halfWarp reports whether subgroups of sgs lanes are half-warps on dev.
func halfWarp(dev *profile.Profile, sgs int) bool { return dev.Target == profile.NVIDIA && sgs < warp }

// HalfWarpUseful reports whether subgroups of sgs lanes are worth
// searching for prob on dev: on the nvidia target a half-warp (16 lanes)
// pays only for a GEMM without a matrix engine (mma.sync and ldmatrix work
// on whole warps), where a 16-row coopmatrix would leave half of a warp's
// lanes without a row (16³ f32 on an H100: 89.1 % of copy at best with
// warps). Elsewhere every subgroup size of the space is tried.
func HalfWarpUseful(dev *profile.Profile, prob Problem, sgs int) bool {
	if !halfWarp(dev, sgs) {
		return true
	}
	for range dev.MatrixFor(prob.Dtype) {
		return false
	}
	return prob.Op == "gemm"
}

// HalfWarpRows reports whether coopmatrices of cm rows suit subgroups of
// sgs lanes on dev: a half-warp's have its 16 rows, one a lane.
func HalfWarpRows(dev *profile.Profile, sgs, cm int) bool {
	return !halfWarp(dev, sgs) || cm == sgs
}

// halfWarpUseful: see HalfWarpUseful and HalfWarpRows.
func halfWarpUseful(c *checker) *Reason {
	sgs := c.p.SubgroupSize
	switch {
	case !HalfWarpUseful(c.dev, c.prob, sgs):
		return c.why("half-warp", "subgroup size %d: half-warps pay only for a GEMM off the matrix engine (%s %s)", sgs, c.prob.Op, c.prob.Dtype)
	case !HalfWarpRows(c.dev, sgs, c.p.Coopmatrix[0]):
		return c.why("half-warp", "subgroup size %d: a half-warp pays only for coopmatrices of %d rows, not %d", sgs, sgs, c.p.Coopmatrix[0])
	}
	return nil
}

// coopRowsUseful: see CoopRowsUseful.
func coopRowsUseful(c *checker) *Reason {
	if c.prob.Op == "gemm" && !CoopRowsUseful(c.dev, c.prob, c.p.Coopmatrix[0]) {
		return c.why("coopmatrix", "coopmatrix rows %d: %s goes to the matrix engine, whose blocks a tile holds at 32 rows a coopmatrix as well", c.p.Coopmatrix[0], c.prob.Dtype)
	}
	return nil
}

func tileDivisible(c *checker) *Reason {
	tm, tn, cm, cn := c.p.Tile[0], c.p.Tile[1], c.p.Coopmatrix[0], c.p.Coopmatrix[1]
	if c.prob.Op == "gemm" && (tm%cm != 0 || tn%cn != 0) {
		return c.why("tile", "tile %dx%d is not a multiple of coopmatrix %dx%d", tm, tn, cm, cn)
	}
	return nil
}

// tileFitsProblem: a tile more than twice the problem (rounded up to the
// coopmatrix) computes mostly padding.
func tileFitsProblem(c *checker) *Reason {
	if c.isMatvec() {
		return nil // matvecTile
	}
	tm, tn := c.p.Tile[0], c.p.Tile[1]
	limM, limN := 2*roundUp(c.prob.M, c.p.Coopmatrix[0]), 2*roundUp(c.prob.N, c.p.Coopmatrix[1])
	if tm > limM || tn > limN {
		return c.why("problem-size", "tile %dx%d is more than twice the %dx%d problem", tm, tn, c.prob.M, c.prob.N)
	}
	return nil
}

// subgroupsBusy: the subgroup grid [wx/sg, wy] maps onto the grid of tiles
// of one batch entry; a grid wider than the tile grid leaves subgroups idle.
func subgroupsBusy(c *checker) *Reason {
	if c.isMatvec() {
		return nil // matvecBusy
	}
	gx, gy := c.p.WorkGroupSize[0]/c.p.SubgroupSize, c.p.WorkGroupSize[1]
	tx, ty := ceilDiv(c.prob.M, c.p.Tile[0]), ceilDiv(c.prob.N, c.p.Tile[1])
	if gx > tx || gy > ty {
		return c.why("idle-subgroups", "subgroup grid %dx%d exceeds the %dx%d tiles of %dx%d: subgroups idle", gx, gy, tx, ty, c.prob.M, c.prob.N)
	}
	return nil
}

// unrollFitsK: unrolling beyond the number of K steps (of ck) only adds
// remainder code.
func unrollFitsK(c *checker) *Reason {
	u, step, k := c.p.Unroll, c.p.Coopmatrix[2], c.prob.K
	switch {
	case c.prob.Op == "ger":
		return nil // matvecUnused
	case c.prob.Op == "gemv":
		// The trips of the reduction: over A's columns for gemv.n, its
		// (stored) rows for gemv.t.
		rows, cols, _ := c.matrix()
		step, k = c.p.Tile[1], cols
		if c.prob.Trans == "t" {
			step, k = c.p.Tile[0], rows
		}
	}
	if u > 1 && step*u > roundUp(k, step) {
		return c.why("unroll", "unroll %d of steps of %d exceeds the loop of %d", u, step, k)
	}
	return nil
}

// splitUseful: the work-groups of a gemv, gemm or ger may share a batch
// entry. A split beyond the entry's units of work (gemv: the rounds of
// tiles of a work-group; gemm: the work-group blocks of C; ger: the rounds
// of column tiles of a work-group) leaves work-groups idle, and a gemm
// split pays only by filling the compute units and evening out the last
// wave of work-groups, which a batch of at least splitUnneededPerUnit
// work-groups per compute unit does alone.
func splitUseful(c *checker) *Reason {
	split := c.p.Split
	if split <= 1 {
		return nil
	}
	var units int
	var what string
	switch c.prob.Op {
	case "gemv":
		units, what = ceilDiv(c.gemvTiles(), c.p.WorkGroupSize[0]/c.p.SubgroupSize), "rounds of tiles of a work-group"
	case "gemm":
		units, what = c.gemmBlocks(), "work-group blocks of C"
		if SplitUnneeded(c.dev, c.prob, c.p.BatchPerGroup) {
			cus := c.dev.ComputeUnits
			return c.why("split-unneeded", "split %d: the batch alone gives the %d compute units %d work-groups each", split, cus, c.workGroups()/cus)
		}
	case "ger":
		_, cols, _ := c.matrix()
		units, what = ceilDiv(ceilDiv(cols, c.p.Tile[1]), c.p.WorkGroupSize[1]), "rounds of column tiles of a work-group"
	default:
		return c.why("split", "%s does not split a batch entry over work-groups (split %d)", c.prob.Op, split)
	}
	if split > units {
		return c.why("idle-work-groups", "split %d exceeds the %d %s: work-groups idle", split, units, what)
	}
	return nil
}

// SplitUnneeded reports whether a gemm batch alone, at batchPerGroup
// entries a work-group, gives every compute unit of dev
// splitUnneededPerUnit work-groups or more, so that no split is kept.
func SplitUnneeded(dev *profile.Profile, prob Problem, batchPerGroup int) bool {
	cus := dev.ComputeUnits
	return prob.Op == "gemm" && cus > 0 && prob.Batch > 0 && ceilDiv(prob.Batch, max(batchPerGroup, 1)) >= splitUnneededPerUnit*cus
}

// splitUnneededPerUnit is the number of work-groups per compute unit from
// which a batch fills the device and makes its last wave a small part.
const splitUnneededPerUnit = 16

// gemmBlocks is the number of work-group blocks (wx/sg·tm × wy·tn) of C.
func (c *checker) gemmBlocks() int {
	bm, bn := c.p.WorkGroupSize[0]/c.p.SubgroupSize*c.p.Tile[0], c.p.WorkGroupSize[1]*c.p.Tile[1]
	return ceilDiv(c.prob.M, bm) * ceilDiv(c.prob.N, bn)
}

// workGroups is the number of work-groups the batch alone launches (0
// when the batch is not known).
func (c *checker) workGroups() int {
	return ceilDiv(c.prob.Batch, max(c.p.BatchPerGroup, 1))
}

func batchFits(c *checker) *Reason {
	if c.prob.Batch > 0 && c.p.BatchPerGroup > c.prob.Batch {
		return c.why("batch", "batch_per_group %d exceeds the batch of %d", c.p.BatchPerGroup, c.prob.Batch)
	}
	return nil
}

// stagingUseful: staging pays when subgroups share panels, or when a
// pipeline overlaps the copies with the arithmetic; a single buffer in a
// work-group of one subgroup gains neither.
func stagingUseful(c *checker) *Reason {
	if c.p.StageLocal && c.p.Subgroups() == 1 && c.p.Stages <= 1 {
		return c.why("staging", "stage_local with one buffer and a single subgroup shares and overlaps nothing")
	}
	if !c.p.StageLocal && (c.p.Stages > 1 || c.p.LocalPad > 0 || c.p.LocalSwizzle) {
		return c.why("staging", "stages, local_pad and local_swizzle apply to staged panels only")
	}
	if c.p.LocalSwizzle && c.p.LocalPad > 0 {
		return c.why("staging", "local_swizzle lays the panels out unpadded: local_pad %d is moot", c.p.LocalPad)
	}
	return nil
}

// PadUseful reports whether a staged panel padded by pad elements is worth
// trying on dev for prob: on the nvidia target only a pad of 16 bytes is.
// Panels are filled by 16-byte cp.async copies, whose destinations a pad
// that is no multiple of 16 bytes misaligns, and a pad of 16 bytes already
// starts each row of a panel four banks on from the last; a wider one only
// costs local memory (256³ f32 on an H100, exhaustively over the same
// space: pad 4, 16 bytes, 249.7 µs; pad 8 259.0 µs). Elsewhere every pad
// of the space is tried.
func PadUseful(dev *profile.Profile, prob Problem, pad int) bool {
	// The lowering copies panels in chunks of the widest vector access.
	return pad == 0 || dev.Target != profile.NVIDIA || pad*elemBytes[prob.Dtype] == ir.MaxVectorBytes
}

func padUseful(c *checker) *Reason {
	if !PadUseful(c.dev, c.prob, c.p.LocalPad) {
		return c.why("pad", "local_pad %d is %d bytes of %s; the nvidia target's 16-byte copies want a pad of 16 bytes", c.p.LocalPad, c.p.LocalPad*elemBytes[c.prob.Dtype], c.prob.Dtype)
	}
	return nil
}

// swizzleUseful: the swizzled layout makes the copies into the panels
// write whole 128-byte rows, but every fragment element read from them
// then computes a permuted address. Where ldmatrix reads the fragments in
// 16-byte rows (16-bit inputs on the nvidia target) that costs little, and
// the swizzle won at every size measured (256³ f16 on an H100: 90 µs
// against 99 µs padded). Where fragments are read element by element, the
// cost grows with the K loop: f32 on the same H100, each element's address
// one XOR of its row (columnAddr), was faster swizzled up to K = 128 (64³
// 83.7 µs against 91.9 µs, 128³ 140.9 against 145.7) and slower at 256
// (272.2 against 255.5), where a search that kept it picked it and lost
// 15 %.
func swizzleUseful(c *checker) *Reason {
	const longK = 256
	ldmatrix := c.dev.Target == profile.NVIDIA && (c.prob.Dtype == "f16" || c.prob.Dtype == "bf16")
	if !c.p.LocalSwizzle || ldmatrix || c.prob.K < longK {
		return nil
	}
	return c.why("swizzle", "%s fragments are read element by element, and over a K loop of %d (≥ %d) each read's permuted address costs more than whole-row copies gain", c.prob.Dtype, c.prob.K, longK)
}

// pipelineFits: a pipeline deeper than the iterations of one batch entry
// (its blocks times their K steps) copies ahead into stages nobody uses.
func pipelineFits(c *checker) *Reason {
	if c.prob.Op != "gemm" || c.p.Stages <= 1 {
		return nil
	}
	bm := c.p.WorkGroupSize[0] / c.p.SubgroupSize * c.p.Tile[0]
	bn := c.p.WorkGroupSize[1] * c.p.Tile[1]
	bk := c.p.Coopmatrix[2] * max(c.p.Unroll, 1)
	iters := ceilDiv(c.prob.M, bm) * ceilDiv(c.prob.N, bn) * ceilDiv(c.prob.K, bk)
	if c.p.Stages > iters {
		return c.why("pipeline", "%d stages exceed the %d iterations (blocks × K steps) of one batch entry", c.p.Stages, iters)
	}
	return nil
}

// localEpilogueUse: only the GEMM lowering writes C through local memory,
// and not when C is updated atomically.
func localEpilogueUse(c *checker) *Reason {
	if c.p.LocalEpilogue && (c.prob.Op != "gemm" || c.prob.Atomic) {
		return c.why("local-epilogue", "local_epilogue applies to non-atomic gemm only")
	}
	return nil
}

// LocalBytes is the local memory a configuration allocates per work-group:
// for gemm what the compiler allocates (lower.GemmLocalBytes: the stages of
// the A and B panels, the staging buffer of C), for gemv/ger the A block
// and the vector piece it multiplies.
func LocalBytes(p tuning.Params, prob Problem) int {
	if prob.Op == "gemm" {
		return lower.GemmLocalBytes(p, lower.GemmOperands{
			SizeA: elemBytes[prob.Dtype], SizeB: elemBytes[prob.Dtype], SizeC: elemBytes[prob.acc()],
			TransA: strings.HasPrefix(prob.Trans, "t"), TransB: len(prob.Trans) == 2 && prob.Trans[1] == 't',
			Atomic: prob.Atomic})
	}
	if !p.StageLocal {
		return 0
	}
	rows := p.WorkGroupSize[0] / p.SubgroupSize * p.Tile[0]
	cols := p.WorkGroupSize[1] * p.Tile[1]
	kb := p.Coopmatrix[2] * p.Unroll
	if prob.Op != "gemm" {
		// The "K block" of gemv/ger is the column block; the second panel
		// is the piece of x (or y) it touches.
		kb, cols = cols*p.Unroll, 1
	}
	return (rows*kb + kb*cols) * elemBytes[prob.Dtype]
}

func localMemoryFits(c *checker) *Reason {
	need, have := LocalBytes(c.p, c.prob), c.dev.LocalMemoryBytes
	if have > 0 && need > have {
		return c.why("local-memory", "staging needs %d bytes of local memory, %s has %d", need, c.dev.Name, have)
	}
	return nil
}

// RegisterBytes estimates the register bytes one subgroup needs: the
// accumulator tile, the A and B fragments of each unrolled K step, and 16
// 32-bit registers per lane for addresses and loop state (gemv and ger:
// matvecRegisterBytes).
func RegisterBytes(p tuning.Params, prob Problem) int {
	if prob.Op == "gemv" || prob.Op == "ger" {
		return matvecRegisterBytes(p, prob)
	}
	tm, tn, ck := p.Tile[0], p.Tile[1], max(1, p.Coopmatrix[2])
	acc := tm * tn * elemBytes[prob.acc()]
	frags := p.Unroll * (tm*ck + ck*tn) * elemBytes[prob.Dtype]
	return acc + frags + 16*4*p.SubgroupSize
}

func registersFit(c *checker) *Reason {
	sg := c.p.SubgroupSize
	need, have := RegisterBytes(c.p, c.prob), c.dev.RegisterBytesPerSubgroup
	if halfWarp(c.dev, sg) {
		have = have / warp * sg // each lane of a warp has registers of its own
	}
	if have > 0 && need > have {
		return c.why("registers", "about %d bytes of registers per lane needed, %d available at subgroup size %d", ceilDiv(need, sg), have/sg, sg)
	}
	return nil
}
