package spirv

import (
	"fmt"
	"math"

	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// Types and constants. A scalar tensor-language type has three SPIR-V
// views, as in docs/abi.md: its register type (what instructions compute
// with), its memory type (the pointee of a memref pointer) and its argument
// type. They differ for bool (argument i32, memory i8), f16 on targets
// without native half (register and argument f32, memory half) and bf16
// (register and argument f32, memory i16).

func (u *unit) void() spv.ID { return u.b.Type(spv.OpTypeVoid) }
func (u *unit) boolT() spv.ID {
	if u.boolID == 0 {
		u.boolID = u.b.Type(spv.OpTypeBool)
	}
	return u.boolID
}

// intT and floatT are the scalar types of a width; the ids are cached
// because index arithmetic asks for them all the time.
func (u *unit) intT(bits int) spv.ID {
	slot := &u.ints[bits/16]
	if *slot == 0 {
		switch bits {
		case 8:
			u.b.Capability(spv.CapabilityInt8)
		case 16:
			u.b.Capability(spv.CapabilityInt16)
		}
		*slot = u.b.Type(spv.OpTypeInt, uint32(bits), 0) // OpenCL: signedness 0
	}
	return *slot
}

func (u *unit) floatT(bits int) spv.ID {
	slot := &u.floats[bits/32]
	if *slot == 0 {
		switch bits {
		case 16:
			u.b.Capability(spv.CapabilityFloat16)
		case 64:
			u.b.Capability(spv.CapabilityFloat64)
		}
		*slot = u.b.Type(spv.OpTypeFloat, uint32(bits))
	}
	return *slot
}

// halfBuffer is the half type on targets that only load and store it.
func (u *unit) halfBuffer() spv.ID {
	u.b.Capability(spv.CapabilityFloat16Buffer)
	return u.b.Type(spv.OpTypeFloat, 16)
}

func (u *unit) vec(elem spv.ID, n int) spv.ID {
	if n > 4 {
		u.b.Capability(spv.CapabilityVector16)
	}
	return u.b.Type(spv.OpTypeVector, uint32(elem), uint32(n))
}

func (u *unit) ptr(sc spv.StorageClass, elem spv.ID) spv.ID {
	return u.b.Type(spv.OpTypePointer, uint32(sc), uint32(elem))
}

// reg is the register type of a scalar or bool type. The ids are cached
// by kind: unrolled coopmatrix arithmetic asks for every element.
func (u *unit) reg(t *ir.Type) spv.ID {
	if k := t.Kind(); int(k) < len(u.regs) {
		if id := u.regs[k]; id != 0 {
			return id
		}
		u.regs[k] = u.makeReg(t)
		return u.regs[k]
	}
	return u.makeReg(t)
}

func (u *unit) makeReg(t *ir.Type) spv.ID {
	switch k := t.Kind(); {
	case k == ir.KindBool:
		return u.boolT()
	case t.IsInteger():
		return u.intT(t.Bits())
	case k == ir.KindF16 && u.target.NativeF16:
		return u.floatT(16)
	case k == ir.KindF16 || k == ir.KindBF16 || k == ir.KindF32:
		return u.floatT(32)
	case k == ir.KindF64:
		return u.floatT(64)
	case t.IsComplex():
		return u.vec(u.reg(t.ComponentType()), 2)
	}
	panic(fmt.Sprintf("spirv: no register type for %s", t))
}

// mem is the memory (pointee) type of a scalar type.
func (u *unit) mem(t *ir.Type) spv.ID {
	switch t.Kind() {
	case ir.KindBool:
		return u.intT(8)
	case ir.KindF16:
		if !u.target.NativeF16 {
			return u.halfBuffer()
		}
	case ir.KindBF16:
		return u.intT(16)
	}
	return u.reg(t)
}

// arg is the kernel-argument type of a scalar type.
func (u *unit) arg(t *ir.Type) spv.ID {
	if t.Kind() == ir.KindBool {
		return u.intT(32)
	}
	return u.reg(t)
}

// halfway reports whether t lives in memory as half but is computed in f32.
func (u *unit) halfway(t *ir.Type) bool { return t.Kind() == ir.KindF16 && !u.target.NativeF16 }

// i64 is an index constant; index arithmetic makes many, so they have their
// own cache.
func (u *unit) i64(v int64) spv.ID {
	if 0 <= v && v < int64(len(u.smallI64)) {
		return cachedConst(&u.smallI64[v], func() spv.ID { return u.constInt(64, v) })
	}
	id, ok := u.i64s[v]
	if !ok {
		id = u.constInt(64, v)
		u.i64s[v] = id
	}
	return id
}

func (u *unit) i32(v int64) spv.ID {
	if 0 <= v && v < int64(len(u.smallI32)) {
		return cachedConst(&u.smallI32[v], func() spv.ID { return u.constInt(32, v) })
	}
	return u.constInt(32, v)
}

// cachedConst is *slot, made by mk on first use.
func cachedConst(slot *spv.ID, mk func() spv.ID) spv.ID {
	if *slot == 0 {
		*slot = mk()
	}
	return *slot
}

func (u *unit) constInt(bits int, v int64) spv.ID {
	t := u.intT(bits)
	if bits == 64 {
		return u.b.Constant(spv.OpConstant, t, uint32(v), uint32(uint64(v)>>32))
	}
	return u.b.Constant(spv.OpConstant, t, uint32(v)&uint32(1<<bits-1))
}

func (u *unit) constBool(v bool) spv.ID {
	if v {
		return u.b.Constant(spv.OpConstantTrue, u.boolT())
	}
	return u.b.Constant(spv.OpConstantFalse, u.boolT())
}

// constFloat is f in the register type of float type t.
func (u *unit) constFloat(t *ir.Type, f float64) spv.ID {
	rt := u.reg(t)
	switch {
	case t.Kind() == ir.KindF64:
		bits := math.Float64bits(f)
		return u.b.Constant(spv.OpConstant, rt, uint32(bits), uint32(bits>>32))
	case t.Kind() == ir.KindF16 && u.target.NativeF16:
		return u.b.Constant(spv.OpConstant, rt, uint32(f32ToF16(float32(f))))
	case t.Kind() == ir.KindF16:
		f = float64(f16ToF32(f32ToF16(float32(f)))) // the value the type can hold
	case t.Kind() == ir.KindBF16:
		f = float64(math.Float32frombits(uint32(bf16Round(math.Float32bits(float32(f)))) << 16))
	}
	return u.b.Constant(spv.OpConstant, rt, math.Float32bits(float32(f)))
}

// constant is the register value of literal c of scalar or bool type t.
func (u *unit) constant(c ir.Constant, t *ir.Type) spv.ID {
	switch {
	case t.Kind() == ir.KindBool:
		return u.constBool(c.Bool)
	case t.IsInteger():
		return u.constInt(t.Bits(), c.Int)
	}
	re, im := c.Float, c.Imag
	if c.Kind == ir.ConstInt {
		re = float64(c.Int)
	}
	if !t.IsComplex() {
		return u.constFloat(t, re)
	}
	ct := t.ComponentType()
	return u.b.Constant(spv.OpConstantComposite, u.reg(t), uint32(u.constFloat(ct, re)), uint32(u.constFloat(ct, im)))
}

func (u *unit) zero(t *ir.Type) spv.ID {
	id, ok := u.zeros[t] // every guarded element load asks
	if !ok {
		id = u.constant(ir.Constant{Kind: ir.ConstInt}, t)
		u.zeros[t] = id
	}
	return id
}

// bf16Round rounds the bits of an f32 to bfloat16, nearest even, as the
// OpenCL C back end's tl_f32_to_bf16.
func bf16Round(b uint32) uint16 { return uint16((b + 0x7fff + (b>>16)&1) >> 16) }

// f32ToF16 rounds to IEEE half, nearest even.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		half := man >> shift
		rem := man & (1<<shift - 1)
		if rem > 1<<(shift-1) || rem == 1<<(shift-1) && half&1 == 1 {
			half++
		}
		return sign | uint16(half)
	}
	h := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(h)
}

func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h >> 10 & 0x1f)
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		return math.Float32frombits(sign) + float32(man)*float32(math.Ldexp(1, -24))*sign1(sign)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

func sign1(sign uint32) float32 {
	if sign != 0 {
		return -1
	}
	return 1
}
