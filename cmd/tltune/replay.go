package main

import (
	stdctx "context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/results"
	"tltune/results/compare"
	"tltune/tuner/search"
)

func init() {
	register(&command{
		name:    "replay",
		summary: "measure search efficiency on a stored exhaustive run: evaluations each strategy needs to get within a tolerance of its optimum",
		usage:   "--run RUN [--strategy gp,random,exhaustive] [--tolerance 5%] [--trials N] [--db PATH]",
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
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	tol, err := compare.ParseFraction(*tolText)
	if err != nil {
		return c.usageError("--tolerance: %v", err)
	}
	if *trials < 1 {
		return c.usageError("--trials %d must be ≥ 1", *trials)
	}
	names := strings.Split(*strategies, ",")
	for _, n := range names {
		if !slices.Contains(search.Names, n) {
			return c.usageError("--strategy %q: use %s", n, strings.Join(search.Names, ", "))
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
	return writeReplay(c, run, costs, names, tol, *trials)
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

func writeReplay(c *context, run results.Run, rc *replayCosts, names []string, tol float64, trials int) int {
	fmt.Fprintf(c.stdout, "run %d: %s, %d configurations evaluated (%d failed); optimum %s; within %.3g%% counts as found\n",
		run.ID, rc.shape, len(rc.candidates), rc.failed, speak.Duration(slices.Min(slices.Collect(maps.Values(rc.median)))), 100*tol)
	fmt.Fprintln(c.stdout, "(the run must have been exhaustive — --strategy exhaustive --budget 0 — for its optimum to be the space's)")
	t := speak.Table{Header: []string{"strategy", "mean evaluations", "min", "max", "% of the space", "trials"}, Right: speak.Columns("lrrrrr")}
	for _, name := range names {
		mean, runs, err := search.Efficiency(name, rc.candidates, rc.cost, tol, trials, 1)
		if err != nil {
			return c.fail(err)
		}
		t.Append(name, speak.Number(mean), fmt.Sprint(slices.Min(runs)), fmt.Sprint(slices.Max(runs)),
			speak.Number(100*mean/float64(len(rc.candidates))), fmt.Sprint(len(runs)))
	}
	if err := t.Write(c.stdout); err != nil {
		return c.fail(err)
	}
	return exitOK
}
