package prune

import (
	"tltune/compiler/lower"
	"tltune/compiler/tuning"
)

// The gemv and ger lowering (compiler/lower, matvec.go) streams one matrix
// — A of gemv, C of ger — in vectors of vector_width rows, a subgroup
// covering a tile [rows, cols] of it per trip. These rules keep the points
// whose kernels differ: a width the lowering can use for the shape, a tile
// it takes as given, no knob it does not read.

// isMatvec reports whether the problem is gemv or ger.
func (c *checker) isMatvec() bool { return c.prob.Op == "gemv" || c.prob.Op == "ger" }

// matrix is the streamed matrix as it lies in memory: its rows (mode 0,
// contiguous), columns and element type. gemv.t stores A as N×M.
func (c *checker) matrix() (rows, cols int, elem string) {
	switch {
	case c.prob.Op == "ger":
		return c.prob.M, c.prob.N, c.prob.acc()
	case c.prob.Trans == "t":
		return c.prob.N, c.prob.M, c.prob.Dtype
	}
	return c.prob.M, c.prob.N, c.prob.Dtype
}

// vectorWidth: gemm has no vector_width; gemv and ger vectors are powers
// of two of at most 128 bits, and the lowering proves one only when it
// divides the rows (the recipes' batch entries and columns lie whole
// multiples of the rows apart): a narrower width would compile instead.
func vectorWidth(c *checker) *Reason {
	vw := c.p.VectorWidth
	if !c.isMatvec() {
		if vw != 0 {
			return c.why("vector-width", "gemm does not use vector_width (%d)", vw)
		}
		return nil
	}
	rows, _, elem := c.matrix()
	switch {
	case vw == 0:
		return nil // left to the compiler
	case vw&(vw-1) != 0:
		return c.why("vector-width", "vector_width %d is not a power of two", vw)
	case vw*elemBytes[elem] > 16:
		return c.why("vector-width", "%d elements of %s are %d bytes, more than a 128-bit access", vw, elem, vw*elemBytes[elem])
	case rows%vw != 0:
		return c.why("vector-width", "vector_width %d does not divide the %d contiguous rows: the lowering would use a narrower vector", vw, rows)
	}
	return nil
}

// matvecTile: the tile must be the one the lowering uses (whole vectors
// per lane, columns a multiple of the lanes across), else two tiles
// compile the same kernel; and it must not be mostly padding, unless it
// is one vector per lane, the least a subgroup covers (a matrix smaller
// than the subgroup has no other tile). Without a vector width (the
// compiler's choice, as in configurations stored before there was one)
// the width and so the tile are the compiler's to fit.
func matvecTile(c *checker) *Reason {
	if !c.isMatvec() {
		return nil
	}
	vw := max(c.p.VectorWidth, 1)
	if got := lower.MatvecTile(c.p.SubgroupSize, vw, c.p.Tile); c.p.VectorWidth != 0 && got != c.p.Tile {
		return c.why("tile", "tile %dx%d at subgroup %d and vector width %d is lowered as %dx%d", c.p.Tile[0], c.p.Tile[1], c.p.SubgroupSize, vw, got[0], got[1])
	}
	rows, cols, _ := c.matrix()
	tooBig := c.p.Tile[0] > 2*roundUp(rows, vw) || c.p.Tile[1] > 2*cols
	if tooBig && c.p.Tile[0]*c.p.Tile[1] > max(c.p.SubgroupSize, 1)*vw {
		return c.why("problem-size", "tile %dx%d is more than twice the %dx%d matrix", c.p.Tile[0], c.p.Tile[1], rows, cols)
	}
	return nil
}

// matvecBusy: gemv spreads its subgroups over the row tiles (gemv.n) or
// column tiles (gemv.t) in one row of subgroups (wy = 1); ger lays the
// subgroup grid [wx/sg, wy] over the tiles. More subgroups than tiles idle.
func matvecBusy(c *checker) *Reason {
	if !c.isMatvec() {
		return nil
	}
	rows, cols, _ := c.matrix()
	tr, tc := ceilDiv(rows, c.p.Tile[0]), ceilDiv(cols, c.p.Tile[1])
	gx, gy := c.p.WorkGroupSize[0]/c.p.SubgroupSize, c.p.WorkGroupSize[1]
	if c.prob.Op == "ger" {
		if gx > tr || gy > tc {
			return c.why("idle-subgroups", "subgroup grid %dx%d exceeds the %dx%d tiles of the %dx%d matrix: subgroups idle", gx, gy, tr, tc, rows, cols)
		}
		return nil
	}
	if gy > 1 {
		return c.why("work-group", "gemv's subgroups form one row: wy %d repeats wx·wy = %d", gy, c.p.WorkGroupSize[0]*gy)
	}
	if tiles := c.gemvTiles(); gx > tiles {
		return c.why("idle-subgroups", "%d subgroups share %d tiles of the %dx%d matrix: subgroups idle", gx, tiles, rows, cols)
	}
	return nil
}

// gemvTiles is the number of output tiles of a gemv: row tiles of A for
// gemv.n, column tiles for gemv.t.
func (c *checker) gemvTiles() int {
	rows, cols, _ := c.matrix()
	if c.prob.Trans == "t" {
		return ceilDiv(cols, c.p.Tile[1])
	}
	return ceilDiv(rows, c.p.Tile[0])
}

// matvecUnused: gemv and ger stream their matrix once, so there is nothing
// to stage, and ger has no reduction loop to unroll (gemv unrolls its own:
// unrollFitsK).
func matvecUnused(c *checker) *Reason {
	switch {
	case !c.isMatvec():
		return nil
	case c.p.Unroll > 1 && c.prob.Op == "ger":
		return c.why("unroll", "ger has no reduction loop to unroll; unroll %d would compile the same kernel", c.p.Unroll)
	case c.p.StageLocal:
		return c.why("staging", "%s streams its matrix once; stage_local would compile the same kernel", c.prob.Op)
	}
	return nil
}

// matvecRegisterBytes estimates the register bytes of one subgroup for
// gemv and ger: per lane the vectors of a trip (n0·n1 of w elements, all
// in flight, times gemv's unroll), the accumulators (gemv.n: n0·w,
// gemv.t: n1·w) or the scaled a (ger: n0·w), at least 4 bytes each, and
// 16 32-bit registers for addresses and loop state.
func matvecRegisterBytes(p tuning.Params, prob Problem) int {
	c := &checker{p: p, prob: prob}
	_, _, elem := c.matrix()
	sgs, w := max(p.SubgroupSize, 1), max(p.VectorWidth, 1)
	lanes0 := max(1, min(sgs, p.Tile[0]/w))
	n0, n1 := max(1, p.Tile[0]/(w*lanes0)), max(1, p.Tile[1]/(sgs/lanes0))
	held := n0 * w
	if prob.Op == "gemv" && prob.Trans == "t" {
		held = n1 * w
	}
	per := max(4, elemBytes[elem], elemBytes[prob.acc()])
	return ((n0*n1*w*max(p.Unroll, 1)+held)*per + 16*4) * sgs
}
