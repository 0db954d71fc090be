package kernels

import (
	"fmt"

	"tltune/compiler/tuning"
)

// Recipe turns a configuration into a kernel for one Spec and says how to
// feed, count and check it.
type Recipe interface {
	// Spec is the validated description the recipe was built from.
	Spec() Spec
	// Name identifies the recipe in logs and tables.
	Name() string
	// Source is the tensor-language kernel configured by p.
	Source(p tuning.Params) (string, error)
	// FLOPs and Bytes count the work and memory traffic of batch entries
	// (definitions in the package documentation).
	FLOPs(batch int) int64
	Bytes(batch int) int64
	// Inputs generates batch entries of every argument from seed.
	Inputs(seed uint64, batch int) (*Inputs, error)
	// Reference computes the exact result for in; its Check method
	// verifies a device output, its Tolerance says how closely.
	Reference(in *Inputs) (*Expected, error)
}

// recipe is a Spec that passed validation.
type recipe struct{ spec Spec }

// New returns the recipe for s, or the reason s cannot be built.
func New(s Spec) (Recipe, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return recipe{s}, nil
}

// GEMM, GEMV and GER return the recipe for s as that operation; s.Op may be
// left zero.
func GEMM(s Spec) (Recipe, error) { return newAs(GEMMOp, s) }
func GEMV(s Spec) (Recipe, error) { return newAs(GEMVOp, s) }
func GER(s Spec) (Recipe, error)  { return newAs(GEROp, s) }

func newAs(op Op, s Spec) (Recipe, error) {
	if s.Op != 0 && s.Op != op {
		return nil, fmt.Errorf("spec is for %v, not %v", s.Op, op)
	}
	s.Op = op
	return New(s)
}

func (r recipe) Spec() Spec                             { return r.spec }
func (r recipe) Name() string                           { return r.spec.Name() }
func (r recipe) Source(p tuning.Params) (string, error) { return r.spec.source(p) }
func (r recipe) FLOPs(batch int) int64                  { return r.spec.flops(batch) }
func (r recipe) Bytes(batch int) int64                  { return r.spec.bytes(batch) }
func (r recipe) Reference(in *Inputs) (*Expected, error) {
	return r.spec.reference(in)
}
func (r recipe) Inputs(seed uint64, batch int) (*Inputs, error) {
	return r.spec.inputs(seed, batch)
}
