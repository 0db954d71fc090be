package prune

import (
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tltune/compiler/tuning"
	"tltune/tuner/profile"
	"tltune/tuner/space"
)

// testDevice is a small intel-like profile with f16 DPAS, so every rule
// has something to bite on.
func testDevice() *profile.Profile {
	return &profile.Profile{
		Name:                     "test GPU",
		Target:                   profile.Intel,
		SubgroupSizes:            []int{16, 32},
		MaxWorkGroupSize:         512,
		LocalMemoryBytes:         8192,
		RegisterBytesPerSubgroup: 8192,
		ComputeUnits:             8,
		Matrix:                   []profile.Matrix{{Kind: "dpas", Dtypes: []string{"f16"}, SubgroupSize: 16, M: []int{8}, N: 16, K: 16}},
	}
}

var gemm64 = Problem{Op: "gemm", Dtype: "f16", M: 64, N: 64, K: 64, Batch: 100}

// good is kept on testDevice for gemm64; each case below breaks one rule.
var good = tuning.Params{
	SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16},
	Coopmatrix: [3]int{8, 16, 16}, Unroll: 2, BatchPerGroup: 1, StageLocal: true,
}

func TestRules(t *testing.T) {
	f32 := gemm64
	f32.Dtype = "f32"
	gemv := Problem{Op: "gemv", Dtype: "f32", M: 64, N: 64}
	gemvParams := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{4, 4}, Unroll: 1, BatchPerGroup: 1}
	// 16 lanes down 64 rows in vectors of 4, 4 columns each per trip.
	gemvVec := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{64, 4}, Unroll: 1, BatchPerGroup: 1, VectorWidth: 4}
	cases := []struct {
		name   string
		prob   Problem
		edit   func(p *tuning.Params)
		rule   string
		detail string // a piece of the message
	}{
		{"subgroup size unsupported", gemm64, func(p *tuning.Params) { p.SubgroupSize = 8 }, "subgroup", "not one of [16 32]"},
		{"wx not a multiple of sg", gemm64, func(p *tuning.Params) { p.WorkGroupSize[0] = 24 }, "work-group", "a multiple of the subgroup size 16"},
		{"work-group too large", gemm64, func(p *tuning.Params) { p.WorkGroupSize = [2]int{256, 4} }, "work-group", "exceeds the maximum of 512"},
		{"gemm without coopmatrix", gemm64, func(p *tuning.Params) { p.Coopmatrix = [3]int{} }, "coopmatrix", "needs a coopmatrix"},
		{"gemv with coopmatrix", gemv, func(p *tuning.Params) { *p = gemvParams; p.Coopmatrix = [3]int{1, 1, 1} }, "coopmatrix", "does not use"},
		{"not a dpas shape", gemm64, func(p *tuning.Params) { p.Coopmatrix = [3]int{8, 8, 16} }, "coopmatrix", "no dpas shape for f16"},
		{"dpas needs its subgroup", gemm64, func(p *tuning.Params) { p.SubgroupSize = 32; p.WorkGroupSize[0] = 64 }, "coopmatrix", "subgroup 16"},
		{"emulated rows over lanes", f32, func(p *tuning.Params) { p.Coopmatrix = [3]int{8, 8, 8} }, "coopmatrix", "not a multiple of subgroup size 16"},
		{"tile not a multiple", gemm64, func(p *tuning.Params) { p.Tile = [2]int{12, 16} }, "tile", "not a multiple of coopmatrix"},
		{"tile larger than problem", Problem{Op: "gemm", Dtype: "f16", M: 8, N: 64, K: 64}, func(p *tuning.Params) { p.Tile = [2]int{32, 16} }, "problem-size", "more than twice"},
		{"idle subgroups", gemm64, func(p *tuning.Params) { p.WorkGroupSize = [2]int{256, 1}; p.Tile = [2]int{32, 16} }, "idle-subgroups", "16x1 exceeds the 2x4 tiles"},
		{"unroll beyond K", Problem{Op: "gemm", Dtype: "f16", M: 64, N: 64, K: 16}, func(p *tuning.Params) {}, "unroll", "exceeds the loop of 16"},
		{"batch per group beyond batch", gemm64, func(p *tuning.Params) { p.BatchPerGroup = 128 }, "batch", "exceeds the batch of 100"},
		{"staging with one subgroup", gemm64, func(p *tuning.Params) { p.WorkGroupSize = [2]int{16, 1} }, "staging", "single subgroup"},
		{"swizzle without staging", gemm64, func(p *tuning.Params) { p.StageLocal, p.LocalSwizzle = false, true }, "staging", "local_swizzle apply to staged panels only"},
		{"swizzle and padding", gemm64, func(p *tuning.Params) { p.LocalSwizzle, p.LocalPad = true, 8 }, "staging", "local_pad 8 is moot"},
		{"local memory", gemm64, func(p *tuning.Params) { p.WorkGroupSize = [2]int{64, 4}; p.Unroll = 4 }, "local-memory", "16384 bytes"},
		{"registers", gemm64, func(p *tuning.Params) { p.Tile = [2]int{64, 64}; p.WorkGroupSize = [2]int{16, 1}; p.StageLocal = false }, "registers", "per lane"},
		{"gemm with vector width", gemm64, func(p *tuning.Params) { p.VectorWidth = 4 }, "vector-width", "gemm does not use"},
		{"vector wider than 128 bits", gemv, func(p *tuning.Params) { *p = gemvVec; p.VectorWidth = 8 }, "vector-width", "32 bytes"},
		{"vector width not a power of two", gemv, func(p *tuning.Params) { *p = gemvVec; p.VectorWidth = 3 }, "vector-width", "not a power of two"},
		{"vector not dividing the rows", Problem{Op: "ger", Dtype: "f16", M: 62, N: 64}, func(p *tuning.Params) { *p = gemvVec }, "vector-width", "does not divide the 62 contiguous rows"},
		{"gemv.t rows are N", Problem{Op: "gemv", Dtype: "f32", Trans: "t", M: 64, N: 30}, func(p *tuning.Params) { *p = gemvVec }, "vector-width", "30 contiguous rows"},
		{"tile the lowering changes", gemv, func(p *tuning.Params) { *p = gemvVec; p.Tile = [2]int{16, 2} }, "tile", "lowered as 16x4"},
		{"matvec tile beyond the matrix", Problem{Op: "ger", Dtype: "f32", M: 64, N: 1}, func(p *tuning.Params) { *p = gemvVec }, "problem-size", "64x1 matrix"},
		{"gemv with wy", gemv, func(p *tuning.Params) { *p = gemvVec; p.WorkGroupSize = [2]int{16, 2} }, "work-group", "one row"},
		{"ger split beyond its rounds", Problem{Op: "ger", Dtype: "f32", M: 64, N: 16}, func(p *tuning.Params) { *p = gemvVec; p.WorkGroupSize = [2]int{16, 2}; p.Split = 4 }, "idle-work-groups", "split 4 exceeds the 2 rounds of column tiles"},
		{"gemm split beyond its blocks", gemm64, func(p *tuning.Params) { p.Split = 8 }, "idle-work-groups", "split 8 exceeds the 4 work-group blocks of C"},
		{"gemm split of a batch that fills the device", Problem{Op: "gemm", Dtype: "f16", M: 64, N: 64, K: 64, Batch: 1000}, func(p *tuning.Params) { p.Split = 2 }, "split-unneeded", "the 8 compute units 125 work-groups each"},
		{"gemv split beyond its rounds", gemv, func(p *tuning.Params) { *p = gemvVec; p.Split = 2 }, "idle-work-groups", "split 2 exceeds the 1 rounds"},
		{"gemv idle subgroups", gemv, func(p *tuning.Params) { *p = gemvVec; p.WorkGroupSize = [2]int{32, 1} }, "idle-subgroups", "2 subgroups share 1 tiles"},
		{"ger idle subgroups", Problem{Op: "ger", Dtype: "f32", M: 64, N: 8}, func(p *tuning.Params) { *p = gemvVec; p.WorkGroupSize = [2]int{16, 4} }, "idle-subgroups", "1x4 exceeds the 1x2 tiles"},
		{"ger unroll", Problem{Op: "ger", Dtype: "f32", M: 64, N: 64}, func(p *tuning.Params) { *p = gemvVec; p.Unroll = 2 }, "unroll", "no reduction loop"},
		{"gemv unroll beyond the columns", Problem{Op: "gemv", Dtype: "f32", M: 64, N: 16}, func(p *tuning.Params) { *p = gemvVec; p.Unroll = 8 }, "unroll", "unroll 8 of steps of 4 exceeds the loop of 16"},
		{"gemv.t unroll beyond the rows", Problem{Op: "gemv", Dtype: "f32", Trans: "t", M: 96, N: 64}, func(p *tuning.Params) { *p = gemvVec; p.Unroll = 2 }, "unroll", "unroll 2 of steps of 64 exceeds the loop of 64"},
		{"matvec staging", gemv, func(p *tuning.Params) { *p = gemvVec; p.StageLocal = true }, "staging", "streams its matrix once"},
		{"matvec registers", Problem{Op: "gemv", Dtype: "f64", M: 4096, N: 4096}, func(p *tuning.Params) { *p = gemvVec; p.VectorWidth = 2; p.Tile = [2]int{512, 16} }, "registers", "per lane"},
	}
	dev := testDevice()
	if why := Check(good, dev, gemm64); why != nil {
		t.Fatalf("baseline pruned: %s", why)
	}
	if why := Check(gemvParams, dev, gemv); why != nil {
		t.Fatalf("gemv baseline pruned: %s", why)
	}
	if why := Check(gemvVec, dev, gemv); why != nil {
		t.Fatalf("vectorised gemv baseline pruned: %s", why)
	}
	gemmSplit := good // 4 blocks of 32x32, 100 work-groups on 8 compute units
	gemmSplit.Split = 4
	if why := Check(gemmSplit, dev, gemm64); why != nil {
		t.Fatalf("gemm split over its blocks pruned: %s", why)
	}
	split := gemvParams // 16 row tiles in 8 rounds of 2 subgroups
	split.Split = 8
	if why := Check(split, dev, gemv); why != nil {
		t.Fatalf("gemv split over its rounds pruned: %s", why)
	}
	// A gemv configuration stored before vector widths existed.
	old := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{1, 1}, Unroll: 1, BatchPerGroup: 1}
	if why := Check(old, dev, gemv); why != nil {
		t.Fatalf("a configuration without vector width pruned: %s", why)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.edit(&p)
			why := Check(p, dev, tc.prob)
			if why == nil {
				t.Fatalf("%v kept, want rule %q", p, tc.rule)
			}
			if why.Rule != tc.rule || !strings.Contains(why.Msg(), tc.detail) {
				t.Errorf("%v: got %s, want rule %q with %q", p, why, tc.rule, tc.detail)
			}
		})
	}
}

