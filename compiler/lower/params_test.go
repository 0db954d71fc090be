package lower

import (
	"strings"
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/internal/speak"
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
	// gemmSrc works on one unbatched C: its key has no batch layout.
	problem := speak.Problem{Op: "gemm", Trans: "nn", Dtype: "f32", Acc: "f32", M: 48, N: 40, K: 16, Alpha: "1", Beta: "1"}
	return &tuning.Table{Entries: []tuning.Entry{{Device: "Arc", Problem: problem, Params: tuning.Params{SubgroupSize: 8, WorkGroupSize: [2]int{16, 2},
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
	if !strings.HasPrefix(ch.Explain()[0], "attributes: subgroup_size, tile, coopmatrix, stage_local") ||
		!strings.Contains(ch.Explain()[1], "exact match") {
		t.Errorf("explanation does not name the sources:\n%s", strings.Join(ch.Explain(), "\n"))
	}
	ch, err = Choose(parseFunc(t, ""), intel, tunedTable(), "another device")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Params.SubgroupSize != intel.DefaultSubgroupSize || !strings.Contains(ch.Explain()[0], "using the heuristic") {
		t.Errorf("untuned device: %v\n%s", ch.Params, strings.Join(ch.Explain(), "\n"))
	}
}

func TestChooseRejectsImpossibleConfigs(t *testing.T) {
	for attrs, want := range map[string]string{
		`attributes {subgroup_size=16, work_group_size=[24, 1]}`:                                        "multiple of the subgroup size",
		`attributes {"tltune.params"={"tile"=[20, 8]}}`:                                                 "not a multiple of coopmatrix",
		`attributes {work_group_size=[64, 64]}`:                                                         "exceeds the maximum",
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

// TestSplitOnlyForALoneCollective: a split repeats everything of the
// function but its gemv, gemm or ger in every work-group sharing the
// entry, so only a function that does nothing else may split.
func TestSplitOnlyForALoneCollective(t *testing.T) {
	const src = `func @k(%A: memref<f32x64x8x?>, %x: memref<f32x8x?>, %y: memref<f32x64x?>, %B: memref<f32x8x8x?>, %C: memref<f32x64x8x?>) attributes {"tltune.params"={"split"=4}} {
    %g = builtin.group_id : index
    %one = constant 1.0 : f32
    %a = subview %A[0:64, 0:8, %g] : memref<f32x64x8>
    %b = subview %x[0:8, %g] : memref<f32x8>
    %c = subview %y[0:64, %g] : memref<f32x64>
    %bm = subview %B[0:8, 0:8, %g] : memref<f32x8x8>
    %cm = subview %C[0:64, 0:8, %g] : memref<f32x64x8>
    MAIN
}`
	for main, want := range map[string]string{
		"gemv.n %one, %a, %b, %one, %c":     "",
		"gemm.n.n %one, %a, %bm, %one, %cm": "",
		"gemv.n %one, %a, %b, %one, %c\n    %i = constant 0 : index\n    store %one, %c[%i]":     "does more than its gemv (store)",
		"gemm.n.n %one, %a, %bm, %one, %cm\n    %i = constant 0 : index\n    store %one, %c[%i]": "does more than its gemm (store)",
		"ger %one, %c, %b, %one, %cm": "",
		"ger %one, %c, %b, %one, %cm\n    %i = constant 0 : index\n    store %one, %c[%i]": "does more than its ger (store)",
		"gemv.n %one, %a, %b, %one, %c\n    gemv.n %one, %a, %b, %one, %c":                 "does more than its gemv",
	} {
		prog, errs := syntax.Parse([]byte(strings.Replace(src, "MAIN", main, 1)))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		ch, err := Choose(prog.Funcs[0], target.Generic(), nil, "")
		switch {
		case want == "" && (err != nil || ch.Params.Split != 4):
			t.Errorf("%s alone: %v, split %v", main, err, ch)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", main, err, want)
		}
	}
}

// TestBatchPerGroupNeedsAnExtent: several batch entries per work-group need
// the number of entries from an argument (the drop-in ABI has no argument
// for it); a function that indexes nothing by the group id runs one.
func TestBatchPerGroupNeedsAnExtent(t *testing.T) {
	attrs := `attributes {"tltune.params"={"batch_per_group"=4}}`
	ch, err := Choose(parseFunc(t, attrs), target.Generic(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Params.BatchPerGroup != 1 || ch.Batch != nil {
		t.Errorf("no batch extent: batch_per_group %d, extent %v; want 1 and none", ch.Params.BatchPerGroup, ch.Batch)
	}
	if !strings.Contains(strings.Join(ch.Explain(), "\n"), "batch_per_group 4 needs the batch size from an argument") {
		t.Errorf("the explanation does not say why batch_per_group is 1:\n%s", strings.Join(ch.Explain(), "\n"))
	}
	prog, errs := syntax.Parse([]byte(`func @k(%x: f32, %A: memref<f32x8x?>) attributes {"tltune.params"={"batch_per_group"=4}} {
    %g = builtin.group_id : index
    %a = subview %A[0:8, %g] : memref<f32x8>
}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ch, err = Choose(prog.Funcs[0], target.Generic(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Params.BatchPerGroup != 4 || ch.Batch == nil || *ch.Batch != (ir.BatchExtent{Param: 1, Mode: 1}) {
		t.Errorf("batch_per_group %d, extent %v; want 4 and mode 1 of parameter 1", ch.Params.BatchPerGroup, ch.Batch)
	}
}

// TestTableKeyProblem: the compiler keys its lookup by the whole problem:
// constant α and β as the table spells them, "?" for a dynamic one, the
// atomic flag, and the batch layout read from how the entry is selected.
func TestTableKeyProblem(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"strided", `func @k(%a: memref<f32x32x?>, %b: memref<f32x16x?>, %C: memref<f32x32x16x?>) {
    %g = builtin.group_id : index
    %one = constant 1.0 : f32
    %half = constant 0.5 : f32
    %ae = subview %a[0:32, %g] : memref<f32x32>
    %be = subview %b[0:16, %g] : memref<f32x16>
    %Ce = subview %C[0:32, 0:16, %g] : memref<f32x32x16>
    ger %half, %ae, %be, %one, %Ce
}`, "ger f32 32x16 alpha=0.5 beta=1"},
		{"group, dynamic beta, atomic", `func @k(%A: group<memref<f32x32x8> x ?>, %x: group<memref<f32x8> x ?>, %y: group<memref<f32x32> x ?>, %beta: f32) {
    %g = builtin.group_id : index
    %one = constant 1.0 : f32
    %Ae = load %A[%g] : memref<f32x32x8>
    %xe = load %x[%g] : memref<f32x8>
    %ye = load %y[%g] : memref<f32x32>
    gemv.n.atomic %one, %Ae, %xe, %beta, %ye
}`, "gemv.n f32 32x8 beta=? atomic group"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prog, errs := syntax.Parse([]byte(tc.src))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			k := tableKey(mainCollective(prog.Funcs[0]), "D", target.Generic())
			if got := k.Problem.String(); got != tc.want {
				t.Errorf("key %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTableKeyPrecision: compiled with tf32 enabled, an f32 gemm is keyed
// and looked up as the tf32 problem, so an exact entry of the same shape
// does not serve it; without tf32 the exact entry does.
func TestTableKeyPrecision(t *testing.T) {
	table := tunedTable()
	table.Entries[0].Device = "H200"
	table.Entries[0].Params = tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 8}, Unroll: 1, BatchPerGroup: 1}
	exact := target.Nvidia()
	tf32 := target.Nvidia()
	if err := tf32.EnableTF32(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t    *target.Target
		want string
	}{{exact, "exact match for gemm.nn f32 48x40x16 beta=1 on H200"}, {tf32, "no entry for gemm.nn f32 48x40x16 beta=1 tf32 on H200"}} {
		ch, err := Choose(parseFunc(t, ""), tc.t, table, "H200")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ch.Match.String(), tc.want) {
			t.Errorf("tf32 %v: %v, want %q", tc.t.TF32, ch.Match, tc.want)
		}
	}
}

// TestSubgroupSizeFollowsWorkGroupSize: a work-group size fixed by attribute
// with no subgroup size gets the largest subgroup size of the target that
// divides it, not the target's default that may not.
func TestSubgroupSizeFollowsWorkGroupSize(t *testing.T) {
	ch, err := Choose(parseFunc(t, `attributes {work_group_size=[8, 1]}`), target.Intel(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Params.SubgroupSize != 8 {
		t.Errorf("subgroup size %d for work-group size [8, 1] on intel, want 8", ch.Params.SubgroupSize)
	}
}
