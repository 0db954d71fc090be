package profile

import (
	"strings"
	"testing"

	"tltune/compiler/target"
)

func TestShippedProfiles(t *testing.T) {
	set, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{
		"Intel(R) Data Center GPU Max 1550":           "Intel Data Center GPU Max",
		"Intel(R) Arc(TM) A770 Graphics":              "Intel Arc A-series",
		"Intel(R) Arc(TM) B580 Graphics":              "Intel Arc B-series",
		"Intel(R) Arc(TM) Pro B60 Graphics":           "Intel Arc B-series",
		"NVIDIA H100 80GB HBM3":                       "NVIDIA H100",
		"NVIDIA H200":                                 "NVIDIA H200",
		"pthread-skylake-avx512-Intel(R) Xeon(R) CPU": "PoCL CPU",
		"cpu-haswell-Intel(R) Core(TM) i7-4770 CPU":   "PoCL CPU",
	}
	for dev, want := range names {
		var hits []string
		for _, p := range set {
			if p.Matches(dev) {
				hits = append(hits, p.Name)
			}
		}
		if len(hits) != 1 || hits[0] != want {
			t.Errorf("%q matches %v, want exactly %q", dev, hits, want)
		}
	}
	if p, ok := set.Lookup("AMD Radeon RX 7900 XTX"); ok {
		t.Errorf("unknown device matched %s", p.Name)
	}
}

func TestFits(t *testing.T) {
	dpas := Matrix{Kind: "dpas", Dtypes: []string{"f16"}, SubgroupSize: 16, M: []int{1, 2, 4, 8}, N: 16, K: 16}
	for _, c := range []struct {
		sg, m, n, k int
		want        bool
	}{
		{16, 8, 16, 16, true}, {16, 32, 32, 32, true}, {16, 4, 16, 16, true}, {16, 3, 16, 16, true},
		{32, 8, 16, 16, false}, {16, 8, 8, 16, false}, {16, 8, 16, 8, false},
	} {
		if got := dpas.Fits(c.sg, c.m, c.n, c.k); got != c.want {
			t.Errorf("Fits(sg%d, %dx%dx%d) = %v", c.sg, c.m, c.n, c.k, got)
		}
	}
}

func TestStrict(t *testing.T) {
	base := "name = \"x\"\nmatch = [\"x*\"]\ntarget = \"generic\"\nsubgroup_sizes = [1]\nmax_work_group_size = 64\n"
	cases := map[string]string{
		base + "local_mem = 4\n":                                                    `unknown key "local_mem"`,
		strings.Replace(base, "generic", "amd", 1):                                  `target "amd"`,
		strings.Replace(base, "[1]", "[]", 1):                                       "subgroup_sizes",
		base + "[[matrix]]\ndtypes=[\"f16\"]\nsubgroup_size=16\nm=[8]\nn=8\nk=16\n": "not in subgroup_sizes",
		base + "[[matrix]]\ndtypes=[\"f16\"]\nsubgroup_size=1\nm=[8]\nn=8\nkk=16\n": `"matrix.kk"`,
	}
	for src, want := range cases {
		_, err := Parse("x.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %s", err, want)
		}
	}
	if _, err := Parse("x.toml", []byte(base)); err != nil {
		t.Error(err)
	}
}

// TestTargetDevice: a shipped profile describes its device as the runtime
// would, and the compiler chooses the profile's target and engines from it.
func TestTargetDevice(t *testing.T) {
	devs, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target string
		engines      int
	}{
		{"Intel(R) Data Center GPU Max 1550", "intel", 2}, // DPAS, f16 and bf16
		{"Intel(R) Arc(TM) A770 Graphics", "intel", 2},
		{"NVIDIA H200", "nvidia", 2}, // mma.sync, f16 and bf16
		{"cpu-haswell-AMD EPYC", "generic", 0},
	} {
		p, ok := devs.Lookup(tc.name)
		if !ok {
			t.Fatalf("no shipped profile matches %q", tc.name)
		}
		d := p.TargetDevice(tc.name)
		tgt := target.ForDevice(*d)
		if d.Name != tc.name || tgt.Name != tc.target || len(tgt.MMA) != tc.engines {
			t.Errorf("%s: device %q, target %s with %d engines; want %s with %d", tc.name, d.Name, tgt.Name, len(tgt.MMA), tc.target, tc.engines)
		}
	}
}