func TestUnknownLimitsKeep(t *testing.T) {
	dev := testDevice()
	dev.LocalMemoryBytes, dev.RegisterBytesPerSubgroup = 0, 0
	p := good
	p.Tile, p.Unroll = [2]int{32, 32}, 4
	if why := Check(p, dev, gemm64); why != nil {
		t.Errorf("unknown limits must not prune: %s", why)
	}
}

func TestValidate(t *testing.T) {
	bad := []Problem{
		{Op: "syrk", Dtype: "f32", M: 1, N: 1, K: 1},
		{Op: "gemm", Dtype: "f8", M: 1, N: 1, K: 1},
		{Op: "gemm", Dtype: "f32", M: 1, N: 1},
		{Op: "gemv", Dtype: "f32", M: 0, N: 1},
		{Op: "gemm", Dtype: "f32", Acc: "i8", M: 1, N: 1, K: 1},
	}
	for _, p := range bad {
		if p.Validate() == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	if err := gemm64.Validate(); err != nil {
		t.Error(err)
	}
}

// TestShippedSpaces checks that the shipped spaces leave work for every
// shipped profile on the demo shapes, and reports how much pruning removes.
func TestShippedSpaces(t *testing.T) {
	devs, err := profile.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	probs := []Problem{
		{Op: "gemm", Dtype: "f16", M: 64, N: 64, K: 32, Batch: 1000},
		{Op: "gemm", Dtype: "f32", M: 64, N: 64, K: 32, Batch: 1000},
		{Op: "gemv", Dtype: "f32", M: 64, N: 64, Batch: 1000},
		{Op: "ger", Dtype: "f32", M: 64, N: 64, Batch: 1000},
	}
	for _, dev := range devs {
		for _, prob := range probs {
			s, err := space.Shipped(prob.Op, string(dev.Target))
			if err != nil {
				t.Fatal(err)
			}
			keep, pruned := Split(s.All(), dev, prob)
			t.Logf("%-26s %s %s: %6d of %6d kept; pruned %v", dev.Name, prob.Op, prob.Dtype, len(keep), s.Size(), pruned)
			if len(keep) == 0 || len(keep)+Total(pruned) != s.Size() {
				t.Errorf("%s %s %s: %d kept, %d pruned of %d", dev.Name, prob.Op, prob.Dtype, len(keep), Total(pruned), s.Size())
			}
			var parts []iter.Seq[tuning.Params]
			for _, part := range s.Parts() {
				parts = append(parts, part.All())
			}
			if pk, pp := SplitParts(parts, dev, prob); !slices.Equal(pk, keep) || !reflect.DeepEqual(pp, pruned) {
				t.Errorf("%s %s %s: walked in %d parts, %d kept and tallies %v; walked whole, %d and %v",
					dev.Name, prob.Op, prob.Dtype, len(parts), len(pk), pp, len(keep), pruned)
			}
		}
	}
}

// BenchmarkSplit measures pruning per configuration of a shipped space.
func BenchmarkSplit(b *testing.B) {
	devs, err1 := profile.Shipped()
	s, err2 := space.Shipped("gemm", "nvidia")
	dev, ok := devs.Lookup("NVIDIA H100 80GB HBM3")
	if err1 != nil || err2 != nil || !ok {
		b.Fatal(err1, err2, ok)
	}
	prob := Problem{Op: "gemm", Dtype: "f16", M: 64, N: 64, K: 32}
	b.ReportAllocs()
	for b.Loop() {
		Split(s.All(), dev, prob)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*s.Size()), "ns/config")
}

