package speak

import "testing"

func TestProblemString(t *testing.T) {
	defaults := func(p Problem) Problem {
		p.Alpha, p.Beta, p.Layout = DefaultAlpha, DefaultBeta, DefaultLayout
		return p
	}
	for _, tt := range []struct {
		p    Problem
		want string
	}{
		{defaults(Problem{Op: "gemm", Trans: "nt", Dtype: "f16", Acc: "f16", M: 64, N: 64, K: 32}), "gemm.nt f16 64x64x32"},
		{defaults(Problem{Op: "gemm", Trans: "nn", Dtype: "f16", Acc: "f32", M: 64, N: 64, K: 32}), "gemm.nn f16/f32 64x64x32"},
		{defaults(Problem{Op: "gemv", Trans: "n", Dtype: "f32", Acc: "f32", M: 128, N: 256}), "gemv.n f32 128x256"},
		{Problem{Op: "ger", Dtype: "f64", Acc: "f64", M: 32, N: 32, Alpha: "0.5", Beta: "1", Layout: "group"}, "ger f64 32x32 alpha=0.5 beta=1 group"},
		{Problem{Op: "ger", Dtype: "c32", Acc: "c32", M: 8, N: 8, Alpha: "(1+2i)", Beta: "0", Atomic: true, Layout: "strided"}, "ger c32 8x8 alpha=(1+2i) atomic"},
		{Problem{Op: "gemm", Trans: "nn", Dtype: "f32", Acc: "f32", M: 64, N: 64, K: 64, Alpha: "1", Beta: "0", Layout: "group", Precision: TF32}, "gemm.nn f32 64x64x64 group tf32"},
		// The compiler's key of a kernel with dynamic sizes and β; a
		// version 1 tuning table's unknown scalars.
		{Problem{Op: "gemm", Trans: "nn", Dtype: "f32", Acc: "f32", M: 64, N: 0, K: 0, Alpha: "1", Beta: DynamicScalar}, "gemm.nn f32 64x?x? beta=?"},
		{Problem{Op: "gemv", Trans: "t", Dtype: "f32", Acc: "f32", M: 8, N: 8}, "gemv.t f32 8x8 alpha=? beta=?"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestFormatScalar(t *testing.T) {
	for z, want := range map[complex128]string{1: "1", 0: "0", -0.5: "-0.5", 1e-30: "1e-30", complex(1, 2): "(1+2i)", complex(0, -1): "(0-1i)"} {
		if got := FormatScalar(z); got != want {
			t.Errorf("FormatScalar(%v) = %q, want %q", z, got, want)
		}
	}
}
