package main

import (
	stdcontext "context" // the package main type context is the command context
	"fmt"
	"io"
	"strings"

	"tltune/internal/speak"
	"tltune/results"
	"tltune/results/compare"
)

func init() {
	register(&command{
		name:    "regress",
		summary: "compare a run with a baseline shape by shape; exit 1 on a confirmed regression",
		usage:   "--baseline TAG|RUN|last [--run RUN|TAG|last] [--threshold 5%] [--alpha 0.05] [--md FILE] [--junit FILE] [--json] [--db PATH]",
		run:     regressCmd,
	})
}

// regressCmd compares the best ok measurement of each shape in two runs
// (results.MatchRuns says why the best and not one fixed configuration).
// The exit status is the CI gate: 1 only on a confirmed regression
// (compare.Report.Regressed), 0 when nothing got slower, noisy shapes
// included.
func regressCmd(c *context, args []string) int {
	fs := c.flags()
	baseRef := fs.String("baseline", "", "run to compare with: an id, a tag (its latest run other than --run), or last (the run before --run on the same device)")
	curRef := fs.String("run", "last", "run to check: an id, a tag (its latest run) or last")
	threshold := fs.String("threshold", "5%", "smallest change that matters: a percent (5%) or a fraction (0.05)")
	alpha := fs.Float64("alpha", compare.DefaultOptions.Alpha, "significance level of the Mann–Whitney U test")
	md := fs.String("md", "", "also write the report as Markdown to `FILE`")
	junit := fs.String("junit", "", "also write the report as JUnit XML to `FILE`")
	asJSON := fs.Bool("json", false, "print the report as JSON (docs/json.md) instead of the table")
	db := dbFlag(fs)
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	if *baseRef == "" {
		return c.usageError("--baseline is required: a run id, a tag or last")
	}
	opt, err := regressOptions(*threshold, *alpha)
	if err != nil {
		return c.usageError("%v", err)
	}
	store, err := openStore(*db, false)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	ctx := stdcontext.Background()
	base, cur, err := resolvePair(ctx, store, *baseRef, *curRef)
	if err != nil {
		return c.fail(err)
	}
	if base.ID == cur.ID {
		return c.usageError("--baseline %s and --run %s are both run %d; name an earlier --baseline", *baseRef, *curRef, cur.ID)
	}
	reg, err := compareRuns(ctx, store, base, cur, opt)
	if err != nil {
		return c.fail(err)
	}
	if err := reg.writeReports(c.stdout, *md, *junit, *asJSON); err != nil {
		return c.fail(err)
	}
	if reg.report.Regressed() {
		return exitRegression
	}
	return exitOK
}

// regressOptions reads --threshold and --alpha. Compare with no pairs does
// nothing but check the options, so its range rule is the only one.
func regressOptions(threshold string, alpha float64) (compare.Options, error) {
	t, err := compare.ParseThreshold(threshold)
	if err != nil {
		return compare.Options{}, fmt.Errorf("--threshold: %v", err)
	}
	opt := compare.Options{Threshold: t, Alpha: alpha}
	if _, err := compare.Compare(nil, opt); err != nil {
		return opt, fmt.Errorf("--alpha: %v", err)
	}
	return opt, nil
}

// resolvePair finds the current run and then its baseline (see
// results.Store.ResolveBaseline: "last" and a tag never name the current
// run itself).
func resolvePair(ctx stdcontext.Context, store *results.Store, baseRef, curRef string) (base, cur results.Run, err error) {
	if cur, err = store.ResolveRun(ctx, curRef); err != nil {
		return base, cur, err
	}
	base, err = store.ResolveBaseline(ctx, baseRef, cur)
	return base, cur, err
}

// A regression is the comparison of two runs with what the report of
// package compare does not hold: the runs, and notes on the configurations.
type regression struct {
	baseline, current results.Run
	report            *compare.Report
	notes             []string // changed best configurations; environment changes when nothing was compared
}

func compareRuns(ctx stdcontext.Context, store *results.Store, base, cur results.Run, opt compare.Options) (*regression, error) {
	rm, err := store.MatchRuns(ctx, base.ID, cur.ID)
	if err != nil {
		return nil, err
	}
	pairs, unsampled, notes := pairUp(rm.Matched, base.Env, cur.Env)
	report, err := compare.Compare(pairs, opt)
	if err != nil {
		return nil, err
	}
	report.New, report.Gone, report.Unsampled = unmatched(rm.New), unmatched(rm.Gone), unsampled
	if len(pairs) == 0 { // compare lists environment changes per compared shape
		notes = append(notes, envNotes(base.Env, cur.Env)...)
	}
	return &regression{baseline: base, current: cur, report: report, notes: notes}, nil
}

// unmatched are the best measurements of problems one run lacks, as
// compare lists them.
func unmatched(ms []results.Measurement) []compare.Unmatched {
	out := make([]compare.Unmatched, len(ms))
	for i, m := range ms {
		out[i] = compare.Unmatched{Problem: m.Config.Problem, MedianNS: m.MedianNS}
	}
	return out
}

