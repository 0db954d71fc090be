package tuner

import (
	"context"
	"testing"

	"tltune/compiler/tuning"
	"tltune/tuner/search"
)

type instantCompiler struct{}

func (instantCompiler) Compile(context.Context, string) (Artifact, error) { return struct{}{}, nil }

// instantMeasurer returns precomputed measurements: a smooth function of
// the tile, so that the gp strategy has something to model (on a flat
// surface it would never leave its random start).
type instantMeasurer struct{ byTile [65][65]Measurement }

func newInstantMeasurer() *instantMeasurer {
	im := &instantMeasurer{}
	for tm := range 65 {
		for tn := range 65 {
			ns := 1000 + 3*float64((tm-20)*(tm-20)+(tn-40)*(tn-40))
			im.byTile[tm][tn] = Measurement{Verify: Verification{Tolerance: 1e-6}, Result: samples(ns)}
		}
	}
	return im
}

func (im *instantMeasurer) Measure(_ context.Context, _ Artifact, p tuning.Params) (Measurement, error) {
	return im.byTile[p.Tile[0]][p.Tile[1]], nil
}

type nullRecorder struct{}

func (nullRecorder) Record(context.Context, ...Outcome) error          { return nil }
func (nullRecorder) RecordPruned(context.Context, []PrunedCount) error { return nil }
func (nullRecorder) Retime(context.Context, Outcome) error             { return nil }
func (nullRecorder) Previous(context.Context) ([]Outcome, error)       { return nil, nil }

// BenchmarkOverheadPerEvaluation measures what the tuner itself costs per
// evaluation — pruning (amortised), the strategy's proposal, source hashing,
// the cache, the pipeline's hand-offs, bookkeeping — with a compiler, device
// and store that take no time. One op is one evaluation.
func BenchmarkOverheadPerEvaluation(b *testing.B) {
	meas := newInstantMeasurer()
	for _, name := range search.Names {
		b.Run(name, func(b *testing.B) {
			tu := &Tuner{
				Problem: testProblem, Device: testDevice, Space: testSpaceT(b),
				Generate: func(p tuning.Params) (string, error) { return "kernel " + p.String(), nil },
				Compiler: instantCompiler{}, Measurer: meas, Recorder: nullRecorder{},
				Options: Options{Strategy: name, Seed: 1},
			}
			// 4096 candidates, all fine.
			for flag, v := range map[string]string{"wx": "1", "wy": "1", "tm": "1..64", "tn": "1..64", "unroll": "1", "batch-per-group": "1"} {
				if err := tu.Space.Override(flag, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			done := 0
			for done < b.N {
				tu.Budget = b.N - done
				rep, err := tu.Run(context.Background())
				if err != nil || rep.Evaluations == 0 {
					b.Fatal(err, rep.Evaluations)
				}
				done += rep.Evaluations
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/eval")
		})
	}
}
