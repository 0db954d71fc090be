package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"tltune/internal/speak"
)

// A Match is one problem's best ok measurement in each of two runs.
type Match struct {
	Problem           speak.Problem
	Baseline, Current Measurement
}

// A RunMatch pairs the problems of two runs.
type RunMatch struct {
	Matched []Match       // problems both runs measured, in the current run's order
	Gone    []Measurement // best of problems only the baseline measured
	New     []Measurement // best of problems only the current run measured
}

// MatchRuns pairs two runs problem by problem (speak.Problem: a ger with
// β = 0 is never compared with one with β = 1). Each side of a pair is the
// run's best ok measurement of the shape (BestPerShape), not one fixed
// configuration: a regression check asks whether the shape got slower as
// the tuning table would serve it, and a run that searched again may have
// found another winner. Both sides are chosen by the same rule, so the
// pull of that choice towards a lucky fast median (the least of several
// noisy medians) is alike on both; the samples compared are the chosen
// configurations' own repeats. Shapes with no ok measurement in a run
// count as not measured there.
func (s *Store) MatchRuns(ctx context.Context, baseline, current int64) (RunMatch, error) {
	old, err := s.bestOfRun(ctx, baseline)
	if err != nil {
		return RunMatch{}, err
	}
	cur, err := s.bestOfRun(ctx, current)
	if err != nil {
		return RunMatch{}, err
	}
	byProblem := make(map[speak.Problem]Measurement, len(old))
	for _, m := range old {
		byProblem[m.Config.Problem] = m
	}
	var rm RunMatch
	for _, m := range cur {
		p := m.Config.Problem
		b, ok := byProblem[p]
		if !ok {
			rm.New = append(rm.New, m)
			continue
		}
		rm.Matched = append(rm.Matched, Match{Problem: p, Baseline: b, Current: m})
		delete(byProblem, p)
	}
	for _, m := range old { // in the baseline's order, not the map's
		if _, gone := byProblem[m.Config.Problem]; gone {
			rm.Gone = append(rm.Gone, m)
		}
	}
	return rm, nil
}

// bestOfRun is the best ok measurement of each shape the run measured. A
// run has one environment, so BestPerShape's partition by device is one
// partition.
func (s *Store) bestOfRun(ctx context.Context, id int64) ([]Measurement, error) {
	if _, err := s.Run(ctx, id); err != nil {
		return nil, err
	}
	best, err := s.BestPerShape(ctx, Filter{RunID: id})
	if err != nil {
		return nil, err
	}
	ms := make([]Measurement, len(best))
	for i, b := range best {
		ms[i] = b.Measurement
	}
	return ms, nil
}

// ResolveBaseline finds the baseline a user named for comparison with
// cur: "last" is RunBefore(cur), a number is that run, and a tag is the
// latest run with the tag other than cur, so that a nightly job can name
// its own tag as the baseline. A tag skips failed runs and runs on other
// devices: a nightly job that broke, or ran elsewhere, is no baseline.
func (s *Store) ResolveBaseline(ctx context.Context, ref string, cur Run) (Run, error) {
	if ref == "last" {
		return s.RunBefore(ctx, cur)
	}
	if _, err := strconv.ParseInt(ref, 10, 64); err == nil {
		return s.ResolveRun(ctx, ref)
	}
	runs, err := s.Runs(ctx, ref)
	if err != nil {
		return Run{}, err
	}
	for _, r := range runs {
		if r.ID != cur.ID && r.Status != Failed && r.Env.Device == cur.Env.Device {
			return r, nil
		}
	}
	return Run{}, fmt.Errorf("%w: no run id or tag %q in %s other than run %d", ErrNoRun, ref, s.path, cur.ID)
}

// RunBefore returns the latest run begun before r on r's device: the
// baseline "last" of a regression check. Runs on other devices sharing the
// database are skipped, since comparing two devices is no regression check.
func (s *Store) RunBefore(ctx context.Context, r Run) (Run, error) {
	prev, err := scanRun(s.db.QueryRowContext(ctx, runColumns+` WHERE r.id < ? AND e.device = ? ORDER BY r.id DESC LIMIT 1`,
		r.ID, r.Env.Device))
	if errors.Is(err, sql.ErrNoRows) {
		return prev, fmt.Errorf("%w: no run on %s before run %d in %s", ErrNoRun, r.Env.Device, r.ID, s.path)
	}
	return prev, s.describe(err)
}
