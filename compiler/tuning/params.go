// Package tuning owns the tuning table: the versioned JSON file that maps
// (device, op, transposes, dtypes, shape) to the recipe configuration the
// compiler uses when it lowers a collective gemm, gemv or ger.
//
// results/ writes tables, the compiler reads them; the format lives here, with
// its consumer.
package tuning

import (
	"fmt"
	"strconv"
	"strings"
)

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
	// LocalSwizzle lays each staged panel out unpadded, with the 16-byte
	// chunks of every 128-byte row permuted (XOR with bits of the column or
	// row), so that both the copies into local memory and the fragment
	// reads out of it meet each bank once; it excludes LocalPad.
	LocalSwizzle bool `json:"local_swizzle,omitempty"`
	// LocalEpilogue writes C through local memory, in 128-bit chunks along
	// its columns, instead of straight from the accumulators.
	LocalEpilogue bool `json:"local_epilogue,omitempty"`
	// Split is the number of work-groups that share one batch entry, each
	// taking every Split-th round of output tiles (gemv), work-group block
	// of C (gemm) or round of column tiles (ger) (0 and 1: one work-group
	// an entry). They form the launch's second dimension, so a batch too
	// small to fill the device still streams at full bandwidth, and a batch
	// of a few work-groups per compute unit is not cut into uneven waves;
	// the kernel numbers its work-groups so that an entry's parts are
	// dispatched together and read its operands through the cache once.
	Split int `json:"split,omitempty"`
}

// A knob is one field of Params as reports abbreviate it. The compact form
// and the legend of `tltune help gemm` and README.md come from this one
// list, so they cannot disagree; a field added to Params gets a knob here.
type knob struct {
	abbrev string              // prefix in the compact form, e.g. "sg"
	gemm   string              // what it means for gemm; "" when the GEMM lowering does not read it
	blas2  string              // what it means for gemv and ger; "" when their lowering does not read it
	value  func(Params) string // the value, "" when unset
}

var knobs = []knob{
	{"sg", "subgroup size: lanes that run in lock-step (a warp on NVIDIA, or half of one; 1 on the generic target)", "the same",
		func(p Params) string { return ints(p.SubgroupSize) }},
	{"wg", "work-group size wx×wy in work-items; its (wx/sg)×wy subgroups form a grid over C", "work-group size wx×wy in work-items",
		func(p Params) string { return ints(p.WorkGroupSize[:]...) }},
	{"t", "C tile tm×tn each subgroup computes", "tile of the matrix (A or C) a subgroup covers per trip: rows along its contiguous mode × columns",
		func(p Params) string { return ints(p.Tile[:]...) }},
	{"cm", "cooperative-matrix block cm×cn×ck: the accumulator block and K step of one multiply-add", "",
		func(p Params) string { return ints(p.Coopmatrix[:]...) }},
	{"u", "unroll of the K loop", "unroll of the reduction loop",
		func(p Params) string { return ints(p.Unroll) }},
	{"b", "batch entries each work-group computes", "the same",
		func(p Params) string { return ints(p.BatchPerGroup) }},
	{"local", "A and B panels staged in local (shared) memory", "",
		func(p Params) string {
			if p.StageLocal {
				return "-" // a flag: the abbreviation alone
			}
			return ""
		}},
	{"s", "stages of the local-memory pipeline: copies of the next s-1 K panels overlap the arithmetic", "",
		func(p Params) string {
			if p.StageLocal && p.Stages > 1 {
				return ints(p.Stages)
			}
			return ""
		}},
	{"pad", "padding of each staged panel's leading dimension, in elements (against bank conflicts)", "",
		func(p Params) string {
			if p.StageLocal {
				return ints(p.LocalPad)
			}
			return ""
		}},
	{"sw", "staged panels XOR-swizzled instead of padded: 16-byte chunks permuted within 128-byte rows", "",
		func(p Params) string {
			if p.StageLocal && p.LocalSwizzle {
				return "-"
			}
			return ""
		}},
	{"cl", "C written through local memory, in 128-bit chunks", "",
		func(p Params) string {
			if p.LocalEpilogue {
				return "-"
			}
			return ""
		}},
	{"v", "", "elements per vector access of the matrix (1: scalar; up to 128 bits where aligned)",
		func(p Params) string { return ints(p.VectorWidth) }},
	{"sp", "work-groups sharing one batch entry, each computing every sp-th block of C", "work-groups sharing one batch entry, each computing every sp-th round of output tiles",
		func(p Params) string {
			if p.Split > 1 {
				return ints(p.Split)
			}
			return ""
		}},
}

