// Package space owns search spaces: the candidate values of every tuning
// parameter of one op (gemm, gemv, ger), read from configs/spaces/OP.toml,
// narrowed by command-line flags, and enumerated as compiler/tuning.Params in
// a fixed order.
//
// A space is a Cartesian product; which of its points make sense for a
// device and shape is the business of package prune.
package space

import (
	"fmt"
	"io/fs"
	"iter"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"tltune/compiler/tuning"
	"tltune/configs"
)

// Ops are the ops with a search space.
var Ops = []string{"gemm", "gemv", "ger"}

// Dims are the candidate values of every parameter. A zero-length dimension
// is not allowed, except Coopmatrix, whose absence (gemv, ger) enumerates as
// [0, 0, 0]: "no coopmatrix", and VectorWidth, whose absence (gemm)
// enumerates as 0: "not chosen".
type Dims struct {
	SubgroupSize  Values `toml:"subgroup_size"`
	Unroll        Values `toml:"unroll"`
	BatchPerGroup Values `toml:"batch_per_group"`
	StageLocal    Bools  `toml:"stage_local"`
	VectorWidth   Values `toml:"vector_width"`
	// Stages, LocalPad and LocalSwizzle apply to staged points only (a
	// swizzled point has no padding); LocalEpilogue to every point. Empty:
	// 1 stage, no padding, no swizzle, C written straight.
	Stages        Values `toml:"stages"`
	LocalPad      Values `toml:"local_pad"`
	LocalSwizzle  Bools  `toml:"local_swizzle"`
	LocalEpilogue Bools  `toml:"local_epilogue"`
	// Split: work-groups sharing one batch entry. Empty: one.
	Split         Values `toml:"split"`
	WorkGroupSize struct {
		X Values `toml:"x"`
		Y Values `toml:"y"`
	} `toml:"work_group_size"`
	Tile struct {
		M Values `toml:"m"`
		N Values `toml:"n"`
	} `toml:"tile"`
	Coopmatrix struct {
		M Values `toml:"m"`
		N Values `toml:"n"`
		K Values `toml:"k"`
	} `toml:"coopmatrix"`
}

// file is the TOML layout: the dimensions, then per-target replacements
// ([target.nvidia] ...) for dimensions whose sensible values depend on the
// code-generation target (a warp is 32 lanes; DPAS shapes differ from mma).
type file struct {
	Dims
	Target map[string]Dims `toml:"target"`
}

// Space is the Cartesian product of its dimensions, for one op and target.
type Space struct {
	Op     string
	Target string
	Dims
}

// Load reads the space of op for target from dir in fsys (configs.FS and
// "spaces" for the shipped ones).
func Load(fsys fs.FS, dir, op, target string) (*Space, error) {
	name := path.Join(dir, op+".toml")
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("no search space for op %q: %w", op, err)
	}
	return Parse(name, op, target, data)
}

// Parse decodes a space strictly (an unknown key is an error naming it) and
// applies the replacements of its [target.TARGET] table, if any.
func Parse(name, op, target string, data []byte) (*Space, error) {
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unknown key %q", name, und[0].String())
	}
	s := &Space{Op: op, Target: target, Dims: f.Dims}
	if t, ok := f.Target[target]; ok {
		s.replace(&t)
	}
	s.defaults()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// defaults fills the optional dimensions a space leaves out.
func (d *Dims) defaults() {
	if len(d.StageLocal) == 0 {
		d.StageLocal = Bools{false}
	}
	if len(d.LocalEpilogue) == 0 {
		d.LocalEpilogue = Bools{false}
	}
	if len(d.LocalSwizzle) == 0 {
		d.LocalSwizzle = Bools{false}
	}
	if len(d.Stages) == 0 {
		d.Stages = Values{1}
	}
	if len(d.LocalPad) == 0 {
		d.LocalPad = Values{0}
	}
}

// replace overwrites every dimension that t gives.
func (d *Dims) replace(t *Dims) {
	mine, theirs := d.dims(), t.dims()
	for i := range mine {
		if len(*theirs[i].vals) > 0 {
			*mine[i].vals = *theirs[i].vals
		}
	}
	for _, b := range []struct{ mine, theirs *Bools }{
		{&d.StageLocal, &t.StageLocal}, {&d.LocalSwizzle, &t.LocalSwizzle}, {&d.LocalEpilogue, &t.LocalEpilogue},
	} {
		if len(*b.theirs) > 0 {
			*b.mine = *b.theirs
		}
	}
}

