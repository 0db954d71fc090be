package target

import "testing"

func TestByName(t *testing.T) {
	for _, name := range Names() {
		tg, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if tg.Name != name || !tg.SupportsSubgroupSize(tg.DefaultSubgroupSize) {
			t.Errorf("%s: inconsistent profile %+v", name, tg)
		}
	}
	if _, err := ByName("amd"); err == nil {
		t.Error("ByName(amd) succeeded")
	}
}

func TestForDevice(t *testing.T) {
	cases := []struct {
		dev       Device
		want      string
		sgs       int
		nativeF16 bool
	}{
		{Device{Name: "pthread-skylake", Vendor: "GenuineIntel", Extensions: []string{"cl_khr_fp64"}}, "generic", 1, false},
		{Device{Name: "PoCL 5 CPU", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp64"}, SubgroupSizes: []int{1, 2, 4, 8, 16, 32, 64}}, "intel", 16, false},
		{Device{Name: "Max 1550", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp16", "cl_khr_fp64"}, SubgroupSizes: []int{16, 32}}, "intel", 16, true},
		{Device{Name: "Arc A770", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp16"}, SubgroupSizes: []int{8, 32}}, "intel", 8, true},
		{Device{Name: "NVIDIA H200", Vendor: "NVIDIA Corporation", Extensions: []string{"cl_khr_fp64"}, LocalMemBytes: 48 << 10}, "nvidia", 32, false},
	}
	for _, c := range cases {
		tg := ForDevice(c.dev)
		if tg.Name != c.want || tg.DefaultSubgroupSize != c.sgs || tg.NativeF16 != c.nativeF16 {
			t.Errorf("%s: got %s sg%d f16=%v, want %s sg%d f16=%v", c.dev.Name,
				tg.Name, tg.DefaultSubgroupSize, tg.NativeF16, c.want, c.sgs, c.nativeF16)
		}
	}
	pvc := ForDevice(Device{Name: "Max 1550", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp16",
		"cl_intel_subgroup_matrix_multiply_accumulate"}, SubgroupSizes: []int{16, 32}})
	if len(pvc.MMA) != 2 || pvc.MMA[0].Engine != EngineDPAS || pvc.MMA[0].SubgroupSize != 16 || pvc.MMA[0].N != 16 {
		t.Errorf("PVC DPAS shapes: %+v", pvc.MMA)
	}
	if pocl5 := ForDevice(cases[1].dev); len(pocl5.MMA) != 0 {
		t.Errorf("a device without the DPAS extension got shapes %+v", pocl5.MMA)
	}
	if tg := ForDevice(Device{Name: "no fp64", Extensions: []string{"cl_khr_byte_addressable_store"}}); tg.F64 {
		t.Error("device without cl_khr_fp64 kept F64")
	}
}

func TestLacks(t *testing.T) {
	pocl3 := Device{Name: "pthread-skylake", Vendor: "GenuineIntel", Extensions: []string{"cl_khr_fp64"}}
	pocl5 := Device{Name: "PoCL 5 CPU", Vendor: "GenuineIntel", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp64"}}
	h200 := Device{Name: "NVIDIA H200", Vendor: "NVIDIA Corporation", Extensions: []string{"cl_khr_fp64"}}
	unknown := Device{Name: "unreported"}
	for _, c := range []struct {
		target string
		dev    Device
		want   string
	}{
		{"intel", pocl3, "cl_intel_subgroups"},
		{"intel", pocl5, ""},
		{"intel", h200, "cl_intel_subgroups"},
		{"intel", unknown, ""},
		{"nvidia", pocl3, ""},
		{"nvidia", h200, ""},
		{"generic", pocl3, ""},
		{"emulated", pocl3, ""},
		{"emulated-interleaved", pocl3, ""},
	} {
		tg, err := ByName(c.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.Lacks(c.dev); got != c.want {
			t.Errorf("%s on %s: lacks %q, want %q", c.target, c.dev.Name, got, c.want)
		}
	}
}

// TestDPASLayoutCoversBlocks: at each DPAS subgroup size, the lanes'
// elements of each operand cover its block exactly once.
func TestDPASLayoutCoversBlocks(t *testing.T) {
	for _, sgs := range []int{8, 16} {
		a, b, acc := DPASLayout(sgs)
		for name, f := range map[string]DPASFragment{"A": a, "B": b, "C": acc} {
			seen := map[[2]int]int{}
			for l := range sgs {
				for i := range f.Per {
					seen[[2]int{i / f.Width, f.Width*l + i%f.Width}]++
				}
			}
			for r := range f.Rows {
				for c := range f.Cols {
					if n := seen[[2]int{r, c}]; n != 1 {
						t.Errorf("subgroup size %d, %s: element (%d, %d) held %d times, want once", sgs, name, r, c, n)
					}
				}
			}
			if len(seen) != f.Rows*f.Cols {
				t.Errorf("subgroup size %d, %s: %d positions held, want the %d×%d block", sgs, name, len(seen), f.Rows, f.Cols)
			}
		}
	}
}
