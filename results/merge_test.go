package results

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMergeRulesCoverSchema checks that every table of the schema has a
// merge rule and every rule a table: a migration that adds a table must
// say how stores holding it merge (results/merge.go, mergeRules).
func TestMergeRulesCoverSchema(t *testing.T) {
	s := openTemp(t)
	names, err := queryStrings(ctx, s.db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, ok := mergeRules[n]; !ok {
			t.Errorf("table %s has no merge rule: add one to mergeRules in results/merge.go", n)
		}
	}
	for n, rule := range mergeRules {
		if !slices.Contains(names, n) {
			t.Errorf("mergeRules has a rule for %s, which the schema lacks", n)
			continue
		}
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		info, err := readTableInfo(ctx, conn, "main", n)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range rule.key {
			if !slices.Contains(info.columns, k) {
				t.Errorf("merge rule of %s: key column %s is not a column", n, k)
			}
		}
	}
	// A merge of a store holding a row in every table exercises every rule.
	src := campaignShard(t, filepath.Join(t.TempDir(), "src.db"), "every-table", 0)
	if _, err := s.Merge(ctx, src); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		var rows int
		if err := s.db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM "%s"`, n)).Scan(&rows); err != nil || rows == 0 {
			t.Errorf("table %s holds %d rows after a merge (%v); want the source's", n, rows, err)
		}
	}
}

var pocl = Environment{Device: "pthread-cpu", Vendor: "GenuineIntel", Driver: "3.1", Runtime: "opencl",
	Host: "ci", Version: "v0.1.0", Commit: "abc123", CompilerVersion: "tltune-cc 0.1"}

// campaignShard writes shard i of a campaign to path: a run whose UUID is
// the campaign's, with its own shape, a count of pruned configurations, a
// ceiling, and throughput totals.
func campaignShard(t *testing.T, path, campaign string, i int) string {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	env := h200
	env.Host = fmt.Sprintf("node%d", i)
	r, err := s.BeginRun(ctx, env, Run{UUID: NameUUID(campaign), CommandLine: fmt.Sprintf("tltune sweep nightly --shard %d/2", i+1),
		Tag: "nightly", Op: "sweep", StartedAt: t0.Add(time.Duration(i) * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	for sg := 16; sg <= 32; sg *= 2 {
		m := ok(gemm(64*(i+1), 64, 32, sg), float64(1000*(i+1)+sg))
		m.Device = fmt.Sprintf("opencl:%d", i)
		record(t, s, r.ID, m)
	}
	pruned := PrunedCount{Problem: gemm(64*(i+1), 64, 32, 0).Problem, Rule: "work-group", Count: 5, Example: "work-group: 2048 > 1024"}
	if err := s.RecordPruned(ctx, r.ID, []PrunedCount{pruned}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddThroughput(ctx, r.ID, Throughput{Evaluations: 2, WallSeconds: 10, Phases: map[string]float64{"time": 6, "compile": 4}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordCeilings(ctx, env, Ceilings{CopyGBS: 4000, MeasuredAt: t0}); err != nil {
		t.Fatal(err)
	}
	status := Done
	if i == 1 {
		status = Failed
	}
	if err := s.FinishRun(ctx, r.ID, status, t0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	return path
}

// dump is every row of every table of the store, in a fixed order.
func dump(t *testing.T, s *Store) string {
	t.Helper()
	names, err := queryStrings(ctx, s.db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range names {
		rows, err := s.db.Query(fmt.Sprintf(`SELECT * FROM "%s" ORDER BY 1, 2`, n))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %v\n", n, vals)
		}
		rows.Close()
	}
	return b.String()
}

// TestMergeCampaign merges the two shards of a campaign: their runs share
// a UUID and become one run holding both shards' measurements, with the
// totals added, the earliest start and the worst status; merging again
// changes nothing.
func TestMergeCampaign(t *testing.T) {
	dir := t.TempDir()
	a := campaignShard(t, filepath.Join(dir, "a.db"), "nightly-42", 0)
	b := campaignShard(t, filepath.Join(dir, "b.db"), "nightly-42", 1)
	s := openTemp(t)
	begin(t, s, pocl, "other") // the destination's own run keeps its id
	var reports []MergeReport
	for _, src := range []string{a, b} {
		rep, err := s.Merge(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, rep)
	}
	if r := reports[0]; r.Added["runs"] != 1 || r.Added["measurements"] != 2 || r.Runs[0].Result != RunNew || r.Runs[0].Into != 2 {
		t.Errorf("first shard: %+v; want a new run 2 with 2 measurements", r)
	}
	if r := reports[1]; r.Added["runs"] != 0 || r.Added["measurements"] != 2 || r.Runs[0].Result != RunJoined || r.Runs[0].Into != 2 {
		t.Errorf("second shard: %+v; want its measurements joined to run 2", r)
	}
	run, err := s.RunByUUID(ctx, NameUUID("nightly-42"))
	if err != nil {
		t.Fatal(err)
	}
	if run.ID != 2 || run.Status != Failed || !run.StartedAt.Equal(t0) || run.Env.Host != "node0" {
		t.Errorf("merged run %+v: want run 2, failed (shard 2 failed), started with shard 1, on node0", run)
	}
	ms, err := s.Measurements(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{}
	for _, m := range ms {
		hosts[m.Device] = m.Env.Host
	}
	if len(ms) != 4 || hosts["opencl:0"] != "node0" || hosts["opencl:1"] != "node1" {
		t.Errorf("merged run holds %d measurements on %v; want 4, each with its shard's host and device", len(ms), hosts)
	}
	checkThroughput(t, s, run.ID, 4, 20)

	before := dump(t, s)
	for _, src := range []string{a, b, a} {
		rep, err := s.Merge(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		for table, n := range rep.Added {
			if n != 0 {
				t.Errorf("merging %s again added %d rows to %s", filepath.Base(src), n, table)
			}
		}
	}
	if after := dump(t, s); after != before {
		t.Errorf("merging the shards again changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func checkThroughput(t *testing.T, s *Store, run int64, evaluations int, wall float64) {
	t.Helper()
	tp, err := s.Throughput(ctx, run)
	if err != nil || tp.Evaluations != evaluations || tp.WallSeconds != wall || tp.Phases["time"]+tp.Phases["compile"] != wall {
		t.Errorf("throughput of run %d: %+v (%v); want %d evaluations in %gs, split alike", run, tp, err, evaluations, wall)
	}
}

// TestMergeUpdatesAPart merges a shard, lets it record more, and merges it
// again: the newer copy replaces the older's totals and adds its new
// measurements.
func TestMergeUpdatesAPart(t *testing.T) {
	shard := campaignShard(t, filepath.Join(t.TempDir(), "a.db"), "c", 0)
	s := openTemp(t)
	if _, err := s.Merge(ctx, shard); err != nil {
		t.Fatal(err)
	}
	src, err := Open(shard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ResumeRun(ctx, 1); err != nil {
		t.Fatal(err)
	}
	record(t, src, 1, ok(gemm(100, 64, 32, 16), 3000))
	if err := src.AddThroughput(ctx, 1, Throughput{Evaluations: 1, WallSeconds: 5, Phases: map[string]float64{"time": 5}}); err != nil {
		t.Fatal(err)
	}
	src.Close()
	rep, err := s.Merge(ctx, shard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Result != RunRefreshed || rep.Added["measurements"] != 1 {
		t.Errorf("second merge of a grown shard: %+v; want the run updated and its new measurement added", rep)
	}
	run, err := s.Run(ctx, 1)
	if err != nil || run.Status != Running {
		t.Errorf("run %+v (%v): want it running, as the shard's copy is", run, err)
	}
	checkThroughput(t, s, 1, 3, 15)
}

// TestMergeOverlap merges a store that holds two shards of a campaign and
// then one of those shards alone: their totals are not counted twice.
func TestMergeOverlap(t *testing.T) {
	dir := t.TempDir()
	a := campaignShard(t, filepath.Join(dir, "a.db"), "c", 0)
	b := campaignShard(t, filepath.Join(dir, "b.db"), "c", 1)
	both := mergedStore(t, filepath.Join(dir, "both.db"), a, b)
	// a alone, then both: both covers a, so its totals replace a's.
	s := mergedStore(t, filepath.Join(dir, "s.db"), a, both.Path())
	checkThroughput(t, s, 1, 4, 20)
	rep, err := s.Merge(ctx, b)
	if err != nil || rep.Runs[0].Result != RunMerged {
		t.Fatalf("merging a part the store has: %+v, %v; want it %s", rep, err, RunMerged)
	}
	checkThroughput(t, s, 1, 4, 20)

	t2 := mergedStore(t, filepath.Join(dir, "t2.db"), both.Path())
	if rep, err = t2.Merge(ctx, a); err != nil || rep.Runs[0].Result != RunMerged {
		t.Errorf("merging one shard into the merge of two: %s, want %s", rep.Runs[0].Result, RunMerged)
	}
	checkThroughput(t, t2, 1, 4, 20)

	// A store holding shard a and a new part c overlaps one holding a and
	// b: neither's totals can be added without counting a twice.
	c := campaignShard(t, filepath.Join(dir, "c.db"), "c", 2)
	ac := mergedStore(t, filepath.Join(dir, "ac.db"), a, c)
	rep, err = t2.Merge(ctx, ac.Path())
	if err != nil || rep.Runs[0].Result != RunOverlap || rep.Added["measurements"] != 2 {
		t.Errorf("merging overlapping stores: %+v (%v); want %s, with c's measurements added", rep, err, RunOverlap)
	}
	checkThroughput(t, t2, 1, 4, 20)
}

// mergedStore opens a new store at path and merges the sources into it.
func mergedStore(t *testing.T, path string, sources ...string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, src := range sources {
		if _, err := s.Merge(ctx, src); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestMergeRefuses checks that stores that cannot be merged are refused
// with one line naming the file, and the destination is left alone.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	newerDatabase(t, newer)
	foreign := filepath.Join(dir, "photos.db")
	foreignDatabase(t, foreign)
	s := openTemp(t)
	begin(t, s, h200, "mine")
	before := dump(t, s)
	for _, tc := range []struct{ path, want string }{
		{newer, "newer.db: it has schema version 99, newer than this tltune's"},
		{foreign, "photos.db is not a usable tltune results database"},
		{filepath.Join(dir, "none.db"), "cannot merge " + filepath.Join(dir, "none.db") + ": no such file"},
		{s.Path(), "into itself"},
	} {
		_, err := s.Merge(ctx, tc.path)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("merge of %s: %v; want one line with %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	if !errors.Is(CheckMergeable(newer), ErrMergeSchema) {
		t.Errorf("CheckMergeable(newer) does not wrap ErrMergeSchema")
	}
	if dump(t, s) != before {
		t.Error("a refused merge changed the destination")
	}
}

// TestMergeOlderSchema merges a store written by a tltune of schema
// version 1 (before runs had UUIDs) from an upgraded copy, leaving the
// source as it was.
func TestMergeOlderSchema(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old.db")
	execRaw(t, old, `CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
		INSERT INTO schema_version VALUES (1, 'then');`+migrations[0].sql+`
		INSERT INTO environments (fingerprint, device, vendor, driver, runtime, host, tltune_version, git_commit, compiler_version)
			VALUES ('f', 'Old GPU', 'v', 'd', 'opencl', 'h', 'v0', 'c', 'cc');
		INSERT INTO runs (environment_id, started_at, command_line, tag, op, status) VALUES (1, '2026-01-01T00:00:00.000000000Z', 'tltune gemm', 'old', 'gemm', 'done');
		INSERT INTO configs (op, m, n, k, dtype, acc, trans, layout, params, source_hash) VALUES ('gemm', 8, 8, 8, 'f32', 'f32', 'nn', 'strided', '{}', 'h');
		INSERT INTO measurements (run_id, config_id, outcome, message, median_ns, verified, seed, measured_at)
			VALUES (1, 1, 'ok', '', 5, 1, 1, '2026-01-01T00:00:00.000000000Z');`)
	s := openTemp(t)
	rep, err := s.Merge(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, "old")
	if err != nil || len(runs) != 1 || len(runs[0].UUID) != 36 || rep.Added["measurements"] != 1 {
		t.Fatalf("merged old store: runs %+v (%v), report %+v; want its run, with a UUID, and its measurement", runs, err, rep)
	}
	ms, err := s.Measurements(ctx, runs[0].ID)
	if err != nil || len(ms) != 1 || ms[0].Env.Device != "Old GPU" {
		t.Errorf("measurements of the old run: %+v (%v); want one, in the run's environment", ms, err)
	}
	db, err := sql.Open("sqlite3", "file:"+old+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&v); err != nil || v != 1 {
		t.Errorf("the source's schema version is %d (%v) after the merge; want it untouched at 1", v, err)
	}
}

func TestNameUUID(t *testing.T) {
	a, b := NameUUID("slurm-1234"), NameUUID("slurm-1235")
	if a == b || a != NameUUID("slurm-1234") || len(a) != 36 || a[14] != '5' || NewUUID() == NewUUID() || NewUUID()[14] != '4' {
		t.Errorf("NameUUID: %s, %s; NewUUID: %s", a, b, NewUUID())
	}
}
