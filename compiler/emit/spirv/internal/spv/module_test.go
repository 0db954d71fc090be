package spv

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// kernelModule is a minimal kernel whose body the callers fill in.
func kernelModule(t *testing.T, body func(b *Builder)) (*Builder, string) {
	t.Helper()
	b := NewBuilder(0x10000)
	b.Capability(CapabilityAddresses)
	b.Capability(CapabilityKernel)
	void := b.Type(OpTypeVoid)
	fn, entry := b.NewID(), b.NewID()
	b.BeginFunction(fn, void, b.Type(OpTypeFunction, uint32(void)), nil, entry)
	body(b)
	b.Emit(OpReturn, 0)
	b.EndFunction()
	b.EntryPoint(ExecutionModelKernel, fn, "k", nil)
	text, err := Disassemble(b.Bytes(AddressingModelPhysical64, MemoryModelOpenCL))
	if err != nil {
		t.Fatal(err)
	}
	return b, text
}

func TestRequirementsFollowUse(t *testing.T) {
	b, text := kernelModule(t, func(b *Builder) {
		i32 := b.Type(OpTypeInt, 32, 0)
		f32 := b.Type(OpTypeFloat, 32)
		x := b.Constant(OpConstant, f32, math.Float32bits(1.5))
		lane := b.Constant(OpConstant, i32, 3)
		scope := b.Constant(OpConstant, i32, uint32(ScopeSubgroup))
		b.Emit(OpSubgroupShuffleINTEL, f32, uint32(x), uint32(lane))
		b.Emit(OpGroupFAdd, f32, uint32(scope), uint32(GroupOperationReduce), uint32(x))
	})
	caps := b.Capabilities()
	for _, want := range []Capability{CapabilitySubgroupShuffleINTEL, CapabilityGroups} {
		if !slices.Contains(caps, want) {
			t.Errorf("capabilities %v lack %v", caps, want)
		}
	}
	if !strings.Contains(text, `OpExtension "SPV_INTEL_subgroups"`) {
		t.Errorf("the INTEL shuffle needs its extension:\n%s", text)
	}
	// OpGroupFAdd is core since 1.0: the grammar's SPV_AMD_shader_ballot
	// entry must not turn into an OpExtension.
	if strings.Contains(text, "SPV_AMD") {
		t.Errorf("core instruction pulled in an extension:\n%s", text)
	}
	if !strings.HasPrefix(text, "; SPIR-V 1.0,") {
		t.Errorf("module needs SPIR-V 1.0 only:\n%s", text)
	}
}

func TestVersionAndImpliedCapabilities(t *testing.T) {
	b, text := kernelModule(t, func(b *Builder) {
		b.Capability(CapabilityFloat16Buffer) // implies Kernel, declared already
	})
	b.ExecutionMode(1, ExecutionModeSubgroupSize, 16) // SubgroupDispatch, SPIR-V 1.1
	caps := b.Capabilities()
	if !slices.Contains(caps, CapabilitySubgroupDispatch) {
		t.Errorf("SubgroupSize needs SubgroupDispatch: %v", caps)
	}
	if n := strings.Count(text, "OpCapability Kernel\n"); n != 1 {
		t.Errorf("Kernel declared %d times:\n%s", n, text)
	}
	if b.Version() != 0x10100 {
		t.Errorf("version %s, want 1.1", VersionString(b.Version()))
	}
}

// TestExplicitAlternative: a capability declared explicitly satisfies an
// instruction that accepts any of several, so the first is not added.
func TestExplicitAlternative(t *testing.T) {
	b, _ := kernelModule(t, func(b *Builder) {
		b.Capability(CapabilityAtomicFloat32AddEXT)
		f32 := b.Type(OpTypeFloat, 32)
		i32 := b.Type(OpTypeInt, 32, 0)
		ptr := b.Type(OpTypePointer, uint32(StorageClassCrossWorkgroup), uint32(f32))
		p := b.Constant(OpConstantNull, ptr)
		one := b.Constant(OpConstant, i32, 1)
		b.Emit(OpAtomicFAddEXT, f32, uint32(p), uint32(one), uint32(one), uint32(b.Constant(OpConstant, f32, 0)))
	})
	if caps := b.Capabilities(); slices.Contains(caps, CapabilityAtomicFloat16AddEXT) {
		t.Errorf("capabilities %v add the first alternative although one is declared", caps)
	}
}

