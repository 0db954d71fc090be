package lower

import (
	"strings"
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
)

const gemmSrc = `func @k(%A: memref<f32x48x16>, %B: memref<f32x16x40>, %C: memref<f32x48x40>) ATTRS {
    %one = constant 1.0 : f32
    gemm.n.n %one, %A, %B, %one, %C
}`

func parseFunc(t *testing.T, attrs string) *ir.Func {
	t.Helper()
	prog, errs := syntax.Parse([]byte(strings.Replace(gemmSrc, "ATTRS", attrs, 1)))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return prog.Funcs[0]
}

func tunedTable() *tuning.Table {
	return &tuning.Table{Entries: []tuning.Entry{{Device: "Arc", Op: "gemm", Trans: "nn", Dtype: "f32", Acc: "f32",
		M: 48, N: 40, K: 16, Params: tuning.Params{SubgroupSize: 8, WorkGroupSize: [2]int{16, 2},
			Tile: [2]int{16, 8}, Coopmatrix: [3]int{8, 8, 8}, Unroll: 2, BatchPerGroup: 1}}}}
}

// TestChoosePrecedence: attributes win over the tuning table, the table
// over the heuristic, per parameter.
func TestChoosePrecedence(t *testing.T) {
	intel := target.Intel()
	ch, err := Choose(parseFunc(t, ""), intel, tunedTable(), "Arc")
	if err != nil {
		t.Fatal(err)
	}
	if want := tunedTable().Entries[0].Params; ch.Params != want {
		t.Errorf("table: got %v, want %v", ch.Params, want)
	}
	attrs := `attributes {subgroup_size=16, "tltune.params"={"tile"=[32, 8], "coopmatrix"=[16, 8, 4], "stage_local"=true}}`
	ch, err = Choose(parseFunc(t, attrs), intel, tunedTable(), "Arc")
	if err != nil {
		t.Fatal(err)
	}
	want := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{32, 8},
		Coopmatrix: [3]int{16, 8, 4}, Unroll: 2, BatchPerGroup: 1, StageLocal: true}
	if ch.Params != want {
		t.Errorf("attributes over table: got %v, want %v", ch.Params, want)
	}
	if !strings.HasPrefix(ch.Explain[0], "attributes: subgroup_size, tile, coopmatrix, stage_local") ||
		!strings.Contains(ch.Explain[1], "exact match") {
		t.Errorf("explanation does not name the sources:\n%s", strings.Join(ch.Explain, "\n"))
	}
	ch, err = Choose(parseFunc(t, ""), intel, tunedTable(), "another device")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Params.SubgroupSize != intel.DefaultSubgroupSize || !strings.Contains(ch.Explain[0], "using the heuristic") {
		t.Errorf("untuned device: %v\n%s", ch.Params, strings.Join(ch.Explain, "\n"))
	}
}

func TestChooseRejectsImpossibleConfigs(t *testing.T) {
	for attrs, want := range map[string]string{
		`attributes {subgroup_size=16, work_group_size=[24, 1]}`:                                        "multiple of the subgroup size",
		`attributes {"tltune.params"={"tile"=[20, 8]}}`:                                                 "not a multiple of coopmatrix",
		`attributes {work_group_size=[64, 64]}`:                                                         "exceeds the target's maximum",
		`attributes {"tltune.params"={"tile"=[8]}}`:                                                     "array of 2 integers",
		`attributes {"tltune.params"=3}`:                                                                "must be a dictionary",
		`attributes {"tltune.params"={"coopmatrix"=[64, 64, 64], "tile"=[64, 64], "stage_local"=true}}`: "local memory",
	} {
		_, err := Choose(parseFunc(t, attrs), target.Intel(), nil, "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", attrs, err, want)
		}
	}
}