// TestSwizzleUseful: the swizzle is kept where ldmatrix reads the panels
// (16-bit inputs on the nvidia target) and for short K loops, and pruned
// for element-wise fragment reads over long ones.
func TestSwizzleUseful(t *testing.T) {
	p := tuning.Params{StageLocal: true, LocalSwizzle: true}
	for _, c := range []struct {
		target profile.Target
		dtype  string
		k      int
		kept   bool
	}{
		{profile.NVIDIA, "f16", 256, true}, {profile.NVIDIA, "bf16", 256, true},
		{profile.NVIDIA, "f32", 128, true}, {profile.NVIDIA, "f32", 256, false},
		{profile.Intel, "f16", 32, true}, {profile.Intel, "f16", 256, false},
	} {
		why := swizzleUseful(&checker{p: p, dev: &profile.Profile{Target: c.target}, prob: Problem{Op: "gemm", Dtype: c.dtype, M: 64, N: 64, K: c.k}})
		if (why == nil) != c.kept {
			t.Errorf("%s %s K=%d: pruned %v, want kept %v", c.target, c.dtype, c.k, why, c.kept)
		}
	}
}

// TestPadUseful: on the nvidia target a staged panel's pad is 16 bytes of
// the element type; other targets try every pad.
func TestCoopRowsUseful(t *testing.T) {
	mma := profile.Matrix{Kind: "mma", Dtypes: []string{"f16", "bf16"}, SubgroupSize: 32, M: []int{16}, N: 8, K: 16}
	nvidia := &profile.Profile{Target: profile.NVIDIA, Matrix: []profile.Matrix{mma}}
	intel := &profile.Profile{Target: profile.Intel, Matrix: []profile.Matrix{mma}}
	for _, c := range []struct {
		dev   *profile.Profile
		dtype string
		cm    int
		kept  bool
	}{
		{nvidia, "f32", 128, true}, {nvidia, "f32", 64, true}, {nvidia, "f16", 32, true}, {nvidia, "f16", 64, false},
		{nvidia, "bf16", 128, false}, {nvidia, "f64", 128, true}, {intel, "f16", 64, true},
	} {
		prob := Problem{Op: "gemm", Dtype: c.dtype, M: 256, N: 256, K: 256}
		if got := CoopRowsUseful(c.dev, prob, c.cm); got != c.kept {
			t.Errorf("%s %s cm %d: kept %v, want %v", c.dev.Target, c.dtype, c.cm, got, c.kept)
		}
		if why := coopRowsUseful(&checker{p: tuning.Params{Coopmatrix: [3]int{c.cm, 8, 16}}, dev: c.dev, prob: prob}); (why == nil) != c.kept {
			t.Errorf("%s %s cm %d: the rule says %v", c.dev.Target, c.dtype, c.cm, why)
		}
	}
}

