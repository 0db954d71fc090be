package results

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// schema1 writes a database of schema version 1 holding rows as tltune
// wrote them before α and β were keyed: a `tltune ger --beta 1` run, a
// sweep of the shipped nightly suite (whose GER has β = 1), and a plain
// gemv run, each with configurations the rules pruned; one configuration
// the recipe refused; and one pruned row shared by all three runs.
func schema1(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", dsn(path, "_foreign_keys=on"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`,
		migrations[0].sql,
		`INSERT INTO schema_version VALUES (1, '2026-11-20T00:00:00.000000000Z')`,
		`INSERT INTO environments VALUES (1, 'fp', 'PoCL', 'pocl', '5', 'opencl', 'h', 'v', '', 'c', NULL, NULL)`,
		`INSERT INTO runs VALUES (1, 1, '2026-11-20T01:00:00.000000000Z', NULL, 'bin/tltune ger --m 32 --n 32 --beta 1', '', 'ger', 'done')`,
		`INSERT INTO runs VALUES (2, 1, '2026-11-20T02:00:00.000000000Z', NULL, 'tltune sweep --tag nightly nightly --remeasure', 'nightly', 'sweep', 'done')`,
		`INSERT INTO runs VALUES (3, 1, '2026-11-20T03:00:00.000000000Z', NULL, 'tltune gemv --m 32 --n 32 --alpha=0.5', '', 'gemv', 'done')`,
		`INSERT INTO configs VALUES (1, 'ger', 32, 32, 0, 'f32', 'f32', '', 'strided', '{"subgroup_size":1}', 'h1')`,
		`INSERT INTO configs VALUES (2, 'ger', 32, 32, 0, 'f32', 'f32', '', 'strided', '{"subgroup_size":64}', '')`,
		`INSERT INTO configs VALUES (3, 'ger', 32, 32, 0, 'f32', 'f32', '', 'strided', '{"subgroup_size":2}', 'h2')`,
		`INSERT INTO configs VALUES (4, 'gemv', 32, 32, 0, 'f32', 'f32', 'n', 'strided', '{"subgroup_size":1}', 'h3')`,
		`INSERT INTO configs VALUES (5, 'gemv', 32, 32, 0, 'f32', 'f32', 'n', 'strided', '{"subgroup_size":3}', '')`,
		`INSERT INTO measurements (id, run_id, config_id, outcome, message, median_ns, verified, seed, measured_at) VALUES
			(1, 1, 1, 'ok', '', 100, 1, 1, '2026-11-20T01:00:00.000000000Z'),
			(2, 1, 2, 'pruned', 'subgroup: 64 not supported', NULL, 0, 1, '2026-11-20T01:00:00.000000000Z'),
			(3, 2, 3, 'ok', '', 90, 1, 1, '2026-11-20T01:00:00.000000000Z'),
			(4, 2, 2, 'pruned', 'subgroup: 64 not supported', NULL, 0, 1, '2026-11-20T01:00:00.000000000Z'),
			(5, 3, 4, 'ok', '', 80, 1, 1, '2026-11-20T01:00:00.000000000Z'),
			(6, 3, 2, 'pruned', 'subgroup: 64 not supported', NULL, 0, 1, '2026-11-20T01:00:00.000000000Z'),
			(7, 3, 5, 'pruned', 'recipe: work-group width 3 is not a multiple of the subgroup size', NULL, 0, 1, '2026-11-20T01:00:00.000000000Z')`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// TestMigrateKeysOldRows opens a schema 1 database: every configuration is
// keyed by the α and β its run tuned, pruned rows become counts, and
// nothing measured is lost.
func TestMigrateKeysOldRows(t *testing.T) {
	s, err := Open(schema1(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	best, err := s.BestPerShape(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range best {
		names = append(names, b.Config.Problem.String())
	}
	want := []string{"gemv.n f32 32x32 alpha=0.5", "ger f32 32x32 beta=1"}
	if len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
		t.Fatalf("best per problem after the migration: %q, want %q", names, want)
	}
	if best[1].MedianNS != 90 { // ger β=1: run 1 (--beta 1) and the nightly suite's GER agree
		t.Errorf("ger beta=1 best %v, want the nightly's 90 ns", best[1].MedianNS)
	}
	ger := best[1].Config.Problem
	for run, wantCount := range map[int64]int{1: 1, 2: 1, 3: 2} {
		counts, err := s.PrunedCounts(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) != wantCount {
			t.Errorf("run %d: pruned counts %+v, want %d", run, counts, wantCount)
		}
		if run < 3 && (counts[0].Problem != ger || counts[0].Rule != "subgroup" || counts[0].Count != 1) {
			t.Errorf("run %d: %+v, want 1 by subgroup of %s", run, counts[0], ger)
		}
	}
	counts, _ := s.PrunedCounts(ctx, 3)
	if c := counts[0]; c.Rule != RecipeRule || c.Problem.Alpha != "0.5" {
		t.Errorf("run 3: recipe refusal %+v", c)
	}
	ms, err := s.Measurements(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[1].Outcome != Pruned { // the recipe's refusal stays, so a resume skips it
		t.Errorf("run 3 measurements after the migration: %+v", ms)
	}
	var configs int
	if err := s.db.QueryRow(`SELECT count(*) FROM configs`).Scan(&configs); err != nil || configs != 4 {
		t.Errorf("%d configurations left (%v), want 4: the rule-pruned one goes", configs, err)
	}
}

// TestRecordPruned: counts replace earlier counts of the same rule and
// problem (a resumed run prunes again), and only a running run records.
func TestRecordPruned(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	p := gemm(64, 64, 32, 0).Problem
	for range 2 {
		err := s.RecordPruned(ctx, run.ID, []PrunedCount{{Problem: p, Rule: "registers", Count: 7, Example: "registers: 300 > 255"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	other := p
	other.Beta = "1"
	if err := s.RecordPruned(ctx, run.ID, []PrunedCount{{Problem: other, Rule: "registers", Count: 2, Example: "x"}}); err != nil {
		t.Fatal(err)
	}
	counts, err := s.PrunedCounts(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 2 || counts[0].Count != 7 || counts[0].Problem != p || counts[1].Problem.Beta != "1" {
		t.Errorf("counts %+v", counts)
	}
	if err := s.RecordPruned(ctx, run.ID, []PrunedCount{{Problem: p, Rule: "", Count: 1}}); err == nil {
		t.Error("a count without a rule was stored")
	}
	if err := s.FinishRun(ctx, run.ID, Done, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPruned(ctx, run.ID, []PrunedCount{{Problem: p, Rule: "x", Count: 1}}); err == nil {
		t.Error("a finished run recorded pruned counts")
	}
}
