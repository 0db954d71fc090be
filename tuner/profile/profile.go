// Package profile owns device profiles: the static facts about a device that
// the tuner needs before anything is compiled (subgroup sizes, work-group and
// local-memory limits, a register budget, the matrix instructions per element
// type), read from configs/devices/*.toml.
//
// A profile is a starting point, not the truth: where the runtime can query a
// value (local memory, maximum work-group size, subgroup sizes), the caller
// overwrites the profile's field with the queried one before pruning.
package profile

import (
	"fmt"
	"io/fs"
	"iter"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"tltune/compiler/target"
	"tltune/configs"
)

// Target names the code-generation target of DESIGN.md §3.
type Target string

// The targets the compiler knows.
const (
	Generic Target = "generic"
	Intel   Target = "intel"
	NVIDIA  Target = "nvidia"
)

// Profile is one device family.
type Profile struct {
	File   string   `toml:"-"`     // the file it was read from, for messages
	Name   string   `toml:"name"`  // display name of the family
	Match  []string `toml:"match"` // case-insensitive glob patterns on the runtime's device name
	Vendor string   `toml:"vendor"`
	Target Target   `toml:"target"`

	SubgroupSizes    []int `toml:"subgroup_sizes"`
	MaxWorkGroupSize int   `toml:"max_work_group_size"`
	// OneSubgroupPerGroup: the target runs one subgroup per work-group (a
	// work-group of [subgroup size, 1]); set for targets that exchange
	// values through local memory, never in a shipped file.
	OneSubgroupPerGroup bool `toml:"-"`
	// LocalMemoryBytes is the local (shared) memory a work-group may use;
	// 0 means unknown, and the local-memory rule is then not applied.
	LocalMemoryBytes int `toml:"local_memory_bytes"`
	// RegisterBytesPerSubgroup estimates the register file one subgroup can
	// use without spilling; a subgroup of sg lanes has this/sg bytes per lane.
	// 0 means unknown, and the register rule is then not applied.
	RegisterBytesPerSubgroup int `toml:"register_bytes_per_subgroup"`

	// ComputeUnits is the device's number of compute units (OpenCL's
	// CL_DEVICE_MAX_COMPUTE_UNITS), taken from the device; 0 when unknown,
	// and the rules that weigh the batch against it are then not applied.
	ComputeUnits int `toml:"-"`

	// CacheBytes is the last-level device cache (L2/LLC), for batch sizing.
	CacheBytes int64 `toml:"cache_bytes"`
	// Peak hints, 0 when not given; measured ceilings win when there are any.
	PeakBandwidthGBs float64            `toml:"peak_bandwidth_gbs"`
	PeakGFLOPs       map[string]float64 `toml:"peak_gflops"` // by input dtype

	// Matrix lists the matrix-multiply instructions the target lowers a
	// coopmatrix to, per input dtype. A dtype with no entry is lowered by
	// scalar FMAs (any shape).
	Matrix []Matrix `toml:"matrix"`
}

// Matrix is one family of matrix instructions: for the listed input dtypes,
// a subgroup of SubgroupSize lanes computes an M×N += (M×K)·(K×N) product for
// any M in the list. A coopmatrix is supported when it is a grid of such
// instructions.
type Matrix struct {
	Kind         string   `toml:"kind"` // "dpas", "mma"
	Dtypes       []string `toml:"dtypes"`
	SubgroupSize int      `toml:"subgroup_size"`
	M            []int    `toml:"m"`
	N            int      `toml:"n"`
	K            int      `toml:"k"`
}

// Fits reports whether a cm×cn×ck coopmatrix on subgroups of sg lanes is a
// grid of this instruction.
func (x Matrix) Fits(sg, cm, cn, ck int) bool {
	if sg != x.SubgroupSize || cn%x.N != 0 || ck%x.K != 0 {
		return false
	}
	for _, m := range x.M {
		if cm%m == 0 {
			return true
		}
	}
	return false
}

