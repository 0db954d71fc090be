// Package pass owns the compiler's pass pipeline (DESIGN.md §3): the
// ordered table of passes from the verified source program to SPMD code
// ready for a back end, the invariant check (the verifier) run after the
// pipeline or, in check mode, after every pass, and the debug hook that
// prints the IR after each.
package pass

import (
	"fmt"
	"io"

	"tltune/compiler/ir"
	"tltune/compiler/lower"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
)

// State is what the passes read and transform.
type State struct {
	Prog   *ir.Program
	Target *target.Target
	Table  *tuning.Table // tuning table consulted for configurations (nil: none)
	Device string        // device name in tuning-table keys ("" with --target)
	// Choices is filled by the choose-config pass: each function's
	// configuration and the explanation of where it came from.
	Choices map[*ir.Func]*lower.Choice

	// numbered says that the pass that ran last left the values of every
	// function numbered for the back ends' ValueMaps: distinct IDs below
	// Func.NumValues in program order, as Func.Number gives them but for
	// the gaps of deleted values (dce, which numbers them to count their
	// uses).
	numbered bool
}

// Pass is one step of the pipeline.
type Pass struct {
	Name string
	Doc  string // one line, as --debug-passes prints it
	Run  func(s *State) error
}

// Options control how a pipeline runs.
type Options struct {
	// Verify checks the program's invariants; it runs after the last pass
	// and, with VerifyEach, after every pass.
	Verify func(*ir.Program) error
	// VerifyEach runs Verify after every pass, so that a failure names the
	// pass that broke the invariants (check mode, as cmd/compile's
	// ssa/check: the tests and --debug-passes run in it). Without it the
	// IR is verified once, after the pipeline: a compile per tuning
	// configuration cannot afford a verification per pass.
	VerifyEach bool
	// Debug, when not nil, receives the IR after every pass, printed by
	// Print.
	Debug io.Writer
	Print func(*ir.Program) string
}

// Pipeline returns the pass table of DESIGN.md §3.
func Pipeline() []Pass {
	return []Pass{
		{"fold-constants", "fold integer arithmetic on constants", perFunc(foldConstants)},
		{"dce", "delete instructions whose results are unused and that have no effect", numbering(perFunc(deadCode))},
		{"insert-barriers", "barrier after collectives whose writes later code may read", perFunc(lower.InsertBarriers)},
		{"choose-config", "subgroup size, work-group size, tiles: attributes, then tuning table, then heuristic", chooseConfig},
		{"lower-collectives", "gemm, gemv, ger, axpby, sum, hadamard_product, cumsum to SPMD code over subgroups", withConfig(lower.Collectives)},
		{"lower-foreach", "foreach to work-item loops in parallel regions", withConfig(lower.Foreach)},
		{"check-coopmatrix", "cooperative matrices fit the target's per-lane register budget", checkCoopmatrix},
		{"fold-constants", "fold the index arithmetic the lowering introduced", perFunc(foldConstants)},
		{"dce", "delete what the lowering left unused", numbering(perFunc(deadCode))},
	}
}

// Run runs passes over s and verifies the result: after each pass with
// o.VerifyEach, else after the last one.
func Run(s *State, passes []Pass, o Options) error {
	if s.Choices == nil {
		s.Choices = map[*ir.Func]*lower.Choice{}
	}
	for i, p := range passes {
		s.numbered = false
		if err := p.Run(s); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		if o.Debug != nil && o.Print != nil {
			fmt.Fprintf(o.Debug, "; ---- IR after %s (%s)\n%s\n", p.Name, p.Doc, o.Print(s.Prog))
		}
		last := i == len(passes)-1
		if last && !s.numbered || o.VerifyEach {
			number(s.Prog) // for the verifier and the back ends
		}
		if o.Verify == nil || !o.VerifyEach && !last {
			continue
		}
		if err := o.Verify(s.Prog); err != nil {
			if o.VerifyEach {
				return fmt.Errorf("invalid IR after pass %s: %w", p.Name, err)
			}
			return fmt.Errorf("invalid IR after the pass pipeline (check mode, which verifies after every pass, names the pass that broke it): %w", err)
		}
	}
	return nil
}

// number renumbers the values of p's functions (ir.Func.Number), which
// the passes have added to.
func number(p *ir.Program) {
	for _, f := range p.Funcs {
		f.Number()
	}
}

// numbering marks run as a pass that leaves the values numbered
// (State.numbered): the pipeline ends with dce, and numbering its result
// again was a walk over every instruction of the lowered kernel.
func numbering(run func(*State) error) func(*State) error {
	return func(s *State) error {
		err := run(s)
		s.numbered = err == nil
		return err
	}
}

func perFunc(fn func(*ir.Func) error) func(*State) error {
	return func(s *State) error {
		for _, f := range s.Prog.Funcs {
			if err := fn(f); err != nil {
				return fmt.Errorf("@%s: %w", f.Name, err)
			}
		}
		return nil
	}
}

func withConfig(fn func(*ir.Func, tuning.Params) error) func(*State) error {
	return func(s *State) error {
		for _, f := range s.Prog.Funcs {
			ch, ok := s.Choices[f]
			if !ok {
				return fmt.Errorf("@%s: no configuration chosen (choose-config must run first)", f.Name)
			}
			if err := fn(f, ch.Params); err != nil {
				return fmt.Errorf("@%s: %w", f.Name, err)
			}
		}
		return nil
	}
}

func chooseConfig(s *State) error {
	for _, f := range s.Prog.Funcs {
		ch, err := lower.Choose(f, s.Target, s.Table, s.Device)
		if err != nil {
			return err
		}
		s.Choices[f] = ch
	}
	return nil
}

// maxLaneElements bounds the elements of all live cooperative matrices a
// lane may hold: beyond it the kernel spills to memory on every target.
const maxLaneElements = 1024

// checkCoopmatrix rejects cooperative matrices whose share per lane
// exceeds the register budget; their layout itself is the back end's.
func checkCoopmatrix(s *State) error {
	for _, f := range s.Prog.Funcs {
		sgs := s.Choices[f].Params.SubgroupSize
		if t, n := overBudget(f.Body, sgs); t != nil {
			return fmt.Errorf("@%s: %s needs %d elements per lane at subgroup size %d (budget %d)", f.Name, t, n, sgs, maxLaneElements)
		}
	}
	return nil
}

// overBudget returns the first cooperative matrix type of a result in r
// (nested regions included, in program order) of which a lane holds more
// than maxLaneElements at subgroup size sgs, and that number; nil if none.
// It loops itself rather than through Region.Walk, whose call per
// instruction was half the pass.
func overBudget(r *ir.Region, sgs int) (*ir.Type, int) {
	for _, in := range r.Insts {
		for _, res := range in.Results {
			if t := res.Type; t.Kind() == ir.KindCoopmatrix {
				if n := (int(t.Rows()) + sgs - 1) / sgs * int(t.Cols()); n > maxLaneElements {
					return t, n
				}
			}
		}
		for _, sub := range in.Regions {
			if t, n := overBudget(sub, sgs); t != nil {
				return t, n
			}
		}
	}
	return nil, 0
}
