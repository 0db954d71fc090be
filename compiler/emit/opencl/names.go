package opencl

import (
	"strings"
)

// Kernel names. A tensor-language function name is any identifier of the
// language (letters, digits, '_', or only digits), so it may be an OpenCL
// C keyword (`kernel`, `half`), a builtin function (`clamp`, `min`, `dot`:
// OpenCL C declares builtins overloadable, so a kernel of that name is
// mangled and clCreateKernel does not find it), a predefined macro, `main`
// or a number. Such a kernel keeps its name for the host (Kernel.Name) and
// is called reservedPrefix+name in the OpenCL C program (Kernel.Symbol);
// every other kernel is called by its own name, so a host written for
// tinytc finds it.

// reservedPrefix starts the program names of renamed kernels and of the
// back end's own helpers and types; a source name with it is renamed too,
// so renamed kernels never collide with each other or with helpers.
const reservedPrefix = "tl_"

// KernelSymbol is the name of the kernel for function name in OpenCL C:
// name itself unless OpenCL C reserves it, else "tl_kernel_" + name.
func KernelSymbol(name string) string {
	if ReservedInOpenCLC(name) {
		return reservedPrefix + "kernel_" + name
	}
	return name
}

// ReservedInOpenCLC reports whether name cannot be the name of a kernel in
// OpenCL C: a keyword or type name, a builtin function, a predefined macro,
// main, not an identifier, or a name of the back end's own.
func ReservedInOpenCLC(name string) bool {
	if name == "" || !isIdent(name) || reservedWords[name] {
		return true
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return vectorTypeName(name)
}

// reservedPrefixes are the families of builtin functions and macros that
// share a prefix (conversions, reinterpretations, vector loads and stores,
// atomics, work-item functions, subgroup and vendor extensions, image
// functions, limits and math constants), and the back end's own prefix.
var reservedPrefixes = []string{
	reservedPrefix, "__",
	"as_", "convert_", "vload", "vstore", "atom_", "atomic_", "get_", "sub_group_", "work_group_",
	"async_work_group_", "read_image", "write_image", "native_", "half_", "intel_", "amd_", "arm_",
	"cl_", "CL_", "CLK_", "FLT_", "DBL_", "HALF_", "M_", "FP_",
	"read_pipe", "write_pipe", "reserve_", "commit_", "to_", "enqueue_",
}

// vectorTypeName reports whether name is a vector type such as float4 or
// uchar16.
func vectorTypeName(name string) bool {
	for _, base := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half", "bool"} {
		if rest, ok := strings.CutPrefix(name, base); ok {
			switch rest {
			case "2", "3", "4", "8", "16":
				return true
			}
		}
	}
	return false
}

// reservedWords are the keywords, type names, qualifiers and macros of
// OpenCL C (C99's with OpenCL's), main, and the builtin functions outside
// the families of reservedPrefixes (the list is checked against clang's
// opencl-c.h by the tests).
var reservedWords = setOf(
	// C99 keywords and main.
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
	"extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
	"volatile", "while", "main", "true", "false",
	// OpenCL C qualifiers, types and operators.
	"global", "local", "constant", "private", "generic", "kernel", "read_only", "write_only",
	"read_write", "uniform", "pipe", "bool", "half", "quad", "uchar", "ushort", "uint", "ulong",
	"size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "image1d_t", "image2d_t", "image3d_t",
	"image1d_array_t", "image2d_array_t", "image1d_buffer_t", "image2d_depth_t",
	"image2d_array_depth_t", "image2d_msaa_t", "image2d_array_msaa_t", "image2d_msaa_depth_t",
	"image2d_array_msaa_depth_t", "sampler_t", "event_t", "queue_t", "clk_event_t", "ndrange_t",
	"reserve_id_t", "cl_mem_fence_flags", "memory_order", "memory_scope", "clk_profiling_info",
	"kernel_enqueue_flags_t", "vec_step", "vec_type_hint", "kernel_exec", "printf",
	// Macros outside the prefixed families.
	"MAXFLOAT", "HUGE_VAL", "HUGE_VALF", "INFINITY", "NAN", "NULL", "CHAR_BIT", "CHAR_MAX", "CHAR_MIN",
	"INT_MAX", "INT_MIN", "LONG_MAX", "LONG_MIN", "SCHAR_MAX", "SCHAR_MIN", "SHRT_MAX", "SHRT_MIN",
	"UCHAR_MAX", "UINT_MAX", "ULONG_MAX", "USHRT_MAX", "MAX_WORK_DIM", "ATOMIC_FLAG_INIT",
	"ATOMIC_VAR_INIT", "EMBEDDED_PROFILE",
	// Builtin functions.
	"abs", "abs_diff", "acos", "acosh", "acospi", "add_sat", "all", "any", "asin", "asinh", "asinpi",
	"atan", "atan2", "atan2pi", "atanh", "atanpi", "barrier", "bit_reverse", "bitfield_extract_signed",
	"bitfield_extract_unsigned", "bitfield_insert", "bitselect", "capture_event_profiling_info", "cbrt",
	"ceil", "clamp", "clz", "copysign", "cos", "cosh", "cospi", "create_user_event", "cross", "ctz",
	"degrees", "distance", "dot", "dot_4x8packed_ss_int", "dot_4x8packed_su_int",
	"dot_4x8packed_us_int", "dot_4x8packed_uu_uint", "dot_acc_sat", "dot_acc_sat_4x8packed_ss_int",
	"dot_acc_sat_4x8packed_su_int", "dot_acc_sat_4x8packed_us_int", "dot_acc_sat_4x8packed_uu_uint",
	"enqueue_marker", "erf", "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "fast_distance",
	"fast_length", "fast_normalize", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "fract", "frexp",
	"hadd", "hypot", "ilogb", "is_valid_reserve_id", "isequal", "isfinite", "isgreater",
	"isgreaterequal", "isinf", "isless", "islessequal", "islessgreater", "isnan", "isnormal",
	"isnotequal", "isordered", "isunordered", "ldexp", "length", "lgamma", "lgamma_r", "log", "log10",
	"log1p", "log2", "logb", "mad", "mad24", "mad_hi", "mad_sat", "max", "maxmag", "mem_fence", "min",
	"minmag", "mix", "modf", "mul24", "mul_hi", "nan", "ndrange_1D", "ndrange_2D", "ndrange_3D",
	"nextafter", "normalize", "popcount", "pow", "pown", "powr", "prefetch", "radians",
	"read_mem_fence", "release_event", "remainder", "remquo", "retain_event", "rhadd", "rint", "rootn",
	"rotate", "round", "rsqrt", "select", "set_user_event_status", "shuffle", "shuffle2", "sign",
	"signbit", "sin", "sincos", "sinh", "sinpi", "smoothstep", "sqrt", "step", "sub_sat", "tan", "tanh",
	"tanpi", "tgamma", "trunc", "upsample", "wait_group_events", "write_mem_fence",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