// dims names every integer dimension, for validation and overrides.
func (s *Dims) dims() []dim {
	return []dim{
		{"subgroup_size", "sg", &s.SubgroupSize, 1},
		{"work_group_size.x", "wx", &s.WorkGroupSize.X, 1},
		{"work_group_size.y", "wy", &s.WorkGroupSize.Y, 1},
		{"tile.m", "tm", &s.Tile.M, 1},
		{"tile.n", "tn", &s.Tile.N, 1},
		{"coopmatrix.m", "cm", &s.Coopmatrix.M, 0},
		{"coopmatrix.n", "cn", &s.Coopmatrix.N, 0},
		{"coopmatrix.k", "ck", &s.Coopmatrix.K, 0},
		{"unroll", "unroll", &s.Unroll, 1},
		{"batch_per_group", "batch-per-group", &s.BatchPerGroup, 1},
		{"vector_width", "vector-width", &s.VectorWidth, 0},
		{"stages", "stages", &s.Stages, 1},
		{"local_pad", "local-pad", &s.LocalPad, 1},
		{"split", "split", &s.Split, 0},
	}
}

type dim struct {
	key  string  // TOML key
	flag string  // command-line flag
	vals *Values // the values
	need int     // minimum length: 0 for optional dimensions
}

func (d dim) isCoopmatrix() bool { return strings.HasPrefix(d.key, "coopmatrix.") }

// least is the smallest value a dimension admits: padding may be zero.
func (d dim) least() int {
	if d.key == "local_pad" {
		return 0
	}
	return 1
}

// bools names every on/off dimension with its flag.
func (s *Dims) bools() []boolDim {
	return []boolDim{
		{"stage_local", "stage", &s.StageLocal},
		{"local_swizzle", "local-swizzle", &s.LocalSwizzle},
		{"local_epilogue", "local-epilogue", &s.LocalEpilogue},
	}
}

type boolDim struct {
	key, flag string
	vals      *Bools
}

// Validate checks that every required dimension has values, all positive,
// and that the coopmatrix is given whole or not at all.
func (s *Dims) Validate() error {
	cm := 0
	for _, d := range s.dims() {
		if len(*d.vals) < d.need {
			return fmt.Errorf("%s: no values", d.key)
		}
		if v := *d.vals; len(v) > 0 && v[0] < d.least() {
			if d.least() == 0 {
				return fmt.Errorf("%s: %d is negative", d.key, v[0])
			}
			return fmt.Errorf("%s: %d is not positive", d.key, v[0])
		}
		if d.isCoopmatrix() && len(*d.vals) > 0 {
			cm++
		}
	}
	if cm != 0 && cm != 3 {
		return fmt.Errorf("coopmatrix: give m, n and k, or none of them")
	}
	for _, b := range s.bools() {
		if len(*b.vals) == 0 {
			return fmt.Errorf("%s: no values", b.key)
		}
	}
	return nil
}

// Size is the number of points, before pruning.
func (s *Space) Size() int {
	n := 1
	for p := range s.All() {
		_ = p
		n++
	}
	return n - 1
}

