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

func TestFitsWorkGroup(t *testing.T) {
	for _, c := range []struct {
		wg          [2]int
		most        int
		oneSubgroup bool
		want        string // a piece of the message; "" fits
	}{
		{[2]int{64, 2}, 256, false, ""},
		{[2]int{64, 2}, 0, false, ""},
		{[2]int{24, 1}, 256, false, "multiple of the subgroup size 16"},
		{[2]int{16, 0}, 256, false, "both entries must be positive"},
		{[2]int{64, 8}, 256, false, "64x8 = 512 work-items exceeds the maximum of 256"},
		{[2]int{16, 1}, 256, true, ""},
		{[2]int{16, 2}, 256, true, "one subgroup per work-group (16x1) only"},
	} {
		p := Params{SubgroupSize: 16, WorkGroupSize: c.wg}
		err := p.FitsWorkGroup(c.most, c.oneSubgroup)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v (at most %d, one subgroup %v): %v, want it to fit", c.wg, c.most, c.oneSubgroup, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v (at most %d, one subgroup %v): %v, want %q", c.wg, c.most, c.oneSubgroup, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string // a piece of the message; "" passes
	}{
		{Params{}, ""},
		{Params{SubgroupSize: 16}, ""},                               // work-group not chosen
		{Params{WorkGroupSize: [2]int{24, 1}}, ""},                   // subgroup not chosen
		{Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}}, ""}, // two subgroups wide
		{Params{SubgroupSize: 16, WorkGroupSize: [2]int{24, 1}}, "a multiple of the subgroup size 16"},
		{Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 0}}, "work_group_size [16 0] is partly unset"},
		{Params{Coopmatrix: [3]int{16, 8, 0}}, "coopmatrix [16 8 0] is partly unset"},
		{Params{Split: -2}, "split [-2] is negative"},
	} {
		err := c.p.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want it to pass", c.p, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
