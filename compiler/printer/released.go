package printer

import (
	"fmt"

	"tltune/compiler/ir"
)

// Released returns p in the released tinytc's spelling (docs/language.md,
// Dialects): unprefixed arithmetic, comparisons, math and builtins,
// hadamard, subgroup_reduce_add and friends, .atomic before the
// transposes, loop variables typed by their bounds. Comments and layout are
// as in the canonical form. tltune's own extensions (vector_load,
// vector_store, subgroup_shuffle_xor) have no released spelling and make
// it fail.
func Released(p *ir.Program) (string, error) {
	pr := &printer{released: true}
	for i, f := range p.Funcs {
		if i > 0 {
			pr.b.WriteByte('\n')
		}
		pr.function(f)
	}
	pr.comments(p.Comments)
	return pr.b.String(), pr.err
}

// mnemonic is the instruction's name with its modifiers in the dialect
// being written.
func (p *printer) mnemonic(in *ir.Inst) string {
	if !p.released {
		return in.Mnemonic()
	}
	switch in.Op {
	case ir.OpArith:
		return in.Arith.String()
	case ir.OpArithUnary:
		return in.Unary.String()
	case ir.OpCmp:
		return releasedCmp[in.Cmp]
	case ir.OpMath:
		return in.Math.String()
	case ir.OpBuiltin:
		return releasedBuiltins[in.Builtin]
	case ir.OpSubgroupAdd, ir.OpSubgroupMax, ir.OpSubgroupMin:
		return "subgroup_" + in.Scan.String() + "_" + in.Op.String()[len("subgroup_"):]
	case ir.OpVectorLoad, ir.OpVectorStore, ir.OpSubgroupShuffleXor:
		if p.err == nil {
			p.err = fmt.Errorf("%s: %s is a tltune extension; the released tinytc has no spelling for it", in.Pos, in.Op)
		}
	case ir.OpAxpby, ir.OpCumsum, ir.OpGemm, ir.OpGemv, ir.OpGer, ir.OpHadamardProduct, ir.OpSum:
		name := in.Op.String()
		if in.Op == ir.OpHadamardProduct {
			name = "hadamard"
		}
		if in.Atomic != ir.NotAtomic {
			name += ".atomic"
		}
		switch in.Op {
		case ir.OpGemm:
			name += "." + in.TransA.String() + "." + in.TransB.String()
		case ir.OpGemv, ir.OpAxpby, ir.OpSum:
			name += "." + in.TransA.String()
		}
		return name
	}
	return in.Mnemonic()
}

var releasedCmp = [...]string{ir.Eq: "equal", ir.Ne: "not_equal", ir.Gt: "greater_than",
	ir.Ge: "greater_than_equal", ir.Lt: "less_than", ir.Le: "less_than_equal"}

// releasedBuiltins spells the builtins; NumSubgroups, the number of
// subgroups of the work-group, has no single released builtin
// (expandForReleased writes it as a product).
var releasedBuiltins = map[ir.BuiltinKind]string{
	ir.GroupID: "group_id.x", ir.GroupIDY: "group_id.y", ir.GroupIDZ: "group_id.z",
	ir.GroupSize: "num_groups.x", ir.GroupSizeY: "num_groups.y", ir.GroupSizeZ: "num_groups.z",
	ir.NumSubgroupsX: "num_subgroups.x", ir.NumSubgroupsY: "num_subgroups.y", ir.NumSubgroupsZ: "num_subgroups.z",
	ir.SubgroupSize: "subgroup_size", ir.SubgroupID: "subgroup_linear_id", ir.SubgroupLocalID: "subgroup_local_id",
	ir.SubgroupIDX: "subgroup_id.x", ir.SubgroupIDY: "subgroup_id.y", ir.SubgroupIDZ: "subgroup_id.z",
}

// expandForReleased writes an instruction that takes several in the
// released dialect and reports whether it did: builtin.num_subgroups is
// num_subgroups.x times num_subgroups.y.
func (p *printer) expandForReleased(in *ir.Inst) bool {
	if in.Op != ir.OpBuiltin || in.Builtin != ir.NumSubgroups || len(in.Results) != 1 {
		return false
	}
	t := in.Result().Type.String()
	x, y := &ir.Value{}, &ir.Value{}
	for _, part := range []struct {
		v    *ir.Value
		text string
	}{{x, "num_subgroups.x : " + t}, {y, "num_subgroups.y : " + t}} {
		p.writeIndent()
		p.value(part.v)
		p.b.WriteString(" = " + part.text + "\n")
	}
	p.writeIndent()
	p.value(in.Result())
	p.b.WriteString(" = mul ")
	p.values([]*ir.Value{x, y})
	p.b.WriteString(" : " + t)
	if c := in.Source().LineComment; c != "" {
		p.b.WriteString(" " + c)
	}
	p.b.WriteByte('\n')
	return true
}
