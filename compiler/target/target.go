// Package target describes what the compiler may assume about a device: a
// capability profile (subgroup sizes, half precision, cooperative-matrix
// strategy, local memory), not a vendor switch. Three profiles exist —
// generic, intel and nvidia — chosen from a device's properties or forced by
// name.
package target

import (
	"fmt"
	"slices"
	"strings"
)

// Coopmatrix names how cooperative matrices are laid out and multiplied.
type Coopmatrix int

const (
	// CoopRegisters keeps a whole coopmatrix in every work-item's private
	// memory and multiplies with scalar FMAs (subgroup size 1).
	CoopRegisters Coopmatrix = iota
	// CoopBroadcast spreads rows over the lanes of a subgroup and broadcasts
	// the B operand with subgroup shuffles (outer-product mul_add).
	CoopBroadcast
)

func (c Coopmatrix) String() string {
	switch c {
	case CoopRegisters:
		return "registers per work-item"
	case CoopBroadcast:
		return "rows over lanes, B broadcast by subgroup shuffle"
	}
	return fmt.Sprintf("Coopmatrix(%d)", int(c))
}

// Shuffle names the mechanism that moves a value between lanes.
type Shuffle int

const (
	ShuffleNone  Shuffle = iota // subgroup size 1: nothing to move
	ShuffleIntel                // cl_intel_subgroups: sub_group_broadcast, intel_sub_group_shuffle
	ShufflePTX                  // inline PTX shfl.sync on NVIDIA OpenCL
	// ShuffleLocal exchanges values through local memory between two
	// barriers. Every work-item of the work-group takes part, so a target
	// using it runs one subgroup per work-group.
	ShuffleLocal
)

// Engine names a matrix engine the OpenCL C back end can call.
type Engine int

const (
	// EnginePTX is NVIDIA's mma.sync through inline PTX.
	EnginePTX Engine = iota + 1
	// EngineDPAS is Intel's DPAS through the builtins of
	// cl_intel_subgroup_matrix_multiply_accumulate.
	EngineDPAS
)

func (e Engine) String() string {
	switch e {
	case EnginePTX:
		return "mma.sync (PTX)"
	case EngineDPAS:
		return "DPAS (cl_intel_subgroup_matrix_multiply_accumulate)"
	}
	return fmt.Sprintf("Engine(%d)", int(e))
}

// Async names how async_copy is carried out.
type Async int

const (
	// AsyncNone copies synchronously: a load and a store when the copy is
	// issued (a valid implementation; nothing overlaps).
	AsyncNone Async = iota
	// AsyncPTX issues cp.async (sm_80 and newer) through inline PTX: the
	// copy bypasses the registers and completes while the work-item
	// computes; async_commit and async_wait map to commit_group and
	// wait_group.
	AsyncPTX
)

func (a Async) String() string {
	if a == AsyncPTX {
		return "cp.async (PTX)"
	}
	return "synchronous"
}

// DPASFragment is the layout of one operand of a DPAS block product in the
// lanes of a subgroup, as cl_intel_subgroup_matrix_multiply_accumulate's
// built-ins take and return it: a block is Rows × Cols, each lane holds Per
// of its elements, and element i of lane l is at row i/Width and column
// Width·l + i mod Width. The back ends hold the operands of the mul_adds
// DPAS executes in these layouts; both take them from here.
type DPASFragment struct{ Rows, Cols, Per, Width int }

// DPASLayout returns the fragment layouts of A (8×16), B (16×sgs) and the
// accumulator (8×sgs) at subgroup size sgs (8 or 16). A at 8 lanes packs
// two columns a lane: lane l holds columns 2l and 2l+1 of every row.
//
//	A 8×16, 16 lanes (8 per lane):  row i,   column l
//	A 8×16,  8 lanes (16 per lane): row i/2, column 2l + i mod 2
//	B 16×N (16 per lane):           row i,   column l
//	C 8×N  (8 per lane):            row i,   column l
func DPASLayout(sgs int) (a, b, acc DPASFragment) {
	a = DPASFragment{8, 16, 8, 1}
	if sgs == 8 {
		a = DPASFragment{8, 16, 16, 2}
	}
	return a, DPASFragment{16, sgs, 16, 1}, DPASFragment{8, sgs, 8, 1}
}