func TestPadUseful(t *testing.T) {
	nvidia, intel := &profile.Profile{Target: profile.NVIDIA}, &profile.Profile{Target: profile.Intel}
	for _, c := range []struct {
		dev   *profile.Profile
		dtype string
		pad   int
		kept  bool
	}{
		{nvidia, "f16", 8, true}, {nvidia, "f32", 4, true}, {nvidia, "f32", 8, false}, {nvidia, "f64", 2, true},
		{nvidia, "c64", 1, true}, {nvidia, "f16", 4, false}, {nvidia, "f32", 0, true}, {intel, "f32", 8, true},
	} {
		prob := Problem{Op: "gemm", Dtype: c.dtype, M: 64, N: 64, K: 64}
		if got := PadUseful(c.dev, prob, c.pad); got != c.kept {
			t.Errorf("%s %s pad %d: kept %v, want %v", c.dev.Target, c.dtype, c.pad, got, c.kept)
		}
		if why := padUseful(&checker{p: tuning.Params{StageLocal: true, LocalPad: c.pad}, dev: c.dev, prob: prob}); (why == nil) != c.kept {
			t.Errorf("%s %s pad %d: the rule says %v", c.dev.Target, c.dtype, c.pad, why)
		}
	}
}

// TestHalfWarps: on the H100, subgroups of 16 lanes are kept for a GEMM
// off the matrix engine with 16-row coopmatrices, and pruned for other
// rows, for types on the matrix engine and for gemv; a half-warp has half
// a warp's registers.
func TestHalfWarps(t *testing.T) {
	devs, err := profile.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	h100, ok := devs.Lookup("NVIDIA H100 80GB HBM3")
	if !ok {
		t.Fatal("no H100 profile")
	}
	staged := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 16},
		Unroll: 1, BatchPerGroup: 2, StageLocal: true, LocalSwizzle: true}
	rows32 := staged
	rows32.Tile, rows32.Coopmatrix = [2]int{32, 8}, [3]int{32, 8, 16}
	big := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{64, 64}, Coopmatrix: [3]int{16, 8, 16}, Unroll: 1, BatchPerGroup: 1}
	bigWarp := big
	bigWarp.SubgroupSize, bigWarp.WorkGroupSize = 32, [2]int{32, 1}
	f32 := Problem{Op: "gemm", Dtype: "f32", M: 16, N: 16, K: 16, Batch: 68267}
	f16 := f32
	f16.Dtype = "f16"
	large := Problem{Op: "gemm", Dtype: "f32", M: 256, N: 256, K: 256, Batch: 267}
	gemv := Problem{Op: "gemv", Dtype: "f32", M: 64, N: 64, Batch: 12413}
	for _, c := range []struct {
		name string
		p    tuning.Params
		prob Problem
		rule string // "" kept
	}{
		{"16-row f32", staged, f32, ""},
		{"32-row f32", rows32, f32, "half-warp"},
		{"f16, on mma", staged, f16, "half-warp"},
		{"gemv", tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{16, 4}, Unroll: 1, BatchPerGroup: 1, VectorWidth: 4}, gemv, "half-warp"},
		{"64x64 tile, half-warp", big, large, "registers"},
		{"64x64 tile, warp", bigWarp, large, ""},
	} {
		why, got := Check(c.p, h100, c.prob), ""
		if why != nil {
			got = why.Rule
		}
		if got != c.rule {
			t.Errorf("%s: pruned by %q (%v), want %q (\"\": kept)", c.name, got, why, c.rule)
		}
	}
}