func TestDisassembleLiterals(t *testing.T) {
	_, text := kernelModule(t, func(b *Builder) {
		f64 := b.Type(OpTypeFloat, 64)
		i64 := b.Type(OpTypeInt, 64, 0)
		bits := math.Float64bits(-0.25)
		b.Constant(OpConstant, f64, uint32(bits), uint32(bits>>32))
		b.Constant(OpConstant, i64, 5, 1) // 2^32 + 5
		ptr := b.Type(OpTypePointer, uint32(StorageClassCrossWorkgroup), uint32(i64))
		p := b.Constant(OpConstantNull, ptr)
		b.Emit(OpLoad, i64, uint32(p), uint32(MemoryAccessAligned), 8)
		b.Name(p, "some name")
	})
	for _, want := range []string{"OpConstant %5 -0.25", "4294967301", "Aligned 8", `OpName %10 "some name"`, "OpMemoryModel Physical64 OpenCL"} {
		if !strings.Contains(text, want) {
			t.Errorf("disassembly lacks %q:\n%s", want, text)
		}
	}
}

func TestDisassembleRejectsDamage(t *testing.T) {
	good := NewBuilder(0x10000).Bytes(AddressingModelPhysical64, MemoryModelOpenCL)
	bad := slices.Clone(good)
	binary.LittleEndian.PutUint32(bad, 0x12345678)
	truncated := append(slices.Clone(good), 0x00, 0x00, 0x09, 0x00) // length 9, no words behind
	for name, m := range map[string][]byte{"magic": bad, "odd size": good[:len(good)-1], "truncated": truncated} {
		if _, err := Disassemble(m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestImportFunction: an imported function is declared, with its linkage
// name and the Linkage capability, before the function that calls it
// (SPIR-V wants every declaration before the first definition).
func TestImportFunction(t *testing.T) {
	b, text := kernelModule(t, func(b *Builder) {
		f32 := b.Type(OpTypeFloat, 32)
		fnType := b.Type(OpTypeFunction, uint32(f32), uint32(f32))
		f := b.ImportFunction("_Z4halff", f32, fnType, []ID{f32})
		x := b.Constant(OpConstant, f32, math.Float32bits(1.5))
		b.Emit(OpFunctionCall, f32, uint32(f), uint32(x))
	})
	if !slices.Contains(b.Capabilities(), CapabilityLinkage) {
		t.Errorf("capabilities %v lack Linkage", b.Capabilities())
	}
	decl := strings.Index(text, "OpFunctionParameter")
	def := strings.Index(text, "OpLabel")
	if !strings.Contains(text, `LinkageAttributes "_Z4halff" Import`) || decl < 0 || def < decl {
		t.Errorf("want the import declared, with its linkage name, before the kernel:\n%s", text)
	}
}

// TestDisassembleHalf: 16-bit float constants print as spirv-as reads them
// back (TestDisassemblyReassembles in the back end assembles the golden
// modules): finite values in decimal, infinities and NaNs in hexadecimal.
func TestDisassembleHalf(t *testing.T) {
	for bits, want := range map[uint16]string{
		0x3e00: "1.5", 0x8000: "-0", 0x0001: "5.9604645e-08", 0x7bff: "65504",
		0x7c00: "0x1p+16", 0xfc00: "-0x1p+16", 0x7e00: "0x1.800p+16",
	} {
		if got := half(bits); got != want {
			t.Errorf("half(%#04x) = %s, want %s", bits, got, want)
		}
	}
}