// All enumerates every point. The order is fixed: the staging choices vary
// fastest (stage_local, then for staged points the layout — each pad, then
// swizzled — and the stages), then local_epilogue, split, batch_per_group,
// unroll, coopmatrix k, n, m, vector width, tile n, m, work-group y, x, and
// subgroup size slowest; values in ascending order, coopmatrix m and n only
// where they divide the tile's (divides). Points without staging
// have no stages, padding or swizzle, so the staged sub-dimensions do not
// repeat them; a single stage is Stages 0, as configurations were stored
// before the pipeline existed, and a split of one is Split 0 for the same
// reason.
func (s *Space) All() iter.Seq[tuning.Params] {
	orZero := func(v Values) Values {
		if len(v) == 0 {
			return Values{0}
		}
		return v
	}
	cm, cn, ck := orZero(s.Coopmatrix.M), orZero(s.Coopmatrix.N), orZero(s.Coopmatrix.K)
	vw := orZero(s.VectorWidth)
	splits := make(Values, 0, len(s.Split)+1)
	for _, x := range orZero(s.Split) {
		if x == 1 {
			x = 0 // one work-group an entry: the form stored before splits
		}
		if !slices.Contains(splits, x) {
			splits = append(splits, x)
		}
	}
	type staging struct {
		on          bool
		stages, pad int
		swizzle     bool
	}
	var stagings []staging
	for _, on := range s.StageLocal {
		if !on {
			stagings = append(stagings, staging{})
			continue
		}
		for _, st := range orOne(s.Stages) {
			if st == 1 {
				st = 0 // one buffer: the form stored before there were stages
			}
			for _, sw := range orOff(s.LocalSwizzle) {
				if sw {
					stagings = append(stagings, staging{true, st, 0, true})
					continue
				}
				for _, pad := range orZero(s.LocalPad) {
					stagings = append(stagings, staging{true, st, pad, false})
				}
			}
		}
	}
	epilogues := orOff(s.LocalEpilogue)
	return func(yield func(tuning.Params) bool) {
		var p tuning.Params
		for _, p.SubgroupSize = range s.SubgroupSize {
			for _, p.WorkGroupSize[0] = range s.WorkGroupSize.X {
				for _, p.WorkGroupSize[1] = range s.WorkGroupSize.Y {
					for _, p.Tile[0] = range s.Tile.M {
						for _, p.Tile[1] = range s.Tile.N {
							for _, p.VectorWidth = range vw {
								for _, p.Coopmatrix[0] = range cm {
									if !divides(p.Coopmatrix[0], p.Tile[0]) {
										continue
									}
									for _, p.Coopmatrix[1] = range cn {
										if !divides(p.Coopmatrix[1], p.Tile[1]) {
											continue
										}
										for _, p.Coopmatrix[2] = range ck {
											for _, p.Unroll = range s.Unroll {
												for _, p.BatchPerGroup = range s.BatchPerGroup {
													for _, p.Split = range splits {
														for _, p.LocalEpilogue = range epilogues {
															for _, st := range stagings {
																p.StageLocal, p.Stages, p.LocalPad, p.LocalSwizzle = st.on, st.stages, st.pad, st.swizzle
																if !yield(p) {
																	return
																}
															}
														}
													}
												}
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// divides reports whether block b (0: none) divides tile t: a coopmatrix
// that does not cannot build the tile, so All leaves it out rather than
// have every walk of the space prune it (the pruner's tile rule).
func divides(b, t int) bool { return b == 0 || t%b == 0 }

// orOff is b, or only off when b is empty.
func orOff(b Bools) Bools {
	if len(b) == 0 {
		return Bools{false}
	}
	return b
}

func orOne(v Values) Values {
	if len(v) == 0 {
		return Values{1}
	}
	return v
}

// Parts divides s by its outer dimensions (subgroup size, work-group size,
// tile): the points of the parts, one part after the other, are All's in
// its order, so that a walk can take the parts side by side.
func (s *Space) Parts() []*Space {
	var parts []*Space
	for _, sg := range s.SubgroupSize {
		for _, wx := range s.WorkGroupSize.X {
			for _, wy := range s.WorkGroupSize.Y {
				for _, tm := range s.Tile.M {
					part := *s
					part.SubgroupSize, part.WorkGroupSize.X, part.WorkGroupSize.Y, part.Tile.M = Values{sg}, Values{wx}, Values{wy}, Values{tm}
					parts = append(parts, &part)
				}
			}
		}
	}
	return parts
}

// Point returns the space of s's op and target whose only point is p.
func (s *Space) Point(p tuning.Params) *Space {
	one := &Space{Op: s.Op, Target: s.Target}
	one.SubgroupSize = Values{p.SubgroupSize}
	one.WorkGroupSize.X, one.WorkGroupSize.Y = Values{p.WorkGroupSize[0]}, Values{p.WorkGroupSize[1]}
	one.Tile.M, one.Tile.N = Values{p.Tile[0]}, Values{p.Tile[1]}
	if p.Coopmatrix != [3]int{} { // gemv and ger have none: an empty dimension
		one.Coopmatrix.M, one.Coopmatrix.N, one.Coopmatrix.K = Values{p.Coopmatrix[0]}, Values{p.Coopmatrix[1]}, Values{p.Coopmatrix[2]}
	}
	one.Unroll = Values{p.Unroll}
	one.BatchPerGroup = Values{p.BatchPerGroup}
	one.StageLocal = Bools{p.StageLocal}
	if p.VectorWidth != 0 { // gemm has none
		one.VectorWidth = Values{p.VectorWidth}
	}
	// Points without staging enumerate one stage and no padding whatever
	// these say; staged ones take them as stored.
	one.Stages = Values{max(p.Stages, 1)}
	one.LocalPad = Values{p.LocalPad}
	one.LocalSwizzle = Bools{p.LocalSwizzle}
	one.LocalEpilogue = Bools{p.LocalEpilogue}
	if p.Split != 0 { // else the empty dimension enumerates Split 0
		one.Split = Values{p.Split}
	}
	return one
}

// Shipped returns the space of op for target shipped in configs/spaces.
func Shipped(op, target string) (*Space, error) { return Load(configs.FS, "spaces", op, target) }
