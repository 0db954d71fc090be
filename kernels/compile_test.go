package kernels

import (
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
)

// A configuration each target of the compiler accepts for every recipe.
var targetParams = map[string]tuning.Params{
	"generic": {SubgroupSize: 1, WorkGroupSize: [2]int{4, 2}, Tile: [2]int{8, 8}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 2, BatchPerGroup: 2, VectorWidth: 2},
	"intel":   {SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 8, 8}, Unroll: 1, BatchPerGroup: 1, StageLocal: true},
	"nvidia":  {SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 16}, Unroll: 2, BatchPerGroup: 3, VectorWidth: 8},
}

// Every variant goes through the whole compiler (parse, verify, lower,
// verify after every pass, emit OpenCL C) for every target, and the
// configuration the compiler chooses is exactly the one the recipe wrote
// into the attributes: the path of DESIGN.md §4 from tuner to compiler.
func TestEveryVariantCompiles(t *testing.T) {
	for name, p := range targetParams {
		for _, s := range variants() {
			src, err := s.source(p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := compiler.Compile([]byte(src), compiler.Options{Target: name, Table: &tuning.Table{}})
			if gap := atomic16(s); gap != "" {
				// Known back-end gap: OpenCL C has no 16-bit atomics. The
				// language allows these kernels, so the recipe builds them;
				// this fails loudly once the compiler supports them.
				if err == nil || !strings.Contains(err.Error(), gap) {
					t.Errorf("%s on %s: expected the known error %q, got %v", s.Name(), name, gap, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s on %s: %v\n%s", s.Name(), name, err, src)
			}
			if want := "chosen: " + p.String(); !strings.Contains(res.Explain(), want) {
				t.Fatalf("%s on %s: the compiler did not take the recipe's configuration (%q):\n%s", s.Name(), name, want, res.Explain())
			}
		}
	}
}

// atomic16 is the compiler's error for an atomic update of a 16-bit
// accumulation type, or "" for every other spec.
func atomic16(s Spec) string {
	if s.Atomic && (s.Acc == F16 || s.Acc == BF16) {
		return "atomic update of " + s.Acc.String() + " is not supported"
	}
	return ""
}
