package main

import (
	stdcontext "context" // the package main type context is the command context
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"tltune/internal/speak"
	"tltune/results"
	"tltune/results/chart"
)

func init() {
	register(&command{
		name:    "roofline",
		summary: "chart the best configuration of each shape of a run against the device's measured ceilings",
		usage:   "[--run RUN|TAG|last] [--op gemm|gemv|ger] [--db PATH] -o FILE.svg|png|pdf",
		run:     rooflineCmd,
	})
}

// chartOps are the values of --op of the chart commands.
var chartOps = []string{"gemm", "gemv", "ger"}

func rooflineCmd(c *context, args []string) int {
	fs := c.flags()
	ref := fs.String("run", "last", "run to chart: an id, a tag (its latest run) or last")
	op := fs.String("op", "", "chart only this operation: "+strings.Join(chartOps, ", ")+" (default: all)")
	out := fs.String("o", "", "write the chart to `FILE`; .svg, .png or .pdf picks the format")
	db := dbFlag(fs)
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	if *op != "" && !slices.Contains(chartOps, *op) {
		return c.usageError("--op %q: want one of %s", *op, strings.Join(chartOps, ", "))
	}
	if *out == "" {
		return c.usageError("-o FILE.svg|png|pdf is required")
	}
	format, err := chart.FormatOf(*out)
	if err != nil {
		return c.usageError("-o %v", err)
	}
	store, err := openStore(*db, false)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	roof, err := loadRoofline(stdcontext.Background(), store, *ref, *op)
	if err != nil {
		return c.fail(err)
	}
	if err := writeChart(c.stdout, *out, format, roof); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// loadRoofline gathers a run's best configuration per shape and the
// latest ceilings measured in the run's environment.
func loadRoofline(ctx stdcontext.Context, store *results.Store, ref, op string) (*chart.Roofline, error) {
	run, err := store.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	ceilings, err := store.Ceilings(ctx, run.Env)
	if err == nil && !(ceilings.CopyGBS > 0) {
		err = results.ErrNoCeilings // a memory roof is the least a roofline needs
	}
	if errors.Is(err, results.ErrNoCeilings) {
		e := run.Env
		return nil, inputError{fmt.Errorf("no measured ceilings for %s (%s, driver %s, host %s), the device of run %d; run 'tltune peak --device %q --db %q' there first",
			e.Device, e.Runtime, e.Driver, e.Host, run.ID, e.Device, store.Path())}
	}
	if err != nil {
		return nil, err
	}
	best, err := store.BestPerShape(ctx, results.Filter{RunID: run.ID, Op: op})
	if err != nil {
		return nil, err
	}
	points, err := rooflinePoints(best, ceilings)
	if err != nil {
		return nil, inputError{fmt.Errorf("run %d: %v", run.ID, err)}
	}
	return &chart.Roofline{
		Device:    fmt.Sprintf("%s, run %d", run.Env.Device, run.ID),
		MemoryGBs: ceilings.CopyGBS,
		Roofs:     computeRoofs(ceilings),
		Points:    points,
	}, nil
}

// computeRoofs are the compute ceilings `tltune peak` measured, fastest
// first; an unmeasured one is zero and left out.
func computeRoofs(c results.Ceilings) []chart.Roof {
	var roofs []chart.Roof
	for _, r := range []chart.Roof{{Name: "f16 matrix", GFLOPs: c.MMAGFLOPS}, {Name: "f16 FMA", GFLOPs: c.F16GFLOPS},
		{Name: "f32 FMA", GFLOPs: c.F32GFLOPS}, {Name: "f64 FMA", GFLOPs: c.F64GFLOPS}} {
		if r.GFLOPs > 0 {
			roofs = append(roofs, r)
		}
	}
	return roofs
}

// rooflinePoints is one point per shape. The arithmetic intensity is the
// stored GFLOP/s over GB/s: both were computed from the recipe's FLOP and
// byte counts over the same median time, so their ratio is FLOP/byte
// whatever the batch size.
func rooflinePoints(best []results.Best, c results.Ceilings) ([]chart.Point, error) {
	roof := func(p speak.Problem) float64 {
		_, gflops := c.ComputeRoof(p)
		return gflops
	}
	if len(best) == 0 {
		return nil, errors.New("no shape has an ok measurement to chart")
	}
	labels := pointLabels(best)
	points := make([]chart.Point, 0, len(best))
	for i, b := range best {
		if !(b.GFLOPS > 0 && b.GBS > 0) {
			return nil, fmt.Errorf("%s has no GFLOP/s or GB/s recorded; its intensity is unknown", b.Config.Problem)
		}
		points = append(points, chart.Point{
			Label:     labels[i],
			Group:     pointGroup(b.Config.Problem),
			Intensity: b.GFLOPS / b.GBS,
			GFLOPs:    b.GFLOPS,
			Roof:      roof(b.Config.Problem),
		})
	}
	return points, nil
}

// pointGroup is a point's legend entry: one colour and marker per
// operation, element type and precision (a tf32 point has another roof).
func pointGroup(s speak.Problem) string {
	if s.Precision != "" {
		return s.Op + " " + s.Dtype + " " + s.Precision
	}
	return s.Op + " " + s.Dtype
}

// pointLabels labels each point with its dimensions, e.g. "64×64×32", and
// with those of transposition, accumulation type and layout that differ
// within its group, so that two points of a group never share a label.
func pointLabels(best []results.Best) []string {
	type variant struct{ trans, acc, layout map[string]bool }
	variants := map[string]*variant{}
	for _, b := range best {
		s := b.Config.Problem
		v := variants[pointGroup(s)]
		if v == nil {
			v = &variant{map[string]bool{}, map[string]bool{}, map[string]bool{}}
			variants[pointGroup(s)] = v
		}
		v.trans[s.Trans], v.acc[s.Acc], v.layout[s.Layout] = true, true, true
	}
	labels := make([]string, len(best))
	for i, b := range best {
		s := b.Config.Problem
		v := variants[pointGroup(s)]
		label := dims(s)
		for _, f := range []struct {
			values map[string]bool
			value  string
		}{{v.trans, s.Trans}, {v.acc, s.Acc}, {v.layout, s.Layout}} {
			if len(f.values) > 1 {
				label += " " + f.value
			}
		}
		labels[i] = label
	}
	return labels
}

// dims is M×N, or M×N×K for a shape with a reduction dimension.
func dims(s speak.Problem) string {
	d := fmt.Sprintf("%d×%d", s.M, s.N)
	if s.K != 0 {
		d += fmt.Sprintf("×%d", s.K)
	}
	return d
}

// writeChart draws c in format into the file at path, atomically (see
// writeOutput): a chart that fails to draw leaves no half-written file.
func writeChart(stdout io.Writer, path, format string, c chart.Chart) error {
	return writeOutput(stdout, path, func(w io.Writer) error { return chart.Write(w, format, c) })
}
