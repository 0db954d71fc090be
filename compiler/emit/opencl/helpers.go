package opencl

import (
	"fmt"
	"sync"
)

// helperSet collects the support functions a kernel calls, so the preamble
// holds only those. They are written in the order they were first needed;
// a helper adds its own dependencies before itself.
type helperSet struct {
	list declarations
}

// add adds helper name with source src, unless it was added before.
func (h *helperSet) add(name, src string) string {
	h.list.add(named{name, src})
	return name
}

// define adds helper name, whose source src formats, unless it was added
// before: the instructions that call a helper ask for it every time. The
// name of a helper added this way spells its source, which is formatted
// once for all programs (helperSources).
func (h *helperSet) define(name string, src func() string) string {
	if !h.list.has(name) {
		h.list = append(h.list, named{name, spelledOnce(&helperSources, name, src)})
	}
	return name
}

// helperSources caches the sources of the helpers define adds, by name:
// formatted per program, they were a twentieth of writing a pipelined
// GEMM.
var helperSources sync.Map // name → source

func (h *helperSet) write(b *code) {
	for _, d := range h.list {
		b.WriteString(d.text)
		b.WriteString("\n")
	}
}

// suffix is the short name of a real C type used in helper names.
func suffix(real string) string {
	if real == "double" {
		return "d"
	}
	return "f"
}

// cmul returns the helper multiplying two complex numbers of C type c2.
func (h *helperSet) cmul(c2 string) string {
	r := realOf(c2)
	name := "tl_cmul_" + suffix(r)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline %[1]s %[2]s(%[1]s a, %[1]s b) {
    return (%[1]s)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}`, c2, name)
	})
}

// cdiv returns the helper dividing two complex numbers.
func (h *helperSet) cdiv(c2 string) string {
	r := realOf(c2)
	name := "tl_cdiv_" + suffix(r)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline %[1]s %[2]s(%[1]s a, %[1]s b) {
    %[3]s d = b.x * b.x + b.y * b.y;
    return (%[1]s)((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);
}`, c2, name, r)
	})
}

// cexp returns the complex exponential helper.
func (h *helperSet) cexp(c2 string) string {
	r := realOf(c2)
	name := "tl_cexp_" + suffix(r)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline %[1]s %[2]s(%[1]s a) {
    %[3]s m = exp(a.x);
    return (%[1]s)(m * cos(a.y), m * sin(a.y));
}`, c2, name, r)
	})
}

// atomicAddReal returns a helper that adds v to *p atomically for a real
// type. OpenCL 1.2 has no floating-point atomic add, so floats use a
// compare-and-swap loop on the bit pattern.
func (h *helperSet) atomicAddReal(real, space string) string {
	name := "tl_atomic_add_" + suffix(real) + "_" + space
	if real == "double" {
		return h.define(name, func() string {
			return fmt.Sprintf(`static inline void %[1]s(volatile %[2]s double* p, double v) {
    volatile %[2]s long* q = (volatile %[2]s long*)p;
    long old = *q, assumed;
    do {
        assumed = old;
        old = atom_cmpxchg(q, assumed, as_long(as_double(assumed) + v));
    } while (old != assumed);
}`, name, space)
		})
	}
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline void %[1]s(volatile %[2]s float* p, float v) {
    volatile %[2]s int* q = (volatile %[2]s int*)p;
    int old = *q, assumed;
    do {
        assumed = old;
        old = atomic_cmpxchg(q, assumed, as_int(as_float(assumed) + v));
    } while (old != assumed);
}`, name, space)
	})
}

// atomicStoreReal returns a helper storing v to *p atomically.
func (h *helperSet) atomicStoreReal(real, space string) string {
	name := "tl_atomic_store_" + suffix(real) + "_" + space
	if real == "double" {
		return h.define(name, func() string {
			return fmt.Sprintf(`static inline void %[1]s(volatile %[2]s double* p, double v) {
    atom_xchg((volatile %[2]s long*)p, as_long(v));
}`, name, space)
		})
	}
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline void %[1]s(volatile %[2]s float* p, float v) {
    atomic_xchg((volatile %[2]s int*)p, as_int(v));
}`, name, space)
	})
}

// bf16 conversions: bfloat16 is the upper half of an IEEE f32.
func (h *helperSet) bf16Load() string {
	return h.add("tl_bf16_to_f32", `static inline float tl_bf16_to_f32(ushort x) { return as_float(((uint)x) << 16); }`)
}

func (h *helperSet) bf16Store() string {
	return h.add("tl_f32_to_bf16", `static inline ushort tl_f32_to_bf16(float x) {
    uint u = as_uint(x);
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* round to nearest even */
}`)
}