// MatrixShape is an M×N×K shape a matrix engine executes natively at one
// subgroup size, for inputs of type In accumulating into Acc.
type MatrixShape struct {
	Engine       Engine
	SubgroupSize int
	M, N, K      int
	In, Acc      string // tensor-language type names, e.g. "f16", "f32"
	// Emulated: the operands use the engine's fragment layout but the
	// product is computed through local memory (the emulated profile),
	// so the layout code runs where the engine does not exist.
	Emulated bool
}

// Target is one capability profile.
type Target struct {
	Name          string
	SubgroupSizes []int // supported subgroup sizes, ascending
	// DefaultSubgroupSize is used when neither an attribute nor the tuning
	// table chooses one.
	DefaultSubgroupSize int
	MaxWorkGroupSize    int
	LocalMemBytes       int
	NativeF16           bool // false: f16 lives in memory only (vload_half/vstore_half), arithmetic in f32
	F64                 bool
	Coopmatrix          Coopmatrix
	Shuffle             Shuffle
	// MMA lists the matrix-engine shapes the back ends may call (mma.sync
	// on nvidia, in OpenCL C; DPAS on Intel GPUs that list the extension,
	// in OpenCL C and SPIR-V). Empty: FMAs and shuffles only.
	MMA []MatrixShape
	// ReqdSubgroupSize: the kernel attribute intel_reqd_sub_group_size is
	// honoured and must be emitted to pin the subgroup size.
	ReqdSubgroupSize bool
	// OneSubgroupPerGroup: the work-group size must be [subgroup size, 1].
	OneSubgroupPerGroup bool
	// Async says how async_copy is carried out.
	Async Async
	// BlockedRows: a cooperative matrix outside the matrix engine's
	// fragments spreads its rows over the lanes in blocks (lane l holds
	// rows l·R to l·R+R-1, R rows a lane), so that a lane's rows of a
	// column-major matrix are one vector access; else interleaved (lane l
	// holds rows l, l+s, l+2s, ...), the layout the intel target keeps as
	// no Intel GPU measured the other.
	BlockedRows bool
	// TF32: f32 gemm products may round their inputs to tf32 on the
	// matrix engine (EnableTF32); tuning-table keys then carry precision
	// tf32.
	TF32 bool
}

// EnableTF32 lets f32 products use the matrix engine's tf32 inputs:
// mma.sync.m16n8k8 on nvidia (inputs rounded to tf32, f32 accumulation). It
// is only ever asked for (compiler.Options.Precision); other targets have no
// tf32 engine.
func (t *Target) EnableTF32() error {
	if t.Name != "nvidia" {
		return fmt.Errorf("precision tf32 needs the nvidia target (mma.sync m16n8k8); target %s has no tf32 matrix engine", t.Name)
	}
	t.TF32 = true
	for _, s := range t.MMA {
		if s.In == "f32" {
			return nil
		}
	}
	t.MMA = append(t.MMA, MatrixShape{Engine: EnginePTX, SubgroupSize: 32, M: 16, N: 8, K: 8, In: "f32", Acc: "f32"})
	return nil
}

// SupportsSubgroupSize reports whether sgs is a subgroup size of t.
func (t *Target) SupportsSubgroupSize(sgs int) bool {
	return slices.Contains(t.SubgroupSizes, sgs)
}

// Names lists the profiles in the order `--target` documents them.
func Names() []string {
	return []string{"generic", "intel", "nvidia", "emulated", "emulated-interleaved"}
}

