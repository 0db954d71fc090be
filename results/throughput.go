package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Throughput is how fast a run evaluated configurations and where its wall
// time went, summed over the shapes it tuned and the processes that ran it.
type Throughput struct {
	Evaluations int
	WallSeconds float64
	Phases      map[string]float64 // wall seconds per phase; they add up to WallSeconds
}

// EvaluationsPerSecond is the run's rate; 0 when it took no time.
func (t Throughput) EvaluationsPerSecond() float64 {
	if t.WallSeconds <= 0 {
		return 0
	}
	return float64(t.Evaluations) / t.WallSeconds
}

// AddThroughput adds the evaluations and time split of one tuned shape to
// the run's, in one transaction.
func (s *Store) AddThroughput(ctx context.Context, runID int64, t Throughput) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_throughput (run_id, evaluations, wall_s) VALUES (?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET evaluations = evaluations + excluded.evaluations, wall_s = wall_s + excluded.wall_s`,
			runID, t.Evaluations, t.WallSeconds); err != nil {
			return err
		}
		for phase, seconds := range t.Phases {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_time_split (run_id, phase, seconds) VALUES (?, ?, ?)
				ON CONFLICT (run_id, phase) DO UPDATE SET seconds = seconds + excluded.seconds`,
				runID, phase, seconds); err != nil {
				return err
			}
		}
		return nil
	})
	return s.describe(err)
}

// Throughput returns what AddThroughput stored for a run: zero evaluations
// and no phases when none was stored (a run killed before its first shape
// finished, or written by an older tltune).
func (s *Store) Throughput(ctx context.Context, runID int64) (Throughput, error) {
	t := Throughput{Phases: map[string]float64{}}
	err := s.db.QueryRowContext(ctx, `SELECT evaluations, wall_s FROM run_throughput WHERE run_id = ?`, runID).
		Scan(&t.Evaluations, &t.WallSeconds)
	if errors.Is(err, sql.ErrNoRows) {
		return t, nil
	}
	if err != nil {
		return t, s.describe(err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT phase, seconds FROM run_time_split WHERE run_id = ?`, runID)
	if err != nil {
		return t, s.describe(err)
	}
	defer rows.Close()
	for rows.Next() {
		var phase string
		var seconds float64
		if err := rows.Scan(&phase, &seconds); err != nil {
			return t, s.describe(err)
		}
		t.Phases[phase] = seconds
	}
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("time split of run %d: %w", runID, s.describe(err))
	}
	return t, nil
}
