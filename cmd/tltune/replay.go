package main

import (
	stdctx "context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/internal/stats"
	"tltune/results"
	"tltune/results/compare"
	"tltune/tuner/search"
	"tltune/tuner/suite"
)

func init() {
	register(&command{
		name:    "replay",
		summary: "measure search efficiency on a stored exhaustive run: evaluations each strategy needs to get within a tolerance of its optimum",
		usage:   "--run RUN [--strategy gp,random,exhaustive] [--tolerance 5%] [--trials N] [--in-flight N] [--budget N[,N...]] [--json] [--db PATH]",
		run:     replayCmd,
	})
}

func replayCmd(c *context, args []string) int {
	fs := c.flags()
	db := dbFlag(fs)
	runRef := fs.String("run", "last", "the exhaustive run whose measurements serve as the cost of every configuration (id, tag or last)")
	strategies := fs.String("strategy", strings.Join(search.Names, ","), "strategies to replay, comma-separated")
	tolText := fs.String("tolerance", "5%", "how close to the optimum counts as found")
	trials := fs.Int("trials", 20, "seeded replays per strategy")
	inFlight := fs.Int("in-flight", 1, "configurations proposed before the oldest one's result is in, as a tuning run keeps them in flight (tltune gemm: the builder processes + 3)")
	budgetText := fs.String("budget", strconv.Itoa(suite.DefaultBudget), "the budget of a tuning run (tltune gemm's default), or several, comma-separated (48,80): each strategy's share of trials that found the optimum within each")
	asJSON := fs.Bool("json", false, "print the replay as JSON (docs/json.md) instead of the table")
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	tol, err := compare.ParseFraction(*tolText)
	if err != nil {
		return c.usageError("--tolerance: %v", err)
	}
	if *trials < 1 {
		return c.usageError("--trials %d must be ≥ 1", *trials)
	}
	if *inFlight < 1 {
		return c.usageError("--in-flight %d must be ≥ 1", *inFlight)
	}
	budgets, err := parseBudgets(*budgetText)
	if err != nil {
		return c.usageError("--budget: %v", err)
	}
	names := strings.Split(*strategies, ",")
	for i, n := range names {
		if !slices.Contains(search.Names, n) {
			return c.usageError("--strategy %q: use %s", n, strings.Join(search.Names, ", "))
		}
		if slices.Contains(names[:i], n) {
			return c.usageError("--strategy: %s is given twice; name each strategy once", n)
		}
	}
	st, err := openStore(*db, false)
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	run, err := st.ResolveRun(stdctx.Background(), *runRef)
	if err != nil {
		return c.fail(err)
	}
	costs, err := storedCosts(st, run.ID)
	if err != nil {
		return c.fail(err)
	}
	rep, err := replay(run, costs, names, replaySettings{tol, *trials, *inFlight, budgets})
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		err = speak.WriteJSON(c.stdout, rep)
	} else {
		err = rep.write(c.stdout)
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// replayReport is what replay found, as printed and as --json.
type replayReport struct {
	Run int64 `json:"run"`
	speak.NamedProblem
	Evaluated  int              `json:"evaluated"` // configurations the run evaluated
	Failed     int              `json:"failed"`
	OptimumNS  float64          `json:"optimum_ns"`
	Tolerance  float64          `json:"tolerance"` // a fraction: within it of the optimum counts as found
	InFlight   int              `json:"in_flight"` // proposals outstanding at a time
	Budget     int              `json:"budget"`    // the evaluations a tuning run allows (the first of --budget)
	Strategies []replayStrategy `json:"strategies"`
}

// replaySettings are how replay measures: what counts as found, how many
// seeded trials, proposals in flight and the tuning runs' budgets.
type replaySettings struct {
	tolerance        float64
	trials, inFlight int
	budgets          []int
}

// parseBudgets reads --budget: evaluations, one or several,
// comma-separated, each at least 1 and given once (a repeat would print
// its column twice).
func parseBudgets(text string) ([]int, error) {
	var budgets []int
	for _, f := range strings.Split(text, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b < 1 {
			return nil, fmt.Errorf("%q is not a number of evaluations ≥ 1 (give one, or several separated by commas: 48,80)", f)
		}
		if slices.Contains(budgets, b) {
			return nil, fmt.Errorf("%d is given twice; give each budget once", b)
		}
		budgets = append(budgets, b)
	}
	return budgets, nil
}

// replayStrategy is one strategy's evaluations to find the optimum over
// the seeded trials.
type replayStrategy struct {
	Strategy       string  `json:"strategy"`
	Mean           float64 `json:"mean_evaluations"`
	Min            int     `json:"min_evaluations"`
	Median         float64 `json:"median_evaluations"`
	Max            int     `json:"max_evaluations"`
	PercentOfSpace float64 `json:"percent_of_space"`
	Trials         int     `json:"trials"`
	// FoundPercent is the share of trials that found the optimum within
	// the budget: the chance that a tuning run of that budget does.
	FoundPercent float64 `json:"found_within_budget_percent"`
	// FoundWithin is that share for each budget of --budget, in order.
	FoundWithin []foundWithin `json:"found_within"`
}

// foundWithin is the share of trials that found the optimum within a
// budget.
type foundWithin struct {
	Budget  int     `json:"budget"`
	Percent float64 `json:"percent"`
}

func replay(run results.Run, rc *replayCosts, names []string, set replaySettings) (*replayReport, error) {
	r := &replayReport{Run: run.ID, NamedProblem: speak.Named(rc.shape), Evaluated: len(rc.candidates), Failed: rc.failed,
		OptimumNS: slices.Min(slices.Collect(maps.Values(rc.median))), Tolerance: set.tolerance, InFlight: set.inFlight, Budget: set.budgets[0]}
	for _, name := range names {
		mean, runs, err := search.Efficiency(name, rc.candidates, rc.cost, set.tolerance, set.trials, 1, set.inFlight)
		if err != nil {
			return nil, err
		}
		s := replayStrategy{Strategy: name, Mean: mean, Min: slices.Min(runs), Median: stats.Median(runs),
			Max: slices.Max(runs), PercentOfSpace: 100 * mean / float64(len(rc.candidates)), Trials: len(runs)}
		for _, b := range set.budgets {
			found := 0
			for _, n := range runs {
				if n <= b {
					found++
				}
			}
			s.FoundWithin = append(s.FoundWithin, foundWithin{b, 100 * float64(found) / float64(len(runs))})
		}
		s.FoundPercent = s.FoundWithin[0].Percent
		r.Strategies = append(r.Strategies, s)
	}
	return r, nil
}

// replayCosts are the evaluated configurations of one stored shape, in
// enumeration order, with their medians (failures have none).
type replayCosts struct {
	shape      speak.Problem
	candidates []tuning.Params
	median     map[tuning.Params]float64
	failed     int
}

// storedCosts reads the evaluations of a run. A run that tuned several
// shapes (a sweep) is refused: replay answers for one search space.
func storedCosts(st *results.Store, run int64) (*replayCosts, error) {
	ms, err := st.Measurements(stdctx.Background(), run)
	if err != nil {
		return nil, err
	}
	var rc *replayCosts
	for _, m := range ms {
		if m.Outcome == results.Pruned {
			continue
		}
		shape := m.Config.Problem
		if rc == nil {
			rc = &replayCosts{shape: shape, median: map[tuning.Params]float64{}}
		}
		if shape != rc.shape {
			return nil, inputError{fmt.Errorf("run %d tuned several shapes (%v, %v): replay one tuning run of one shape", run, rc.shape, shape)}
		}
		rc.candidates = append(rc.candidates, m.Config.Params)
		if m.Outcome == results.OK {
			rc.median[m.Config.Params] = m.MedianNS
		} else {
			rc.failed++
		}
	}
	if rc == nil || len(rc.median) == 0 {
		return nil, inputError{fmt.Errorf("run %d has no correct timed configuration to replay", run)}
	}
	return rc, nil
}

func (rc *replayCosts) cost(p tuning.Params) (float64, bool) {
	ns, ok := rc.median[p]
	return ns, ok
}

func (r *replayReport) write(w io.Writer) error {
	fmt.Fprintf(w, "run %d: %s, %d configurations evaluated (%d failed); optimum %s; within %.3g%% counts as found; %d in flight\n",
		r.Run, r.Name, r.Evaluated, r.Failed, speak.Duration(r.OptimumNS), 100*r.Tolerance, r.InFlight)
	fmt.Fprintln(w, "(the run must have been exhaustive — --strategy exhaustive --budget 0 — for its optimum to be the space's; a random one replays a sample of it)")
	t := speak.Table{Header: []string{"strategy", "mean evaluations", "min", "median", "max", "% of the space", "trials"}}
	for _, f := range r.Strategies[0].FoundWithin {
		t.Header = append(t.Header, fmt.Sprintf("found within %d", f.Budget))
	}
	t.Right = speak.Columns("l" + strings.Repeat("r", len(t.Header)-1))
	for _, s := range r.Strategies {
		row := []string{s.Strategy, speak.Number(s.Mean), fmt.Sprint(s.Min), speak.Number(s.Median), fmt.Sprint(s.Max),
			speak.Number(s.PercentOfSpace), fmt.Sprint(s.Trials)}
		for _, f := range s.FoundWithin {
			row = append(row, speak.Number(f.Percent)+" %")
		}
		t.Append(row...)
	}
	return t.Write(w)
}