// pairUp turns matched shapes into the pairs of package compare. It also
// returns the shapes it had to leave out for want of raw samples (an ok
// measurement from a store filled by hand or by an older tltune has
// none) and a note for each shape whose best configuration changed.
func pairUp(matched []results.Match, oldEnv, curEnv results.Environment) (pairs []compare.Pair, unsampled []compare.Unmatched, changed []string) {
	for _, m := range matched {
		if len(m.Baseline.SamplesNS) == 0 || len(m.Current.SamplesNS) == 0 {
			unsampled = append(unsampled, compare.Unmatched{Problem: m.Problem, MedianNS: m.Current.MedianNS})
			continue
		}
		pairs = append(pairs, compare.Pair{
			Problem:  m.Problem,
			Baseline: compare.Side{Samples: m.Baseline.SamplesNS, Env: compareEnv(oldEnv)},
			Current:  compare.Side{Samples: m.Current.SamplesNS, Env: compareEnv(curEnv)},
		})
		if old, now := m.Baseline.Config.Params, m.Current.Config.Params; old != now {
			changed = append(changed, fmt.Sprintf("%s: best configuration changed from %s to %s", m.Problem, old.For(m.Problem.Op), now.For(m.Problem.Op)))
		}
	}
	return pairs, unsampled, changed
}

// envNotes lists how the environment changed from one run to another.
func envNotes(old, cur results.Environment) []string {
	var notes []string
	for _, ch := range compareEnv(old).Diff(compareEnv(cur)) {
		notes = append(notes, fmt.Sprintf("%s changed: %q → %q", ch.Field, ch.Old, ch.New))
	}
	return notes
}

func compareEnv(e results.Environment) compare.Env {
	return compare.Env{Device: e.Device, Driver: e.Driver, Runtime: e.Runtime, Compiler: e.CompilerVersion,
		Version: strings.TrimSpace(e.Version + " " + e.Commit)}
}

// header names the two runs compared, above the table.
func (r *regression) header() []string {
	return []string{"baseline: " + describeRun(r.baseline), "current:  " + describeRun(r.current)}
}

// describeRun is one line about a run, e.g.
// `run 12 "nightly", started 2026-11-20 02:00 UTC, NVIDIA H200 (opencl, driver 580.159.04)`.
func describeRun(r results.Run) string {
	s := fmt.Sprintf("run %d", r.ID)
	if r.Tag != "" {
		s += fmt.Sprintf(" %q", r.Tag)
	}
	s += fmt.Sprintf(", started %s, %s (%s, driver %s)",
		r.StartedAt.UTC().Format("2006-01-02 15:04 MST"), r.Env.Device, r.Env.Runtime, r.Env.Driver)
	switch {
	case r.Killed(): // a killed or failed run may lack shapes
		s += ", killed"
	case r.Status != results.Done:
		s += ", " + string(r.Status)
	}
	return s
}

// writeReports writes the Markdown and JUnit files that were asked for and
// then prints the table; files first, so that a file that cannot be
// written is the one line of output.
func (r *regression) writeReports(stdout io.Writer, mdPath, junitPath string, asJSON bool) error {
	if mdPath != "" {
		if err := writeOutput(stdout, mdPath, r.writeMarkdown); err != nil {
			return fmt.Errorf("--md: %w", err)
		}
	}
	if junitPath != "" {
		write := func(w io.Writer) error { return compare.WriteJUnit(w, r.report) }
		if err := writeOutput(stdout, junitPath, write); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if asJSON {
		return speak.WriteJSON(stdout, r.json())
	}
	return r.writeText(stdout)
}

// regressJSON is the output of regress --json.
type regressJSON struct {
	Baseline results.RunJSON `json:"baseline"`
	Current  results.RunJSON `json:"current"`
	compare.JSONReport
	Notes []string `json:"notes"`
}

func (r *regression) json() regressJSON {
	notes := r.notes
	if notes == nil {
		notes = []string{}
	}
	return regressJSON{Baseline: r.baseline.JSON(), Current: r.current.JSON(), JSONReport: r.report.JSON(), Notes: notes}
}

func (r *regression) writeText(w io.Writer) error {
	return r.writeAround(w, "", compare.WriteTable)
}

func (r *regression) writeMarkdown(w io.Writer) error {
	return r.writeAround(w, "- ", compare.WriteMarkdown)
}

// writeAround writes the header, the report as render writes it, and the
// notes, each header and note line after prefix.
func (r *regression) writeAround(w io.Writer, prefix string, render func(io.Writer, *compare.Report) error) error {
	ew := &errWriter{w: w}
	for _, h := range r.header() {
		fmt.Fprintln(ew, prefix+h)
	}
	if prefix != "" { // Markdown: a blank line ends the list before the table
		fmt.Fprintln(ew)
	}
	if ew.err != nil {
		return ew.err
	}
	if err := render(w, r.report); err != nil {
		return err
	}
	for _, n := range r.notes {
		fmt.Fprintln(ew, prefix+n)
	}
	return ew.err
}

// errWriter keeps the first write error, so a sequence of prints is
// checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
