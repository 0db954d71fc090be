package main

import (
	"cmp"
	stdcontext "context" // the package main type context is the command context
	"fmt"
	"io"
	"slices"
	"strings"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/results"
	"tltune/results/chart"
)

func init() {
	register(&command{
		name:    "history",
		summary: "print (and chart) a shape's best median time in every run that measured it",
		usage:   "--op gemm|gemv|ger --m M --n N [--k K] [--dtype T] [--trans T] [--acc T] [--alpha A] [--beta B] [--layout L] [--precision P] [--device D] [-o FILE.svg|png|pdf] [--json] [--db PATH]",
		run:     historyCmd,
	})
}

func historyCmd(c *context, args []string) int {
	fs := c.flags()
	var q results.ShapeQuery
	fs.StringVar(&q.Op, "op", "", "operation: "+strings.Join(chartOps, ", "))
	fs.IntVar(&q.M, "m", 0, "rows M")
	fs.IntVar(&q.N, "n", 0, "columns N")
	fs.IntVar(&q.K, "k", 0, "reduction size K (gemm only)")
	fs.StringVar(&q.Dtype, "dtype", "", "element type, e.g. f16 (default: the one measured)")
	fs.StringVar(&q.Trans, "trans", "", "transposition, e.g. nn (default: the one measured)")
	fs.StringVar(&q.Acc, "acc", "", "accumulation type (default: the one measured)")
	fs.StringVar(&q.Layout, "layout", "", "batch layout: strided or group (default: the one measured)")
	fs.StringVar(&q.Precision, "precision", "", "exact or tf32, as gemm takes it (default: the one measured)")
	alpha := fs.String("alpha", "", "alpha, as the tuning commands take it (default: the one measured)")
	beta := fs.String("beta", "", "beta, as the tuning commands take it, atomic forms included (default: the one measured)")
	device := storedDeviceFlag(fs, "the one that measured the shape")
	out := fs.String("o", "", "also chart the history into `FILE`; .svg, .png or .pdf picks the format")
	asJSON := fs.Bool("json", false, "print the history as JSON (docs/json.md) instead of the table")
	db := dbFlag(fs)
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	err := checkShapeQuery(q)
	if err == nil {
		err = queryScalars(&q, *alpha, *beta)
	}
	if err == nil {
		q.Device, err = storedDevice(*device)
	}
	if err != nil {
		return c.usageError("%v", err)
	}
	var format string
	if *out != "" {
		if format, err = chart.FormatOf(*out); err != nil {
			return c.usageError("-o %v", err)
		}
	}
	store, err := openStore(*db, false)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	hist, err := store.ShapeHistory(stdcontext.Background(), q)
	if err != nil {
		return c.fail(err)
	}
	if len(hist) == 0 {
		return c.fail(inputError{fmt.Errorf("no run in %s has an ok measurement of %s; check the shape with 'tltune export'", store.Path(), describeQuery(q))})
	}
	if flags := ambiguity(hist); flags != "" {
		return c.usageError("%s matches several shapes or devices: pick one with %s", describeQuery(q), flags)
	}
	if *out != "" {
		if err := writeChart(c.stdout, *out, format, historyChart(hist)); err != nil {
			return c.fail(err)
		}
	}
	if *asJSON {
		err = speak.WriteJSON(c.stdout, historyJSONOf(hist))
	} else {
		err = writeHistoryTable(c.stdout, hist)
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// historyJSON is the output of history --json: the problem, the device,
// and each run's best configuration with its timing, oldest run first.
type historyJSON struct {
	speak.NamedProblem
	Device string           `json:"device"`
	Runs   []historyRunJSON `json:"runs"`
}

type historyRunJSON struct {
	Run    results.RunJSON `json:"run"`
	Params tuning.Params   `json:"params"`
	Timing *results.Timing `json:"timing"`
}

func historyJSONOf(hist []results.RunBest) historyJSON {
	h := historyJSON{NamedProblem: speak.Named(hist[0].Config.Problem), Device: hist[0].Run.Env.Device}
	for _, rb := range hist {
		h.Runs = append(h.Runs, historyRunJSON{Run: rb.Run.JSON(), Params: rb.Config.Params, Timing: rb.Measurement.Timing()})
	}
	return h
}

// checkShapeQuery checks the flags that name the shape: gemm needs K, the
// others have none, and the types, transposes, layout and precision it
// sets are values the tuning commands take.
func checkShapeQuery(q results.ShapeQuery) error {
	switch {
	case q.Op == "":
		return fmt.Errorf("--op is required: one of %s", strings.Join(chartOps, ", "))
	case !slices.Contains(chartOps, q.Op):
		return fmt.Errorf("--op %q: want one of %s", q.Op, strings.Join(chartOps, ", "))
	case q.M <= 0 || q.N <= 0:
		return fmt.Errorf("--m and --n are required and must be positive")
	case q.Op == "gemm" && q.K <= 0:
		return fmt.Errorf("--k is required for gemm and must be positive")
	case q.Op != "gemm" && q.K != 0:
		return fmt.Errorf("--k does not apply to %s", q.Op)
	}
	op, err := kernels.ParseOp(q.Op) // one of chartOps
	if err != nil {
		return err
	}
	f := kernels.Flags{DType: q.Dtype, Acc: q.Acc, Trans: q.Trans, Layout: q.Layout, Precision: q.Precision}
	return f.CheckSet(op)
}

// queryScalars puts --alpha and --beta into q, spelt as the store keys
// them. They are not rounded to an element type the query may leave open:
// a value the type cannot hold exactly (0.1 in f16) must be given as
// stored.
func queryScalars(q *results.ShapeQuery, alpha, beta string) error {
	if alpha != "" {
		z, err := kernels.ParseScalar(alpha)
		if err != nil {
			return fmt.Errorf("--alpha: %v", err)
		}
		q.Alpha = speak.FormatScalar(z)
	}
	if beta != "" {
		z, atomic, err := kernels.ParseBeta(beta)
		if err != nil {
			return fmt.Errorf("--beta: %v", err)
		}
		q.Beta, q.Atomic = speak.FormatScalar(z), atomic
	}
	return nil
}

// describeQuery is the shape a query names, e.g. "gemm f16 64x64x32";
// open scalars print as the defaults, that is not at all.
func describeQuery(q results.ShapeQuery) string {
	p := speak.Problem{Op: q.Op, Trans: q.Trans, Dtype: q.Dtype, Acc: q.Acc, M: q.M, N: q.N, K: q.K,
		Alpha: cmp.Or(q.Alpha, speak.DefaultAlpha), Beta: cmp.Or(q.Beta, speak.DefaultBeta), Atomic: q.Atomic, Layout: q.Layout}
	if q.Precision != speak.ExactPrecision {
		p.Precision = q.Precision
	}
	s := strings.Join(strings.Fields(p.String()), " ") // fields left open print as nothing
	if q.Device.Name != "" {
		s += fmt.Sprintf(" on %q", q.Device.Name)
	}
	return s
}

// ambiguity names the flags that would narrow hist down to one shape on
// one device, with the values to choose from, e.g. `--dtype f16|f32`; it
// is empty when hist is one shape's history already. A history that mixed
// element types or devices would draw a line between unrelated numbers.
func ambiguity(hist []results.RunBest) string {
	fields := []struct {
		flag  string
		value func(results.RunBest) string
	}{
		{"--trans", func(rb results.RunBest) string { return rb.Config.Trans }},
		{"--dtype", func(rb results.RunBest) string { return rb.Config.Dtype }},
		{"--acc", func(rb results.RunBest) string { return rb.Config.Acc }},
		{"--layout", func(rb results.RunBest) string { return rb.Config.Layout }},
		{"--alpha", func(rb results.RunBest) string { return rb.Config.Alpha }},
		{"--beta", func(rb results.RunBest) string { return betaFlag(rb.Config.Problem) }},
		{"--precision", func(rb results.RunBest) string { return speak.PrecisionName(rb.Config.Precision) }},
		{"--device", func(rb results.RunBest) string { return fmt.Sprintf("%q", rb.Run.Env.Device) }},
	}
	var choices []string
	for _, f := range fields {
		var values []string
		for _, rb := range hist {
			if v := f.value(rb); !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		if len(values) > 1 {
			slices.Sort(values)
			choices = append(choices, f.flag+" "+strings.Join(values, "|"))
		}
	}
	return strings.Join(choices, " ")
}

// betaFlag is the --beta value that selects p's β and atomic flag.
func betaFlag(p speak.Problem) string {
	if p.Atomic {
		return "atomic:" + p.Beta
	}
	return p.Beta
}

// historyTitle is the one shape and device of hist.
func historyTitle(hist []results.RunBest) string {
	return hist[0].Config.Problem.String() + " — " + hist[0].Run.Env.Device
}

// runLabel is a run's tick label: its id and the month and day it began.
// retimed reports whether a run re-timed stored configurations (a sweep
// with --remeasure) rather than searching.
func retimed(r results.Run) bool {
	return slices.ContainsFunc(strings.Fields(r.CommandLine), func(a string) bool {
		return a == "--remeasure" || a == "-remeasure" || strings.HasPrefix(a, "--remeasure=true") || strings.HasPrefix(a, "-remeasure=true")
	})
}

func historyChart(hist []results.RunBest) *chart.History {
	h := &chart.History{Title: historyTitle(hist)}
	for _, rb := range hist {
		h.Runs = append(h.Runs, chart.HistoryRun{At: rb.Run.StartedAt, MedianNs: rb.MedianNS, LoNs: rb.CILowNS, HiNs: rb.CIHighNS,
			Config: rb.Config.Params.For(rb.Config.Op), Retimed: retimed(rb.Run)})
	}
	return h
}

// writeHistoryTable prints the title and one row per run, oldest first.
func writeHistoryTable(w io.Writer, hist []results.RunBest) error {
	if _, err := fmt.Fprintln(w, historyTitle(hist)); err != nil {
		return err
	}
	t := speak.Table{Header: []string{"run", "started (UTC)", "tag", "median", "95% CI", "best configuration"}, Right: speak.Columns("rllrrl")}
	for _, rb := range hist {
		ci := "-" // the run recorded no interval
		if rb.CILowNS != 0 || rb.CIHighNS != 0 {
			ci = speak.Duration(rb.CILowNS) + " – " + speak.Duration(rb.CIHighNS)
		}
		t.Append(fmt.Sprint(rb.Run.ID), rb.Run.StartedAt.UTC().Format("2006-01-02 15:04"), rb.Run.Tag,
			speak.Duration(rb.MedianNS), ci, rb.Config.Params.For(rb.Config.Op))
	}
	return t.Write(w)
}
