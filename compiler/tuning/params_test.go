package tuning

import (
	"strings"
	"testing"
)

func TestParamsCompactForm(t *testing.T) {
	gemm := Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{16, 8, 16},
		Unroll: 2, BatchPerGroup: 1, StageLocal: true}
	if got := gemm.String(); got != "sg32 wg64x2 t32x32 cm16x8x16 u2 b1 local" {
		t.Errorf("String = %q", got)
	}
	// A GEMV configuration has no coopmatrix: none is printed, and For
	// drops what the GEMV lowering does not read even when set.
	gemv := Params{SubgroupSize: 32, WorkGroupSize: [2]int{128, 1}, Tile: [2]int{4, 1}, Unroll: 4, BatchPerGroup: 2, VectorWidth: 4}
	if got := gemv.String(); got != "sg32 wg128x1 t4x1 u4 b2 v4" {
		t.Errorf("String = %q", got)
	}
	gemv.Coopmatrix, gemv.StageLocal = [3]int{1, 1, 1}, true
	if got := gemv.For("gemv"); got != "sg32 wg128x1 t4x1 u4 b2 v4" {
		t.Errorf("For(gemv) = %q", got)
	}
	if got := (Params{BatchPerGroup: 8}).String(); got != "b8" {
		t.Errorf("partly chosen: %q", got)
	}
	if got := (Params{}).String(); got != "(none chosen)" {
		t.Errorf("nothing chosen: %q", got)
	}
}

// TestLegend: every abbreviation the compact form of an op can print is
// explained in that op's legend, and no other.
func TestLegend(t *testing.T) {
	for op, want := range map[string][]string{
		"gemm": {"sg", "wg", "t", "cm", "u", "b", "local", "s", "pad", "sw", "cl", "sp"},
		"gemv": {"sg", "wg", "t", "u", "b", "v", "sp"},
		"ger":  {"sg", "wg", "t", "u", "b", "v", "sp"},
	} {
		var got []string
		for _, line := range strings.Split(strings.TrimRight(Legend(op), "\n"), "\n") {
			got = append(got, strings.Fields(line)[0])
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Legend(%s) explains %v, want %v", op, got, want)
		}
	}
}

// TestParamsPipelineKnobs: stages, padding and the swizzle print with the
// staging they belong to, the swizzle and the local epilogue as flags.
func TestParamsPipelineKnobs(t *testing.T) {
	p := Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{16, 8, 16},
		Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 8, LocalEpilogue: true}
	if got := p.String(); got != "sg32 wg64x2 t32x32 cm16x8x16 u1 b1 local s3 pad8 cl" {
		t.Errorf("String = %q", got)
	}
	p.LocalPad, p.LocalSwizzle = 0, true
	if got := p.String(); got != "sg32 wg64x2 t32x32 cm16x8x16 u1 b1 local s3 sw cl" {
		t.Errorf("swizzled: %q", got)
	}
	p.StageLocal = false
	if got := p.For("gemm"); got != "sg32 wg64x2 t32x32 cm16x8x16 u1 b1 cl" {
		t.Errorf("without staging: %q", got)
	}
}
