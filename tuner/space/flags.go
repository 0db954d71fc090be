package space

import (
	"flag"
	"fmt"
)

// Overrides holds command-line replacements for dimensions of a space:
// `--sg 16,32 --unroll 1,2 --tm 8..32*2 --stage off`. A flag that is not set
// leaves the space's values alone.
type Overrides struct {
	set   map[string]string // flag name → raw value, only flags given
	names []string          // every registered flag, in dims order
}

// RegisterFlags defines one flag per dimension of op's spaces on fs: a
// GEMV or GER has no coopmatrix, staging, pipeline or local epilogue, a
// GEMM no vector width; op "" (a sweep, of every op) defines them all.
func RegisterFlags(fs *flag.FlagSet, op string) *Overrides {
	o := &Overrides{set: map[string]string{}}
	blas2, gemm := op != "gemm", op == "gemm" || op == ""
	gemmOnly := map[string]bool{"stages": true, "local_pad": true}
	var probe Dims
	for _, d := range probe.dims() {
		if (d.isCoopmatrix() || gemmOnly[d.key]) && !gemm || d.key == "vector_width" && !blas2 {
			continue
		}
		o.define(fs, d.flag, "candidate "+d.key+" values (list or range, e.g. 1,2,4 or 1..64*2)")
	}
	if gemm { // every switch is the GEMM lowering's
		for _, b := range probe.bools() {
			o.define(fs, b.flag, "candidate "+b.key+" values (off,on)")
		}
	}
	return o
}

func (o *Overrides) define(fs *flag.FlagSet, name, usage string) {
	o.names = append(o.names, name)
	fs.Func(name, usage, func(v string) error {
		// Parse now so that a bad value is a usage error naming the flag.
		var err error
		if isBoolFlag(name) {
			_, err = ParseBools(v)
		} else {
			_, err = ParseValues(v)
		}
		if err == nil {
			o.set[name] = v
		}
		return err
	})
}

// Given reports whether any space flag was given.
func (o *Overrides) Given() bool { return len(o.set) > 0 }

// Apply replaces the overridden dimensions of s and validates the result.
func (o *Overrides) Apply(s *Space) error {
	for _, name := range o.names {
		raw, given := o.set[name]
		if !given {
			continue
		}
		if err := s.Override(name, raw); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return s.Validate()
}

// isBoolFlag reports whether the flag sets an on/off dimension.
func isBoolFlag(name string) bool {
	var probe Dims
	for _, b := range probe.bools() {
		if b.flag == name {
			return true
		}
	}
	return false
}

// Override replaces one dimension, named by its flag (sg, wx, wy, tm, tn,
// cm, cn, ck, unroll, batch-per-group, stages, local-pad, stage,
// local-epilogue), with values in the command-line form. It does not
// validate the whole space: Apply does.
func (s *Space) Override(name, raw string) error {
	for _, b := range s.bools() {
		if b.flag == name {
			fs, err := ParseBools(raw)
			if err == nil {
				*b.vals = fs
			}
			return err
		}
	}
	for _, d := range s.dims() {
		if d.flag == name {
			vs, err := ParseValues(raw)
			if err == nil {
				*d.vals = vs
			}
			return err
		}
	}
	return fmt.Errorf("no dimension is called %q", name)
}
