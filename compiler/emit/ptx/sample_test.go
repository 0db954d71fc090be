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

// problem is a GEMV or GER shape the tests compile configurations of.
type problem struct {
	op    kernels.Op
	dtype kernels.DType
	trans bool
	m, n  int
}

func (p problem) String() string {
	s := fmt.Sprintf("%s-%s-%dx%d", p.op, p.dtype, p.m, p.n)
	if p.trans {
		s += "-t"
	}
	return s
}

// problems are gemv (both transposes) and ger of every dtype, m×n.
func problems(m, n int, dtypes ...kernels.DType) []problem {
	var ps []problem
	for _, dt := range dtypes {
		ps = append(ps, problem{kernels.GEMVOp, dt, false, m, n}, problem{kernels.GEMVOp, dt, true, m, n},
			problem{kernels.GEROp, dt, false, m, n})
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
	prob := prune.Problem{Op: p.op.String(), Dtype: p.dtype.String(), Trans: trans, Batch: 1000, M: p.m, N: p.n}
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
		spec := kernels.Spec{Op: p.op, M: p.m, N: p.n, DType: p.dtype, Acc: acc, TransA: p.trans,
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
