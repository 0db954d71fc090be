package ptx_test

import (
	"fmt"
	"testing"

	"tltune/compiler"
	"tltune/kernels"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/space"
)

// h100 is the shipped profile whose pruned spaces the tests sample.
const h100 = "NVIDIA H100 80GB HBM3"

// problem is a GEMV, GER or GEMM shape the tests compile configurations
// of; trans transposes A (GEMV, GEMM), transB B (GEMM).
type problem struct {
	op            kernels.Op
	dtype         kernels.DType
	trans, transB bool
	m, n, k       int
}

func (p problem) String() string {
	s := fmt.Sprintf("%s-%s-%dx%d", p.op, p.dtype, p.m, p.n)
	if p.op == kernels.GEMMOp {
		s += fmt.Sprintf("x%d", p.k)
	}
	if p.trans {
		s += "-t"
	}
	if p.transB {
		s += "-tb"
	}
	return s
}

// gemms are GEMM problems m×n×k of the dtypes, A and B transposed or not.
func gemms(m, n, k int, dtypes ...kernels.DType) []problem {
	var ps []problem
	for _, dt := range dtypes {
		ps = append(ps, problem{op: kernels.GEMMOp, dtype: dt, m: m, n: n, k: k},
			problem{op: kernels.GEMMOp, dtype: dt, trans: true, transB: true, m: m, n: n, k: k})
	}
	return ps
}

// problems are gemv (both transposes) and ger of every dtype, m×n.
func problems(m, n int, dtypes ...kernels.DType) []problem {
	var ps []problem
	for _, dt := range dtypes {
		ps = append(ps, problem{op: kernels.GEMVOp, dtype: dt, m: m, n: n},
			problem{op: kernels.GEMVOp, dtype: dt, trans: true, m: m, n: n}, problem{op: kernels.GEROp, dtype: dt, m: m, n: n})
	}
	return ps
}

// sample is one configuration's source.
type sample struct {
	name string
	src  []byte
}

// sampled returns count configurations of p's shipped space that the
// pruner keeps on the shipped H100 profile, evenly spaced through the
// kept ones (as tuner's spaceSources picks them), half with β = 0 (the
// tuner's problems) and half with β = 0.5 (C read too).
func sampled(t testing.TB, p problem, count int) ([]sample, compiler.Options) {
	t.Helper()
	devs, err := profile.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	dev, ok := devs.Lookup(h100)
	if !ok {
		t.Fatalf("no shipped profile matches %q", h100)
	}
	s, err := space.Shipped(p.op.String(), string(dev.Target))
	if err != nil {
		t.Fatal(err)
	}
	trans := ""
	if p.trans {
		trans = "t"
	}
	if p.op == kernels.GEMMOp {
		trans = map[bool]string{false: "n", true: "t"}[p.trans] + map[bool]string{false: "n", true: "t"}[p.transB]
	}
	prob := prune.Problem{Op: p.op.String(), Dtype: p.dtype.String(), Trans: trans, Batch: 1000, M: p.m, N: p.n, K: p.k}
	kept, _ := prune.Split(s.All(), dev, prob)
	if len(kept) == 0 {
		t.Fatalf("%s: the pruner keeps no configuration", p)
	}
	acc, err := kernels.ParseDType(prune.DefaultAcc(p.dtype.String()))
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	for i := range min(count, len(kept)) {
		spec := kernels.Spec{Op: p.op, M: p.m, N: p.n, K: p.k, DType: p.dtype, Acc: acc, TransA: p.trans, TransB: p.transB,
			Layout: kernels.Strided, Alpha: 1.5, Beta: []complex128{0, 0.5}[i%2]}
		r, err := kernels.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		params := kept[i*len(kept)/min(count, len(kept))]
		src, err := r.Source(params)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sample{fmt.Sprintf("%s/%d", p, i), []byte(src)})
	}
	return out, compiler.Options{Device: dev.TargetDevice(h100), PTX: true}
}