// TestShippedSpacesFitTinyProblems: every shipped profile keeps at least
// one configuration for problems smaller than a subgroup, where every
// tile is mostly padding; pruning them all would leave such a problem
// nothing to tune.
func TestShippedSpacesFitTinyProblems(t *testing.T) {
	devs, err := profile.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	var probs []Problem
	for _, mn := range [][2]int{{1, 1}, {1, 7}, {7, 1}, {3, 3}} {
		for _, dtype := range []string{"f16", "c64"} {
			m, n := mn[0], mn[1]
			probs = append(probs,
				Problem{Op: "gemm", Dtype: dtype, M: m, N: n, K: m, Batch: 8},
				Problem{Op: "gemv", Dtype: dtype, M: m, N: n, Batch: 8},
				Problem{Op: "gemv", Trans: "t", Dtype: dtype, M: m, N: n, Batch: 8},
				Problem{Op: "ger", Dtype: dtype, M: m, N: n, Batch: 8})
		}
	}
	for _, dev := range devs {
		t.Run(dev.Name, func(t *testing.T) {
			t.Parallel()
			for _, prob := range probs {
				s, err := space.Shipped(prob.Op, string(dev.Target))
				if err != nil {
					t.Fatal(err)
				}
				if keep, pruned := Split(s.All(), dev, prob); len(keep) == 0 {
					t.Errorf("%+v: every configuration pruned, by %s", prob, ruleCounts(pruned))
				}
			}
		})
	}
}

// ruleCounts writes tallies as "rule count, ...".
func ruleCounts(tallies []Tally) string {
	var parts []string
	for _, t := range tallies {
		parts = append(parts, fmt.Sprintf("%s %d", t.Rule, t.Count))
	}
	return strings.Join(parts, ", ")
}

// TestOneSubgroupPerGroup: on a target that runs one subgroup per
// work-group, a work-group of more is pruned before it is compiled.
func TestOneSubgroupPerGroup(t *testing.T) {
	dev := &profile.Profile{Name: "some CPU", Target: "emulated", SubgroupSizes: []int{8}, MaxWorkGroupSize: 256, OneSubgroupPerGroup: true}
	prob := Problem{Op: "gemv", Dtype: "f32", M: 64, N: 64}
	for wg, kept := range map[[2]int]bool{{8, 1}: true, {16, 1}: false, {8, 2}: false} {
		p := tuning.Params{SubgroupSize: 8, WorkGroupSize: wg, Tile: [2]int{8, 1}, Unroll: 1, BatchPerGroup: 1}
		why := Check(p, dev, prob)
		if kept != (why == nil || why.Rule != "work-group") {
			t.Errorf("work-group %v: pruned by %v, want kept %v", wg, why, kept)
		}
	}
}
