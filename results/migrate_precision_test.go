package results

import (
	"database/sql"
	"path/filepath"
	"testing"

	"tltune/internal/speak"
)

// schemaAt writes a database of the given schema version holding no rows
// at path.
func schemaAt(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn(path, "_foreign_keys=off"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:version] {
		err := inTx(ctx, db, func(tx *sql.Tx) error {
			if _, err := tx.Exec(m.sql); err != nil {
				return err
			}
			if m.apply != nil {
				if err := m.apply(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(`INSERT INTO schema_version VALUES (?, '2026-11-24T00:00:00Z')`, i+1)
			return err
		})
		if err != nil {
			t.Fatalf("schema step %d: %v", i+1, err)
		}
	}
	return db
}

// oldRun writes run 1 of environment 1, with the given status, into a
// database of an older schema (step 3 or later).
func oldRun(t *testing.T, db *sql.DB, status string) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO environments (id, fingerprint, device, vendor, driver, runtime, host, tltune_version, git_commit, compiler_version)
			VALUES (1, 'fp', 'NVIDIA H200', 'NVIDIA', '580', 'opencl', 'h', 'v', '', 'c')`,
		`INSERT INTO runs (id, environment_id, started_at, command_line, op, status, uuid)
			VALUES (1, 1, '2026-11-24T01:00:00Z', 'tltune gemm', 'gemm', '` + status + `', 'u1')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMigratePrecision opens a database of schema 6, from before the
// precision was keyed: its rows become exact problems, and a tf32 run of
// the same shape and configuration is another problem everywhere (its
// own configuration row, best, tuning-table entry and pruned counts).
func TestMigratePrecision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db := schemaAt(t, path, 6)
	oldRun(t, db, "interrupted")
	for _, q := range []string{
		`INSERT INTO configs VALUES (7, 'gemm', 'nn', 'f32', 'f32', 64, 64, 64, '1', '0', 0, 'strided', '{"subgroup_size":32}', 'h')`,
		`INSERT INTO measurements (run_id, config_id, outcome, message, median_ns, verified, seed, measured_at, environment_id)
			VALUES (1, 7, 'ok', '', 100, 1, 1, '2026-11-24T01:00:00Z', 1)`,
		`INSERT INTO pruned VALUES (1, 'gemm', 'nn', 'f32', 'f32', 64, 64, 64, '1', '0', 0, 'strided', 'registers', 3, 'registers: 300 > 255')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, err := s.Measurements(ctx, 1)
	if err != nil || len(ms) != 1 {
		t.Fatalf("measurements after the migration: %+v, %v", ms, err)
	}
	exact := ms[0].Config
	if exact.Precision != "" || exact.Problem.String() != "gemm.nn f32 64x64x64" {
		t.Fatalf("the stored configuration became %+v", exact.Problem)
	}

	if _, err := s.ResumeRun(ctx, 1); err != nil {
		t.Fatal(err)
	}
	tf32 := exact
	tf32.Precision = speak.TF32
	record(t, s, 1, ok(tf32, 50))
	if err := s.RecordPruned(ctx, 1, []PrunedCount{{Problem: tf32.Problem, Rule: "registers", Count: 5, Example: "registers: 400 > 255"}}); err != nil {
		t.Fatal(err)
	}
	var configs int
	if err := s.db.QueryRow(`SELECT count(*) FROM configs`).Scan(&configs); err != nil || configs != 2 {
		t.Errorf("%d configuration rows (%v), want 2: the tf32 one is its own", configs, err)
	}
	table, err := s.TuningTable(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Entries) != 2 || table.Entries[0].Precision != "" || table.Entries[0].MedianNS != 100 ||
		table.Entries[1].Precision != speak.TF32 || table.Entries[1].MedianNS != 50 {
		t.Errorf("tuning table %+v, want the exact 100 ns and the tf32 50 ns entries", table.Entries)
	}
	counts, err := s.PrunedCounts(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 2 || counts[0].Problem != exact.Problem || counts[0].Count != 3 || counts[1].Problem != tf32.Problem || counts[1].Count != 5 {
		t.Errorf("pruned counts %+v", counts)
	}
	problems, err := s.RunProblems(ctx, 1)
	if err != nil || len(problems) != 2 {
		t.Errorf("run problems %v, %v", problems, err)
	}
}