// MatrixFor yields the matrix instructions listed for dtype. An iterator,
// not a slice: the pruner asks once per configuration of a space, and a
// slice each was a fifth of what pruning allocated.
func (p *Profile) MatrixFor(dtype string) iter.Seq[Matrix] {
	return func(yield func(Matrix) bool) {
		for _, x := range p.Matrix {
			if slices.Contains(x.Dtypes, dtype) && !yield(x) {
				return
			}
		}
	}
}

// Matches reports whether the runtime device name belongs to this profile.
func (p *Profile) Matches(deviceName string) bool {
	name := strings.ToLower(deviceName)
	for _, pat := range p.Match {
		if ok, _ := path.Match(strings.ToLower(pat), name); ok {
			return true
		}
	}
	return false
}

// Set is every profile, in file-name order.
type Set []*Profile

// Lookup returns the first profile that matches deviceName.
func (s Set) Lookup(deviceName string) (*Profile, bool) {
	for _, p := range s {
		if p.Matches(deviceName) {
			return p, true
		}
	}
	return nil, false
}

// TargetDevice describes a device of p named name to the compiler as its
// runtime would (devcall.TargetDevice), for compiling without the device:
// ahead of time for a tuned device, or in a benchmark. It has p's subgroup
// sizes and limits and, for an intel profile, the extensions the intel
// target's code uses: subgroups, half, double and, where p lists DPAS,
// cl_intel_subgroup_matrix_multiply_accumulate. Other targets are known by
// their vendor.
func (p *Profile) TargetDevice(name string) *target.Device {
	d := &target.Device{Name: name, Vendor: p.Vendor, SubgroupSizes: p.SubgroupSizes,
		MaxWorkGroupSize: p.MaxWorkGroupSize, LocalMemBytes: p.LocalMemoryBytes}
	if p.Target != Intel {
		return d
	}
	d.Extensions = []string{"cl_intel_subgroups", "cl_khr_fp16", "cl_khr_fp64"}
	if slices.ContainsFunc(p.Matrix, func(m Matrix) bool { return m.Kind == "dpas" }) {
		d.Extensions = append(d.Extensions, "cl_intel_subgroup_matrix_multiply_accumulate")
	}
	return d
}

// Load reads every *.toml under dir of fsys (configs.FS and "devices" for
// the shipped profiles).
func Load(fsys fs.FS, dir string) (Set, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.toml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var set Set
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		p, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		set = append(set, p)
	}
	return set, nil
}

// Parse decodes one profile strictly: an unknown key is an error that names
// it, so a typo cannot silently disable a constraint.
func Parse(file string, data []byte) (*Profile, error) {
	var p Profile
	md, err := toml.Decode(string(data), &p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unknown key %q", file, und[0].String())
	}
	p.File = file
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &p, nil
}

func (p *Profile) validate() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("missing name")
	case len(p.Match) == 0:
		return fmt.Errorf("missing match patterns")
	case p.Target != Generic && p.Target != Intel && p.Target != NVIDIA:
		return fmt.Errorf("target %q is not one of generic, intel, nvidia", p.Target)
	case len(p.SubgroupSizes) == 0:
		return fmt.Errorf("missing subgroup_sizes")
	case p.MaxWorkGroupSize <= 0:
		return fmt.Errorf("max_work_group_size must be positive")
	}
	for _, pat := range p.Match {
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("match pattern %q: %v", pat, err)
		}
	}
	for i, x := range p.Matrix {
		if x.N <= 0 || x.K <= 0 || len(x.M) == 0 || slices.Min(x.M) <= 0 || len(x.Dtypes) == 0 {
			return fmt.Errorf("matrix[%d]: needs dtypes, positive m, n and k", i)
		}
		if !slices.Contains(p.SubgroupSizes, x.SubgroupSize) {
			return fmt.Errorf("matrix[%d]: subgroup_size %d is not in subgroup_sizes", i, x.SubgroupSize)
		}
	}
	return nil
}

// Shipped returns the profiles shipped in configs/devices.
func Shipped() (Set, error) { return Load(configs.FS, "devices") }