// ints is "8", "64x2", "16x8x16", or "" when every value is zero (unset).
func ints(vs ...int) string {
	set := false
	for _, v := range vs {
		set = set || v != 0
	}
	if !set {
		return ""
	}
	var b []byte
	for i, v := range vs {
		if i > 0 {
			b = append(b, 'x')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(b)
}

// String is the compact form used in tables and logs, e.g.
// "sg32 wg64x2 t32x32 cm16x8x16 u2 b1 local"; unset (zero) knobs are left
// out. Legend explains the abbreviations.
func (p Params) String() string { return p.format(func(knob) bool { return true }) }

// For is the compact form of the knobs op's lowering reads: a GEMV or GER
// has no coopmatrix or staging, a GEMM no vector width.
func (p Params) For(op string) string {
	return p.format(func(k knob) bool { return k.meaning(op) != "" })
}

func (p Params) format(use func(knob) bool) string {
	var parts []string
	for _, k := range knobs {
		if v := k.value(p); v != "" && use(k) {
			parts = append(parts, k.abbrev+strings.TrimPrefix(v, "-"))
		}
	}
	if len(parts) == 0 {
		return "(none chosen)"
	}
	return strings.Join(parts, " ")
}

// meaning is what the knob means for op ("gemm", "gemv", "ger"), "" when
// op's lowering does not read it; for any other op, its GEMM meaning.
func (k knob) meaning(op string) string {
	if op == "gemv" || op == "ger" {
		if k.blas2 == "the same" {
			return k.gemm
		}
		return k.blas2
	}
	return k.gemm
}

// Legend explains the abbreviations of the compact form for op, one
// indented "abbrev  meaning" line each.
func Legend(op string) string {
	var b strings.Builder
	for _, k := range knobs {
		if m := k.meaning(op); m != "" {
			fmt.Fprintf(&b, "  %-6s %s\n", k.abbrev, m)
		}
	}
	return b.String()
}

// Subgroups is the number of subgroups in a work-group.
func (p Params) Subgroups() int {
	if p.SubgroupSize == 0 {
		return 0
	}
	return p.WorkGroupSize[0] / p.SubgroupSize * p.WorkGroupSize[1]
}

// Validate reports a configuration that no device could run: a negative
// entry, a vector chosen in part (every entry or none), or a chosen
// work-group that is not a whole number of subgroups (FitsWorkGroup's
// words). Zero fields are "not chosen" and pass; device limits are the
// tuner's business. Tables and the recipes both check with it.
func (p Params) Validate() error {
	for _, f := range p.numbers() {
		zeros := 0
		for _, x := range f.v {
			if x < 0 {
				return fmt.Errorf("tuning parameter %s %v is negative", f.name, f.v)
			}
			if x == 0 {
				zeros++
			}
		}
		if zeros != 0 && zeros != len(f.v) {
			return fmt.Errorf("tuning parameter %s %v is partly unset (set every entry or none)", f.name, f.v)
		}
	}
	if p.SubgroupSize != 0 && p.WorkGroupSize != [2]int{} {
		return p.FitsWorkGroup(0, false)
	}
	return nil
}

// numbers are p's numeric fields by their JSON names, a vector each.
func (p *Params) numbers() []namedInts {
	return []namedInts{
		{"subgroup_size", []int{p.SubgroupSize}},
		{"work_group_size", p.WorkGroupSize[:]},
		{"tile", p.Tile[:]},
		{"coopmatrix", p.Coopmatrix[:]},
		{"unroll", []int{p.Unroll}},
		{"batch_per_group", []int{p.BatchPerGroup}},
		{"vector_width", []int{p.VectorWidth}},
		{"stages", []int{p.Stages}},
		{"local_pad", []int{p.LocalPad}},
		{"split", []int{p.Split}},
	}
}

type namedInts struct {
	name string
	v    []int
}

// FitsWorkGroup reports why p's work-group cannot run where a work-group
// holds at most maxItems work-items (0: no limit) and, with oneSubgroup,
// exactly one subgroup. The lowering checks it against the target, the
// pruner against the device profile, in the same words; the message is
// formatted only when read, as the pruner turns away hundreds of
// thousands of configurations.
func (p Params) FitsWorkGroup(maxItems int, oneSubgroup bool) error {
	sgs, wg := p.SubgroupSize, p.WorkGroupSize
	var why misfit
	switch {
	case sgs < 1 || wg[0] < 1 || wg[1] < 1 || wg[0]%sgs != 0:
		why = notWholeSubgroups
	case maxItems > 0 && wg[0]*wg[1] > maxItems:
		why = tooManyItems
	case oneSubgroup && wg != [2]int{sgs, 1}:
		why = notOneSubgroup
	default:
		return nil
	}
	return &WorkGroupError{Size: wg, Subgroup: sgs, Max: maxItems, why: why}
}

// WorkGroupError is a work-group shape that FitsWorkGroup turned away.
type WorkGroupError struct {
	Size     [2]int
	Subgroup int
	Max      int // work-items a work-group may hold
	why      misfit
}

type misfit int

const (
	notWholeSubgroups misfit = iota
	tooManyItems
	notOneSubgroup
)

func (e *WorkGroupError) Error() string {
	wg := e.Size
	switch e.why {
	case tooManyItems:
		return fmt.Sprintf("work-group size %dx%d = %d work-items exceeds the maximum of %d", wg[0], wg[1], wg[0]*wg[1], e.Max)
	case notOneSubgroup:
		return fmt.Sprintf("work-group size %dx%d: one subgroup per work-group (%dx1) only", wg[0], wg[1], e.Subgroup)
	}
	return fmt.Sprintf("work-group size %dx%d: both entries must be positive and the first a multiple of the subgroup size %d", wg[0], wg[1], e.Subgroup)
}
