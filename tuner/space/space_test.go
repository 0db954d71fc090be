package space

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"tltune/compiler/tuning"
)

func TestParseValues(t *testing.T) {
	good := map[string]string{
		"4":         "4",
		"1,2,4":     "1,2,4",
		"4, 1,2,2":  "1,2,4",
		"1..4":      "1,2,3,4",
		"8..32+8":   "8,16,24,32",
		"1..64*2":   "1,2,4,8,16,32,64",
		"3..30*3,1": "1,3,9,27",
		"16..16*2":  "16",
	}
	for in, want := range good {
		got, err := ParseValues(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseValues(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	bad := []string{"", "x", "1..", "..4", "8..1", "0..8*2", "1..8*1", "1..8+0", "1..100000", "1.5", "1..2,10..9"}
	for _, in := range bad {
		if got, err := ParseValues(in); err == nil {
			t.Errorf("ParseValues(%q) = %v, want an error", in, got)
		}
	}
}

const small = `
subgroup_size = [16, 8]
unroll = 1
batch_per_group = "1..2"
stage_local = [true, false]
[work_group_size]
x = [16]
y = [1]
[tile]
m = [8]
n = [8, 16]
[coopmatrix]
m = [8]
n = [8]
k = [16]
[target.nvidia]
subgroup_size = [32]
work_group_size = { x = [32, 64] }
`

func TestEnumerationOrder(t *testing.T) {
	s, err := Parse("small.toml", "gemm", "intel", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range s.All() {
		got = append(got, p.String())
	}
	if len(got) != s.Size() || s.Size() != 2*2*2*2 {
		t.Fatalf("%d points, Size %d, want 16", len(got), s.Size())
	}
	want := []string{
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b2",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b2 local",
		"sg8 wg16x1 t8x16 cm8x8x16 u1 b1",
	}
	if !slices.Equal(got[:5], want) {
		t.Errorf("first points:\n%s\nwant\n%s", strings.Join(got[:5], "\n"), strings.Join(want, "\n"))
	}
	if last := got[len(got)-1]; last != "sg16 wg16x1 t8x16 cm8x8x16 u1 b2 local" {
		t.Errorf("last point %s", last)
	}
}

// TestStagedLayouts: a staged point is padded by each local_pad or
// swizzled (unpadded), for each number of stages; an unstaged point is
// neither.
func TestStagedLayouts(t *testing.T) {
	s, err := Parse("small.toml", "gemm", "intel", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	s.SubgroupSize, s.Tile.N, s.BatchPerGroup = Values{8}, Values{8}, Values{1}
	s.Stages, s.LocalPad, s.LocalSwizzle = Values{1, 2}, Values{0, 8}, Bools{false, true}
	var got []string
	for p := range s.All() {
		got = append(got, p.String())
	}
	want := []string{
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local pad8",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local sw",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local s2",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local s2 pad8",
		"sg8 wg16x1 t8x8 cm8x8x16 u1 b1 local s2 sw",
	}
	if !slices.Equal(got, want) {
		t.Errorf("points:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTargetReplacement(t *testing.T) {
	s, err := Parse("small.toml", "gemm", "nvidia", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	if s.SubgroupSize.String() != "32" || s.WorkGroupSize.X.String() != "32,64" || s.WorkGroupSize.Y.String() != "1" {
		t.Errorf("nvidia dims: sg %v wx %v wy %v", s.SubgroupSize, s.WorkGroupSize.X, s.WorkGroupSize.Y)
	}
}

func TestStrict(t *testing.T) {
	cases := map[string]string{
		small + "\nunrol = [1]\n":                               `"target.nvidia.unrol"`,
		strings.Replace(small, "k = [16]", "q = 1", 1):          `"coopmatrix.q"`,
		strings.Replace(small, "m = [8]\nn = [8]\n", "", 1):     "give m, n and k",
		strings.Replace(small, "unroll = 1", "unroll = 0", 1):   "unroll: 0 is not positive",
		strings.Replace(small, "[tile]\nm = [8]", "[tile]", 1):  "tile.m: no values",
		strings.Replace(small, "unroll = 1", "unroll = 1.5", 1): "unroll",
	}
	for src, want := range cases {
		_, err := Parse("x.toml", "gemm", "intel", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %s", err, want)
		}
	}
}

func TestOverrides(t *testing.T) {
	s, err := Parse("small.toml", "gemm", "intel", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	ov := RegisterFlags(fs, "")
	if err := fs.Parse([]string{"--sg", "16", "--unroll", "1..4*2", "--stage", "off", "--tm", "8,16"}); err != nil {
		t.Fatal(err)
	}
	if err := ov.Apply(s); err != nil {
		t.Fatal(err)
	}
	if s.SubgroupSize.String() != "16" || s.Unroll.String() != "1,2,4" || len(s.StageLocal) != 1 || s.Tile.M.String() != "8,16" {
		t.Errorf("after overrides: %+v", s.Dims)
	}
	if s.Tile.N.String() != "8,16" {
		t.Errorf("tile n changed without a flag: %v", s.Tile.N)
	}
	for _, args := range [][]string{{"--sg", "x"}, {"--stage", "maybe"}, {"--wx", "9..1"}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		RegisterFlags(fs, "")
		if err := fs.Parse(args); err == nil || !strings.Contains(err.Error(), args[0][2:]) {
			t.Errorf("%v: error %v, want one naming the flag", args, err)
		}
	}
}

func TestShipped(t *testing.T) {
	for _, op := range Ops {
		for _, target := range []string{"generic", "intel", "nvidia"} {
			s, err := Shipped(op, target)
			if err != nil {
				t.Fatal(err)
			}
			// Pruning walks the whole product; keep it cheap (BenchmarkSplit in
			// tuner/prune: about 0.2 µs a point on one core, and the walk
			// takes every core (prune.SplitParts): at most 0.16 s a run on
			// two, and a fifth of that where no split can pay and the tuner
			// drops the dimension).
			// A problem walks one pad of the list (the tuner keeps the one
			// prune.PadUseful wants; nvidia lists one per element type), and
			// of nvidia's half-warps and work-groups of 16 lanes, only what
			// suits them (tuner's TestShippedWalks: 1.17 million points
			// at most of these 1.94 million).
			walk := *s
			walk.LocalPad = walk.LocalPad[:1]
			if n := walk.Size(); n > 2000000 {
				t.Errorf("%s/%s: %d points; keep spaces under 2000000", op, target, n)
			}
			seen := map[tuning.Params]bool{}
			for p := range s.All() {
				if seen[p] {
					t.Fatalf("%s/%s: %v enumerated twice", op, target, p)
				}
				seen[p] = true
			}
			var inParts []tuning.Params
			for _, part := range s.Parts() {
				inParts = slices.AppendSeq(inParts, part.All())
			}
			if all := slices.Collect(s.All()); !slices.Equal(inParts, all) {
				t.Errorf("%s/%s: the parts enumerate %d points, not All's %d in its order", op, target, len(inParts), len(all))
			}
		}
	}
	if _, err := Shipped("syrk", "generic"); err == nil {
		t.Error("space for unknown op loaded")
	}
}
