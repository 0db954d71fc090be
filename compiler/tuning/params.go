// Package tuning owns the tuning table: the versioned JSON file that maps
// (device, op, transposes, dtypes, shape) to the recipe configuration the
// compiler uses when it lowers a collective gemm, gemv or ger.
//
// results/ writes tables, the compiler reads them; the format lives here, with
// its consumer.
package tuning

import "fmt"

// Params is one recipe configuration (DESIGN.md §4). The zero value means
// "not chosen": the compiler falls back to the next source (attributes, then
// the table, then a heuristic).
type Params struct {
	SubgroupSize  int    `json:"subgroup_size"`
	WorkGroupSize [2]int `json:"work_group_size"` // [wx, wy]; wx is a multiple of SubgroupSize
	Tile          [2]int `json:"tile"`            // per-subgroup C tile [tm, tn]
	Coopmatrix    [3]int `json:"coopmatrix"`      // [cm, cn, ck]
	Unroll        int    `json:"unroll"`          // K unroll factor u
	BatchPerGroup int    `json:"batch_per_group"` // batch entries per work-group b
	StageLocal    bool   `json:"stage_local"`     // stage A/B panels in local memory
	// VectorWidth is the elements per vector access of the gemv/ger
	// matrix (A, C): 1 scalar, up to 128 bits where the lowering proves the
	// alignment. For gemv and ger, Tile is the tile of that matrix in
	// memory a subgroup covers per trip: [rows along the contiguous mode,
	// columns].
	VectorWidth int `json:"vector_width,omitempty"`
	// Stages is the depth of the local-memory pipeline when StageLocal:
	// the copies of the next Stages-1 K panels overlap the arithmetic on
	// the current one (0 and 1: one buffer, no overlap).
	Stages int `json:"stages,omitempty"`
	// LocalPad pads the leading dimension of each staged panel by this
	// many elements, so reads of neighbouring rows fall into different
	// banks.
	LocalPad int `json:"local_pad,omitempty"`
	// LocalEpilogue writes C through local memory, in 128-bit chunks along
	// its columns, instead of straight from the accumulators.
	LocalEpilogue bool `json:"local_epilogue,omitempty"`
}

// String is the compact form used in tables and logs, e.g.
// "sg32 wg64x2 t32x32 cm16x8x16 u2 b1 local s3 pad8 cl v4" (s: pipeline
// stages, pad: local padding, cl: C through local memory, v: vector width;
// each only when chosen).
func (p Params) String() string {
	s := fmt.Sprintf("sg%d wg%dx%d t%dx%d cm%dx%dx%d u%d b%d",
		p.SubgroupSize, p.WorkGroupSize[0], p.WorkGroupSize[1],
		p.Tile[0], p.Tile[1], p.Coopmatrix[0], p.Coopmatrix[1], p.Coopmatrix[2],
		p.Unroll, p.BatchPerGroup)
	if p.StageLocal {
		s += " local"
		if p.Stages > 1 {
			s += fmt.Sprintf(" s%d", p.Stages)
		}
		if p.LocalPad > 0 {
			s += fmt.Sprintf(" pad%d", p.LocalPad)
		}
	}
	if p.LocalEpilogue {
		s += " cl"
	}
	if p.VectorWidth != 0 {
		s += fmt.Sprintf(" v%d", p.VectorWidth)
	}
	return s
}

// Subgroups is the number of subgroups in a work-group.
func (p Params) Subgroups() int {
	if p.SubgroupSize == 0 {
		return 0
	}
	return p.WorkGroupSize[0] / p.SubgroupSize * p.WorkGroupSize[1]
}

// Validate reports a configuration that no recipe can use: negative sizes, or
// a work-group width that is not a whole number of subgroups. Zero fields
// are "not chosen" and pass.
func (p Params) Validate() error {
	for _, v := range []int{p.SubgroupSize, p.WorkGroupSize[0], p.WorkGroupSize[1],
		p.Tile[0], p.Tile[1], p.Coopmatrix[0], p.Coopmatrix[1], p.Coopmatrix[2],
		p.Unroll, p.BatchPerGroup, p.VectorWidth, p.Stages, p.LocalPad} {
		if v < 0 {
			return fmt.Errorf("negative value in %s", p)
		}
	}
	if p.SubgroupSize > 0 && p.WorkGroupSize[0]%p.SubgroupSize != 0 {
		return fmt.Errorf("work-group width %d is not a multiple of subgroup size %d", p.WorkGroupSize[0], p.SubgroupSize)
	}
	return nil
}
