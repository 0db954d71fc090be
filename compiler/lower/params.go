package lower

import (
	"fmt"
	"strings"

	"tltune/compiler/ir"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

// ParamsAttr is the function attribute (a dictionary with the JSON names of
// tuning.Params) through which kernels/ passes the parameters the language
// has no attribute for; subgroup_size and work_group_size use the
// language's own attributes.
const ParamsAttr = "tltune.params"

// Choice is the configuration chosen for one function and why.
type Choice struct {
	Params tuning.Params
	// Batch is the argument extent holding the number of batch entries
	// (ir.Func.BatchExtent); nil when the function has none, and then
	// Params.BatchPerGroup is 1 (docs/abi.md).
	Batch *ir.BatchExtent
	Key   *tuning.Key   // the tuning-table key of the function's main collective, if any
	Match *tuning.Match // the table's answer for Key, when there was a table

	// What Explain says, kept as data: a compile formats it only when
	// asked (formatting it every time was a twentieth of compiling a GEMM
	// kernel).
	named        []string      // the parameters the attributes set
	heur         tuning.Params // the heuristic's configuration
	target       string        // the target's name
	sgsFor       int           // the work-group size the subgroup size was derived from (0: none)
	batchDropped int           // the batch_per_group set back to 1 (0: none)
	matvec       string        // how a gemv or ger streams its matrix (explainMatvec, read before the lowering)
}

// Explain says where the configuration came from: one line per source
// that contributed, in precedence order, then the result.
func (ch *Choice) Explain() []string {
	var lines []string
	if len(ch.named) > 0 {
		lines = append(lines, "attributes: "+strings.Join(ch.named, ", "))
	}
	if ch.Match != nil {
		lines = append(lines, ch.Match.String())
	}
	if ch.sgsFor != 0 {
		lines = append(lines, fmt.Sprintf("subgroup size %d: the largest of the target's that divides the work-group size %d", ch.Params.SubgroupSize, ch.sgsFor))
	}
	lines = append(lines, "heuristic for target "+ch.target+": "+ch.heur.String()+" (fills what the sources above leave unset)")
	if ch.batchDropped != 0 {
		lines = append(lines, fmt.Sprintf("batch_per_group %d needs the batch size from an argument (a parameter indexed by builtin.group_id); the function has none, so 1", ch.batchDropped))
	}
	lines = append(lines, "chosen: "+ch.Params.String())
	if ch.matvec != "" {
		lines = append(lines, ch.matvec)
	}
	return lines
}

// Choose picks f's configuration: each parameter comes from f's attributes
// if set there, else from table (nil: none) for the function's main
// collective (the first gemm, gemv or ger), else from the heuristic for
// target t. device names the device in tuning-table keys.
func Choose(f *ir.Func, t *target.Target, table *tuning.Table, device string) (*Choice, error) {
	// The choice and what it points to in one allocation (every compile
	// makes one per function).
	x := &struct {
		ch    Choice
		key   tuning.Key
		match tuning.Match
		batch ir.BatchExtent
	}{ch: Choice{target: t.Name}}
	ch := &x.ch
	attr, named, err := fromAttrs(f)
	if err != nil {
		return nil, err
	}
	ch.named = named
	var fromTable tuning.Params
	main := mainCollective(f)
	if main != nil {
		x.key = tableKey(main, device, t)
		ch.Key = &x.key
		if table != nil {
			x.match = table.Lookup(x.key)
			ch.Match = &x.match
			fromTable, _ = x.match.Params()
		}
	}
	ch.heur = heuristic(f, main, t)
	ch.Params = merge(attr, fromTable, ch.heur)
	if attr.SubgroupSize == 0 && fromTable.SubgroupSize == 0 && attr.WorkGroupSize != [2]int{} {
		// The work-group size is fixed and the subgroup size is not: take
		// the largest the target supports that divides its first mode.
		if sgs := subgroupSizeFor(t, attr.WorkGroupSize[0]); sgs != 0 && sgs != ch.Params.SubgroupSize {
			ch.Params.SubgroupSize = sgs
			ch.sgsFor = attr.WorkGroupSize[0]
		}
	}
	if batch, ok := f.BatchExtent(); ok {
		x.batch = batch
		ch.Batch = &x.batch
	} else if ch.Params.BatchPerGroup > 1 {
		ch.batchDropped = ch.Params.BatchPerGroup
		ch.Params.BatchPerGroup = 1
	}
	if err := Validate(ch.Params, t, f, main); err != nil {
		return nil, fmt.Errorf("@%s: %w", f.Name, err)
	}
	if main != nil && (main.Op == ir.OpGemv || main.Op == ir.OpGer) {
		ch.matvec = explainMatvec(f, main, ch.Params)
	}
	return ch, nil
}

// fromAttrs reads the parameters set in f's attributes and names them.
func fromAttrs(f *ir.Func) (p tuning.Params, named []string, err error) {
	if sgs, ok := f.SubgroupSize(); ok {
		p.SubgroupSize = int(sgs)
		named = append(named, "subgroup_size")
	}
	if wg, ok := f.WorkGroupSize(); ok {
		p.WorkGroupSize = [2]int{int(wg[0]), int(wg[1])}
		named = append(named, "work_group_size")
	}
	a, ok := f.Attrs.Lookup(ParamsAttr)
	if !ok {
		return p, named, nil
	}
	if a.Kind != ir.AttrDict {
		return p, nil, fmt.Errorf("@%s: attribute %q must be a dictionary", f.Name, ParamsAttr)
	}
	d := a.Dict
	ints := func(name string, dst []int) error {
		v, ok := d.Lookup(name)
		if !ok {
			return nil
		}
		xs, ok := v.Ints()
		if !ok || len(xs) != len(dst) {
			return fmt.Errorf("@%s: %s.%s must be an array of %d integers", f.Name, ParamsAttr, name, len(dst))
		}
		for i, x := range xs {
			dst[i] = int(x)
		}
		named = append(named, name)
		return nil
	}
	one := func(name string, dst *int) error {
		var v [1]int
		if a, ok := d.Lookup(name); ok {
			if a.Kind != ir.AttrInt {
				return fmt.Errorf("@%s: %s.%s must be an integer", f.Name, ParamsAttr, name)
			}
			v[0] = int(a.Int)
			*dst = v[0]
			named = append(named, name)
		}
		return nil
	}
	for _, e := range []error{
		ints("tile", p.Tile[:]), ints("coopmatrix", p.Coopmatrix[:]),
		one("unroll", &p.Unroll), one("batch_per_group", &p.BatchPerGroup),
		one("vector_width", &p.VectorWidth),
		one("stages", &p.Stages), one("local_pad", &p.LocalPad), one("split", &p.Split),
	} {
		if e != nil {
			return p, nil, e
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"stage_local", &p.StageLocal}, {"local_swizzle", &p.LocalSwizzle}, {"local_epilogue", &p.LocalEpilogue}} {
		if v, ok := d.Bool(b.name); ok {
			*b.dst = v
			named = append(named, b.name)
		}
	}
	return p, named, nil
}

// mainCollective is the instruction whose shape keys the tuning table.
func mainCollective(f *ir.Func) *ir.Inst {
	var main *ir.Inst
	f.Body.Walk(func(in *ir.Inst) bool {
		if main == nil && (in.Op == ir.OpGemm || in.Op == ir.OpGemv || in.Op == ir.OpGer) {
			main = in
		}
		return main == nil
	})
	return main
}

// tableKey is the tuning-table key of a gemm, gemv or ger compiled for t;
// dynamic sizes count as 0, which the nearest-shape search treats as 1, an
// α or β that is no constant as speak.DynamicScalar, and an f32 gemm on a
// target with tf32 enabled has precision tf32 (kernels.Spec's rule).
func tableKey(in *ir.Inst, device string, t *target.Target) tuning.Key {
	alpha, ins, beta, out := in.BLASOperands()
	dim := func(v int64) int {
		if v == ir.Dynamic {
			return 0
		}
		return int(v)
	}
	k := tuning.Key{Device: device, Problem: speak.Problem{Op: in.Op.String(),
		Dtype: ins[0].Type.Elem().String(), Acc: out.Type.Elem().String(),
		Alpha: scalarKey(alpha), Beta: scalarKey(beta), Atomic: in.Atomic != ir.NotAtomic,
		Layout: batchLayout(out)}}
	switch in.Op {
	case ir.OpGemm:
		k.Trans = in.TransA.String() + in.TransB.String()
		k.M, k.N = dim(out.Type.Shape()[0]), dim(out.Type.Shape()[1])
		kMode := 1
		if in.TransA == ir.Trans {
			kMode = 0
		}
		k.K = dim(ins[0].Type.Shape()[kMode])
	case ir.OpGemv:
		k.Trans = in.TransA.String()
		k.M, k.N = dim(out.Type.Shape()[0]), dim(ins[1].Type.Shape()[0])
	case ir.OpGer:
		k.M, k.N = dim(out.Type.Shape()[0]), dim(out.Type.Shape()[1])
	}
	if t.TF32 && in.Op == ir.OpGemm && k.Dtype == "f32" && k.Acc == "f32" {
		k.Precision = speak.TF32
	}
	return k
}

// scalarKey spells a constant α or β as the tuning table does.
func scalarKey(v *ir.Value) string {
	c, ok := constantOf(v)
	switch {
	case !ok:
		return speak.DynamicScalar
	case c.Kind == ir.ConstInt:
		return speak.FormatScalar(complex(float64(c.Int), 0))
	}
	return speak.FormatScalar(complex(c.Float, c.Imag))
}

// batchLayout is how the batch reaches the collective's output: "group"
// when the entry is loaded from a group (pointer array), "strided" when it
// is a subview of a memref argument, "" when the kernel is not batched
// that way.
func batchLayout(out *ir.Value) string {
	def := out.Def
	switch {
	case def == nil || len(def.Operands) == 0:
		return ""
	case def.Op == ir.OpLoad && def.Operands[0].Type.Kind() == ir.KindGroup:
		return "group"
	case def.Op == ir.OpSubview && def.Operands[0].Def == nil:
		return "strided"
	}
	return ""
}

// subgroupSizeFor is the largest subgroup size of t that divides wx, or 0.
func subgroupSizeFor(t *target.Target, wx int) int {
	best := 0
	for _, s := range t.SubgroupSizes {
		if wx%s == 0 {
			best = max(best, s)
		}
	}
	return best
}

// merge takes each parameter from the first source that sets it.
func merge(srcs ...tuning.Params) tuning.Params {
	var p tuning.Params
	for i := len(srcs) - 1; i >= 0; i-- {
		s := srcs[i]
		if s.SubgroupSize != 0 {
			p.SubgroupSize = s.SubgroupSize
		}
		if s.WorkGroupSize != [2]int{} {
			p.WorkGroupSize = s.WorkGroupSize
		}
		if s.Tile != [2]int{} {
			p.Tile = s.Tile
		}
		if s.Coopmatrix != [3]int{} {
			p.Coopmatrix = s.Coopmatrix
		}
		if s.Unroll != 0 {
			p.Unroll = s.Unroll
		}
		if s.BatchPerGroup != 0 {
			p.BatchPerGroup = s.BatchPerGroup
		}
		if s.Stages != 0 {
			p.Stages = s.Stages
		}
		if s.LocalPad != 0 {
			p.LocalPad = s.LocalPad
		}
		p.StageLocal = p.StageLocal || s.StageLocal
		if s.VectorWidth != 0 {
			p.VectorWidth = s.VectorWidth
		}
		p.LocalSwizzle = p.LocalSwizzle || s.LocalSwizzle
		p.LocalEpilogue = p.LocalEpilogue || s.LocalEpilogue
		if s.Split != 0 {
			p.Split = s.Split
		}
	}
	return p
}

// heuristic is the configuration used when nothing else chooses: the
// target's default subgroup size; for GEMM one cooperative matrix per
// subgroup tile (two per direction with a matrix engine) and a grid of up
// to 8×8 subgroups (4×4 with real subgroups) covering C; for gemv and ger
// matvecHeuristic; for the other memory-bound collectives one work-group
// row of up to 64 work-items.
func heuristic(f *ir.Func, main *ir.Inst, t *target.Target) tuning.Params {
	sgs := t.DefaultSubgroupSize
	p := tuning.Params{SubgroupSize: sgs, Unroll: 1, BatchPerGroup: 1}
	if main != nil && main.Op != ir.OpGemm {
		return matvecHeuristic(p, main, t)
	}
	if main == nil {
		lanes := max(sgs, 64/sgs*sgs)
		if t.OneSubgroupPerGroup {
			lanes = sgs
		}
		p.WorkGroupSize = [2]int{max(lanes, sgs), 1}
		return p
	}
	// Subgroups of one lane: an 8×8 block per work-item keeps 64
	// accumulators in registers, which measured best on PoCL among 4×4,
	// 8×8 and 16×4 blocks (64×64×32 f32, 8×8 work-items).
	cm, cn, ck := 8, 8, 4
	if sgs > 1 {
		cm, cn, ck = sgs, 8, 8
	}
	p.Tile = [2]int{cm, cn}
	_, ins, _, out := main.BLASOperands()
	for _, s := range t.MMA {
		// The matrix engine's shape and subgroup size, two blocks per tile
		// in each direction.
		if ins[0].Type.Elem().String() == s.In && ins[1].Type.Elem() == ins[0].Type.Elem() && out.Type.Elem().String() == s.Acc {
			cm, cn, ck = s.M, s.N, s.K
			p.Tile = [2]int{2 * cm, 2 * cn}
			sgs, p.SubgroupSize = s.SubgroupSize, s.SubgroupSize
			break
		}
	}
	p.Coopmatrix = [3]int{cm, cn, ck}
	shape := out.Type.Shape()
	gx, gy, most := 2, 2, 4
	if sgs == 1 {
		most = 8
	}
	if shape[0] != ir.Dynamic {
		gx = clamp((int(shape[0])+p.Tile[0]-1)/p.Tile[0], 1, most)
	}
	if shape[1] != ir.Dynamic {
		gy = clamp((int(shape[1])+p.Tile[1]-1)/p.Tile[1], 1, most)
	}
	for gx*gy*sgs > t.MaxWorkGroupSize && gy > 1 {
		gy--
	}
	if t.OneSubgroupPerGroup {
		gx, gy = 1, 1
	}
	p.WorkGroupSize = [2]int{gx * sgs, gy}
	return p
}

func clamp(x, lo, hi int) int { return max(lo, min(x, hi)) }

// Validate checks p for f, whose main collective is main (nil: none),
// against target t before anything is generated.
func Validate(p tuning.Params, t *target.Target, f *ir.Func, main *ir.Inst) error {
	sgs := p.SubgroupSize
	if !t.SupportsSubgroupSize(sgs) {
		return fmt.Errorf("subgroup size %d is not supported by target %s (supported: %v)", sgs, t.Name, t.SubgroupSizes)
	}
	if err := p.FitsWorkGroup(t.MaxWorkGroupSize, t.OneSubgroupPerGroup); err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	if p.BatchPerGroup < 1 || p.Unroll < 1 {
		return fmt.Errorf("batch_per_group and unroll must be at least 1 (got %d, %d)", p.BatchPerGroup, p.Unroll)
	}
	if err := validSplit(p.Split, f, main); err != nil {
		return err
	}
	if main == nil || main.Op != ir.OpGemm {
		return nil
	}
	tm, tn, c := p.Tile[0], p.Tile[1], p.Coopmatrix
	switch {
	case c[0] < 1 || c[1] < 1 || c[2] < 1 || tm < 1 || tn < 1:
		return fmt.Errorf("tile %v and coopmatrix %v must be positive", p.Tile, c)
	case tm%c[0] != 0 || tn%c[1] != 0:
		return fmt.Errorf("tile %dx%d is not a multiple of coopmatrix %dx%d", tm, tn, c[0], c[1])
	}
	if p.Stages < 0 || p.LocalPad < 0 {
		return fmt.Errorf("stages %d and local_pad %d must not be negative", p.Stages, p.LocalPad)
	}
	if p.LocalSwizzle && p.LocalPad != 0 {
		return fmt.Errorf("local_swizzle lays the panels out unpadded: drop local_pad %d", p.LocalPad)
	}
	_, ins, _, out := main.BLASOperands()
	bytes := GemmLocalBytes(p, GemmOperands{
		SizeA: int(ins[0].Type.Elem().Size()), SizeB: int(ins[1].Type.Elem().Size()), SizeC: int(out.Type.Elem().Size()),
		TransA: main.TransA == ir.Trans, TransB: main.TransB == ir.Trans, Atomic: main.Atomic != ir.NotAtomic})
	if bytes > t.LocalMemBytes {
		return fmt.Errorf("staged panels and C need %d bytes of local memory; target %s has %d", bytes, t.Name, t.LocalMemBytes)
	}
	return nil
}

// validSplit: work-groups share a batch entry only in a function whose one
// effect is a gemv, a gemm or a ger (the lowering deals its output tiles,
// blocks of C or rounds of column tiles out among them); anything else in
// the function would run once per work-group of the split.
func validSplit(split int, f *ir.Func, main *ir.Inst) error {
	switch {
	case split < 0:
		return fmt.Errorf("split %d must be at least 1", split)
	case split <= 1:
		return nil
	case main == nil || (main.Op != ir.OpGemv && main.Op != ir.OpGemm && main.Op != ir.OpGer):
		return fmt.Errorf("split %d: only the work-groups of a gemv, gemm or ger can share a batch entry", split)
	}
	var other *ir.Inst
	f.Body.Walk(func(in *ir.Inst) bool {
		if in != main && !viewOrValue[in.Op] {
			other = in
		}
		return other == nil
	})
	if other != nil {
		return fmt.Errorf("split %d: the function does more than its %s (%s), which every work-group of the split would repeat", split, main.Op, other.Op)
	}
	return nil
}

// viewOrValue are the instructions that neither write memory nor
// synchronise: repeating them in every work-group of a split is harmless.
var viewOrValue = map[ir.Op]bool{
	ir.OpBuiltin: true, ir.OpConstant: true, ir.OpSubview: true, ir.OpLoad: true, ir.OpSize: true,
	ir.OpCast: true, ir.OpArith: true, ir.OpArithUnary: true, ir.OpCmp: true, ir.OpExpand: true,
	ir.OpFuse: true, ir.OpMath: true,
}