// ByName returns a fresh copy of the named profile.
func ByName(name string) (*Target, error) {
	switch name {
	case "generic":
		return Generic(), nil
	case "intel":
		return Intel(), nil
	case "nvidia":
		return Nvidia(), nil
	case "emulated":
		return Emulated(), nil
	case "emulated-interleaved":
		return EmulatedInterleaved(), nil
	}
	return nil, fmt.Errorf("unknown target %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Generic is the portable OpenCL C 1.2 profile (PoCL 3.1 and any device
// without subgroup builtins): one work-item per subgroup.
func Generic() *Target {
	return &Target{
		Name:                "generic",
		SubgroupSizes:       []int{1},
		DefaultSubgroupSize: 1,
		MaxWorkGroupSize:    256,
		LocalMemBytes:       32 << 10,
		F64:                 true,
		Coopmatrix:          CoopRegisters,
		Shuffle:             ShuffleNone,
	}
}

// Intel is the profile of Intel Xe GPUs (and PoCL 5 with
// cl_intel_subgroups): subgroups of 8, 16 or 32 lanes with native f16.
func Intel() *Target {
	return &Target{
		Name:                "intel",
		SubgroupSizes:       []int{8, 16, 32},
		DefaultSubgroupSize: 16,
		MaxWorkGroupSize:    1024,
		LocalMemBytes:       64 << 10,
		NativeF16:           true,
		F64:                 true,
		Coopmatrix:          CoopBroadcast,
		Shuffle:             ShuffleIntel,
		ReqdSubgroupSize:    true,
	}
}

// Nvidia is the profile of NVIDIA OpenCL (OpenCL C 1.2 with inline PTX):
// subgroups of a warp's 32 lanes or of half a warp (16 lanes, whose
// shuffles stay within their half: shfl.sync segments), no cl_khr_fp16,
// mma.sync for f16 inputs on whole warps. Half-warps let a matrix of 16
// rows occupy every lane.
func Nvidia() *Target {
	return &Target{
		Name:                "nvidia",
		SubgroupSizes:       []int{16, 32},
		DefaultSubgroupSize: 32,
		MaxWorkGroupSize:    1024,
		LocalMemBytes:       48 << 10,
		F64:                 true,
		Coopmatrix:          CoopBroadcast,
		Shuffle:             ShufflePTX,
		Async:               AsyncPTX,
		BlockedRows:         true,
		MMA: []MatrixShape{
			{Engine: EnginePTX, SubgroupSize: 32, M: 16, N: 8, K: 16, In: "f16", Acc: "f32"},
			{Engine: EnginePTX, SubgroupSize: 32, M: 16, N: 8, K: 16, In: "bf16", Acc: "f32"},
		},
	}
}

// Emulated is a test profile for OpenCL devices without subgroup builtins
// (PoCL 3.1): subgroups of 4 to 32 lanes whose shuffles go through local
// memory, one subgroup per work-group, and the fragment layouts of mma.sync
// and DPAS with the products computed through local memory. It runs the
// code of the intel and nvidia targets where no GPU is at hand; it is slow
// by design and never chosen from a device.
func Emulated() *Target {
	return &Target{
		Name:                "emulated",
		SubgroupSizes:       []int{4, 8, 16, 32},
		DefaultSubgroupSize: 4,
		MaxWorkGroupSize:    32,
		LocalMemBytes:       32 << 10,
		F64:                 true,
		Coopmatrix:          CoopBroadcast,
		Shuffle:             ShuffleLocal,
		OneSubgroupPerGroup: true,
		BlockedRows:         true,
		MMA:                 emulatedEngines(),
	}
}

// EmulatedInterleaved is Emulated with the intel target's rows over lanes
// (interleaved, not blocked), so that PoCL runs that layout too.
func EmulatedInterleaved() *Target {
	t := Emulated()
	t.Name, t.BlockedRows = "emulated-interleaved", false
	return t
}

// HasSPIRV reports whether the SPIR-V back end writes this target: not
// where shuffles are inline PTX (nvidia) or local memory laid out by the
// OpenCL C back end (the emulated profiles).
func (t *Target) HasSPIRV() bool { return t.Shuffle == ShuffleNone || t.Shuffle == ShuffleIntel }

// emulatedEngines are the fragment layouts of mma.sync (32 lanes) and DPAS
// (8 and 16 lanes) for f16 and bf16 into f32, computed through local memory.
func emulatedEngines() []MatrixShape {
	var shapes []MatrixShape
	for _, in := range []string{"f16", "bf16"} {
		shapes = append(shapes,
			MatrixShape{Engine: EnginePTX, SubgroupSize: 32, M: 16, N: 8, K: 16, In: in, Acc: "f32", Emulated: true},
			MatrixShape{Engine: EngineDPAS, SubgroupSize: 8, M: 8, N: 8, K: 16, In: in, Acc: "f32", Emulated: true},
			MatrixShape{Engine: EngineDPAS, SubgroupSize: 16, M: 8, N: 16, K: 16, In: in, Acc: "f32", Emulated: true})
	}
	return shapes
}

// Device is what the compiler needs to know about a device to pick a
// profile; the runtime fills it from its queries.
type Device struct {
	Name       string
	Vendor     string
	Extensions []string // OpenCL extension names
	// SubgroupSizes reported by the device (empty when it has no subgroups).
	SubgroupSizes    []int
	MaxWorkGroupSize int
	LocalMemBytes    int
}

func (d Device) has(ext string) bool { return slices.Contains(d.Extensions, ext) }

// Lacks names what the OpenCL device d lacks to run code for t, or "" where
// nothing is known to be missing: the intel target's shuffles need
// cl_intel_subgroups (without it every build fails). A device that reports
// no extensions is not held to it. (The nvidia target's code builds on
// other OpenCL devices, if not correctly: a way to exercise tf32 there.)
func (t *Target) Lacks(d Device) string {
	if t.Shuffle == ShuffleIntel && len(d.Extensions) > 0 && !d.has("cl_intel_subgroups") {
		return "cl_intel_subgroups"
	}
	return ""
}

// ForDevice picks the profile for d and narrows it to what d reports.
// cl_intel_subgroups selects intel, an NVIDIA vendor string selects nvidia,
// everything else is generic.
func ForDevice(d Device) *Target {
	var t *Target
	switch {
	case d.has("cl_intel_subgroups"):
		t = Intel()
		if sizes := intersect(t.SubgroupSizes, d.SubgroupSizes); len(sizes) > 0 {
			t.SubgroupSizes = sizes
			if !slices.Contains(sizes, t.DefaultSubgroupSize) {
				t.DefaultSubgroupSize = sizes[0]
			}
		}
		t.NativeF16 = d.has("cl_khr_fp16")
		t.MMA = dpasShapes(d)
	case strings.Contains(strings.ToLower(d.Vendor), "nvidia"):
		t = Nvidia()
	default:
		t = Generic()
	}
	t.F64 = t.F64 && (len(d.Extensions) == 0 || d.has("cl_khr_fp64"))
	if d.MaxWorkGroupSize > 0 {
		t.MaxWorkGroupSize = min(t.MaxWorkGroupSize, d.MaxWorkGroupSize)
	}
	if d.LocalMemBytes > 0 {
		t.LocalMemBytes = min(t.LocalMemBytes, d.LocalMemBytes)
	}
	return t
}

// dpasShapes are the DPAS shapes of a device with
// cl_intel_subgroup_matrix_multiply_accumulate: M = 8 rows, N = K = 16
// f16/bf16 into f32, at the device's minimum subgroup size (8 or 16), which
// the extension requires and which is N.
func dpasShapes(d Device) []MatrixShape {
	if !d.has("cl_intel_subgroup_matrix_multiply_accumulate") || len(d.SubgroupSizes) == 0 {
		return nil
	}
	sgs := slices.Min(d.SubgroupSizes)
	if sgs != 8 && sgs != 16 {
		return nil
	}
	var shapes []MatrixShape
	for _, in := range []string{"f16", "bf16"} {
		shapes = append(shapes, MatrixShape{Engine: EngineDPAS, SubgroupSize: sgs, M: 8, N: sgs, K: 16, In: in, Acc: "f32"})
	}
	return shapes
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
