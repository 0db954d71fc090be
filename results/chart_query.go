package results

import (
	"context"
	"fmt"

	"tltune/internal/speak"
)

// A ShapeQuery selects the measurements of one shape across runs. Op, M, N
// and K must match exactly (K is 0 for gemv and ger); an empty string field
// matches any value, and Device selects the devices as in Filter. Atomic
// must match when Beta is given
// (the tuning commands' --beta sets both). Precision is spelt as flags
// spell it (speak.ExactPrecision for the key's "").
type ShapeQuery struct {
	Op                        string
	M, N, K                   int
	Trans, Dtype, Acc, Layout string
	Alpha, Beta               string
	Atomic                    bool
	Precision                 string
	Device                    DeviceMatch
}

// A RunBest is one run's best ok measurement of a shape.
type RunBest struct {
	Run Run
	Measurement
}

// ShapeHistory returns, for every run that measured a shape matching q
// with an ok outcome, the run's best measurement of each matching shape,
// oldest run first. When q leaves a field open that the runs filled in
// differently (two dtypes, two devices), each variant has its own entries;
// the caller decides whether that is one history or several.
func (s *Store) ShapeHistory(ctx context.Context, q ShapeQuery) ([]RunBest, error) {
	best, err := collect(ctx, s, scanMeasurement, `WITH ranked AS (
		SELECT m.id AS id, row_number() OVER (
			PARTITION BY m.run_id, `+problemFields+`
			ORDER BY m.median_ns, m.id) AS rank
		FROM measurements m
		JOIN configs c ON c.id = m.config_id
		JOIN environments e ON e.id = m.environment_id
		WHERE m.outcome = 'ok'
		  AND c.op = ?1 AND c.m = ?2 AND c.n = ?3 AND c.k = ?4
		  AND (?5 = '' OR c.trans = ?5) AND (?6 = '' OR c.dtype = ?6)
		  AND (?7 = '' OR c.acc = ?7) AND (?8 = '' OR c.layout = ?8)
		  AND `+matchDevice("?9", "?13")+`
		  AND (?10 = '' OR c.alpha = ?10) AND (?11 = '' OR (c.beta = ?11 AND c.atomic = ?12))
		  AND (?14 = '' OR c.precision = (CASE ?14 WHEN ?15 THEN '' ELSE ?14 END)))
	SELECT `+measurementFields+measurementFrom+`
		JOIN ranked ON ranked.id = m.id AND ranked.rank = 1
		JOIN runs r ON r.id = m.run_id
		ORDER BY r.started_at, r.id, `+problemFields,
		q.Op, q.M, q.N, q.K, q.Trans, q.Dtype, q.Acc, q.Layout, q.Device.Name, q.Alpha, q.Beta, q.Atomic, q.Device.Exact,
		q.Precision, speak.ExactPrecision)
	if err != nil || len(best) == 0 {
		return nil, err
	}
	runs, err := s.runsByID(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]RunBest, len(best))
	for i, m := range best {
		run, ok := runs[m.RunID]
		if !ok { // foreign keys forbid it; say so rather than print a zero run
			return nil, fmt.Errorf("%s: measurement %d belongs to missing run %d", s.path, m.ID, m.RunID)
		}
		out[i] = RunBest{Run: run, Measurement: m}
	}
	return out, nil
}

// runsByID is every run, by id: one query rather than one per history
// entry.
func (s *Store) runsByID(ctx context.Context) (map[int64]Run, error) {
	all, err := s.Runs(ctx, "")
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Run, len(all))
	for _, r := range all {
		byID[r.ID] = r
	}
	return byID, nil
}
