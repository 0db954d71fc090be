package kernels

import (
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/tuning"
	"tltune/internal/golden"
)

// tuned is a full configuration, as the tuner would pass it.
var tuned = tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 32},
	Coopmatrix: [3]int{16, 8, 16}, Unroll: 2, BatchPerGroup: 4, StageLocal: true}

// The golden files pin the exact text of representative kernels: every op,
// both layouts, transposes, real and complex scalars, atomic, and both a
// full and an empty configuration.
func TestSourceGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		spec Spec
		p    tuning.Params
	}{
		{"gemm_nn_f16_f32_strided", Spec{Op: GEMMOp, M: 64, N: 64, K: 32, DType: F16, Acc: F32, Layout: Strided, Alpha: 1}, tuned},
		{"gemm_tt_f64_group_beta", Spec{Op: GEMMOp, M: 5, N: 7, K: 3, DType: F64, Acc: F64, TransA: true, TransB: true, Layout: Group, Alpha: 0.5, Beta: -2}, tuning.Params{}},
		{"gemm_nt_c32_c64_atomic", Spec{Op: GEMMOp, M: 16, N: 8, K: 4, DType: C32, Acc: C64, TransB: true, Layout: Strided, Alpha: 1 + 2i, Beta: 1, Atomic: true}, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}}},
		{"gemv_t_bf16_f32_group", Spec{Op: GEMVOp, M: 64, N: 128, DType: BF16, Acc: F32, TransA: true, Layout: Group, Alpha: 1, Beta: 1}, tuned},
		{"ger_f32_strided_atomic0", Spec{Op: GEROp, M: 64, N: 64, DType: F32, Acc: F32, Layout: Strided, Alpha: 2, Atomic: true}, tuning.Params{BatchPerGroup: 8}},
	} {
		t.Run(c.file, func(t *testing.T) {
			r, err := New(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Source(c.p)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", c.file+".ir"), []byte(got))
		})
	}
}

// variants enumerates every recipe kind the package can build at one small
// shape: op × dtype × acc × transposes × layout × alpha/beta kind.
func variants() []Spec {
	scalars := []struct {
		alpha, beta complex128
		atomic      bool
	}{{1, 0, false}, {1, 1, false}, {0.5, -1.5, false}, {1, 0, true}, {-1, 1, true}, {1 + 1i, 0.5 - 2i, false}}
	var out []Spec
	for _, op := range []Op{GEMMOp, GEMVOp, GEROp} {
		for _, d := range DTypes {
			for _, acc := range accTypes(d) {
				for ta := range 2 {
					for tb := range 2 {
						for _, layout := range []Layout{Strided, Group} {
							for _, sc := range scalars {
								s := Spec{Op: op, M: 7, N: 5, DType: d, Acc: acc, TransA: ta == 1, TransB: tb == 1,
									Layout: layout, Alpha: sc.alpha, Beta: sc.beta, Atomic: sc.atomic}
								if op == GEMMOp {
									s.K = 3
								}
								if s.Validate() == nil {
									out = append(out, s)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func TestSourceRejectsBadParams(t *testing.T) {
	s := Spec{Op: GEMMOp, M: 8, N: 8, K: 8, DType: F32, Acc: F32, Layout: Strided, Alpha: 1}
	for _, c := range []struct {
		p    tuning.Params
		want string
	}{
		{tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{24, 1}}, "a multiple of the subgroup size 16"},
		{tuning.Params{Tile: [2]int{8, 0}}, "tile [8 0] is partly unset"},
		{tuning.Params{Unroll: -1}, "unroll [-1] is negative"},
		{tuning.Params{VectorWidth: -4}, "vector_width [-4] is negative"},
	} {
		if _, err := s.source(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got error %v, want one containing %q", c.p, err, c.want)
		}
	}
}
