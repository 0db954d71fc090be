package tuner_test

import (
	"context"
	"fmt"

	"tltune/compiler/tuning"
	"tltune/tuner"
	"tltune/tuner/measure"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/space"
)

// A stand-in device: compiling is free and a kernel takes 1 µs plus 50 ns
// per unit of distance of its tile from 16×16.
type toyDevice struct{}

func (toyDevice) Compile(_ context.Context, src string) (tuner.Artifact, error) { return src, nil }

func (toyDevice) Measure(ctx context.Context, _ tuner.Artifact, p tuning.Params) (tuner.Measurement, error) {
	dist := func(v int) int { return max(v-16, 16-v) }
	ns := float64(1000 + 50*(dist(p.Tile[0])+dist(p.Tile[1])))
	r, err := measure.Protocol{MaxSamples: 20}.Run(ctx, func(context.Context) (float64, error) { return ns, nil })
	return tuner.Measurement{Verify: tuner.Verification{RelErr: 0, Tolerance: 1e-6}, Result: r}, err
}

// A store that keeps nothing.
type discard struct{}

func (discard) Record(context.Context, ...tuner.Outcome) error          { return nil }
func (discard) RecordPruned(context.Context, []tuner.PrunedCount) error { return nil }
func (discard) Retime(context.Context, tuner.Outcome) error             { return nil }
func (discard) Previous(context.Context) ([]tuner.Outcome, error)       { return nil, nil }

func ExampleTuner_Run() {
	devs, _ := profile.Shipped()
	dev, _ := devs.Lookup("pthread-skylake-avx512-Intel(R) Xeon(R) CPU")
	s, _ := space.Shipped("gemm", string(dev.Target))
	t := &tuner.Tuner{
		Problem:  prune.Problem{Op: "gemm", Dtype: "f32", M: 64, N: 64, K: 32, Batch: 1000},
		Device:   dev,
		Space:    s,
		Generate: func(p tuning.Params) (string, error) { return "source of " + p.String(), nil },
		Compiler: toyDevice{},
		Measurer: toyDevice{},
		Recorder: discard{},
		Options:  tuner.Options{Strategy: "gp", Seed: 1, Budget: 40},
	}
	rep, err := t.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	best := rep.Best()
	fmt.Printf("%d evaluations (stopped: %s)\n", rep.Evaluations, rep.Stop)
	fmt.Printf("best tile %dx%d: %.0f ns\n", best.Params.Tile[0], best.Params.Tile[1], best.Median())
	// Output:
	// 40 evaluations (stopped: budget)
	// best tile 16x16: 1000 ns
}
