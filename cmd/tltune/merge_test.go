package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/results"
)

// splitStore copies the store at path into two shards as the tasks of a
// job array would have written them: every run is in both, with the GEMM
// measurements in the first and the others in the second, and the second
// recorded each run as a part of its own.
func splitStore(t *testing.T, path string) (gemms, others string) {
	t.Helper()
	dir := t.TempDir()
	gemms, others = filepath.Join(dir, "gemms.db"), filepath.Join(dir, "others.db")
	data := readFile(t, path)
	for shard, keep := range map[string]string{gemms: "=", others: "<>"} {
		if err := os.WriteFile(shard, data, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite3", "file:"+shard+"?_journal_mode=DELETE")
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Exec(`DELETE FROM measurements WHERE config_id IN (SELECT id FROM configs WHERE NOT (op ` + keep + ` 'gemm'))`)
		if err == nil && keep == "<>" {
			_, err = db.Exec(`UPDATE run_parts SET part = part || '-others'`)
		}
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return gemms, others
}

// TestMergeLikeOneStore checks that table, regress, history and roofline
// print the same from the merge of a store's shards as from the store
// itself.
func TestMergeLikeOneStore(t *testing.T) {
	one := nightlyDB(t)
	gemms, others := splitStore(t, one)
	merged := filepath.Join(t.TempDir(), "merged.db")
	status, out, errOut := tltune("merge", merged, gemms, others)
	if status != exitOK || errOut != "" || !strings.Contains(out, "gemms.db: run 1 → 1 new, run 2 → 2 new") ||
		!strings.Contains(out, "others.db: run 1 → 1 joined") || !strings.Contains(out, "into "+merged+": runs 1,2,3,4; added ") {
		t.Fatalf("merge: status %d\n%s%s", status, out, errOut)
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"table"},
		{"regress", "--baseline", "1", "--run", "2"},
		{"regress", "--baseline", "nightly", "--run", "3"},
		append(append([]string{}, gemmHistoryArgs...), "--device", "h200"),
		{"roofline", "--run", "1", "-o", filepath.Join(dir, "roofline.svg")},
	} {
		var outputs [2]string
		for i, db := range []string{one, merged} {
			status, out, errOut := tltune(append(args, "--db", db)...)
			if chart := filepath.Join(dir, "roofline.svg"); args[0] == "roofline" {
				out += string(readFile(t, chart))
			}
			outputs[i] = strings.ReplaceAll(out+errOut, db, "DB") + string(rune('0'+status))
		}
		if outputs[0] != outputs[1] {
			t.Errorf("tltune %v: the merged store gives\n%s\nthe single store\n%s", args, outputs[1], outputs[0])
		}
	}

	// Merging again changes nothing, and says so.
	status, out, errOut = tltune("merge", merged, gemms, others)
	if status != exitOK || strings.Count(out, "added nothing (everything was merged before)") != 3 {
		t.Errorf("second merge: status %d\n%s%s", status, out, errOut)
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.db")
	newer := filepath.Join(dir, "newer.db")
	writeNewerStore(t, newer)
	good := fixtureDB(t)
	text := filepath.Join(dir, "text.db")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge"}, "name the store to merge into and at least one store to merge"},
		{[]string{"merge", out}, "name the store to merge into and at least one store to merge"},
		{[]string{"merge", out, good, newer}, "newer.db: it has schema version 99, newer than this tltune's"},
		{[]string{"merge", out, filepath.Join(dir, "none.db")}, "none.db: no such file or directory"},
		{[]string{"merge", out, good, "--bogus"}, "flag provided but not defined: -bogus"},
		// merge has no --db: its remedies name its arguments.
		{[]string{"merge", out, dir}, "is a folder, not a usable tltune results database; merge results store files only (tltune merge OUT.db IN.db...)"},
		{[]string{"merge", out, text}, "text.db is not a usable tltune results database (it is not an SQLite file); merge results store files only"},
		{[]string{"merge", dir, good}, "is a folder, not a usable tltune results database; merge into another file (a new one is created)"},
		{[]string{"merge", text, good}, "text.db is not a usable tltune results database (it is not an SQLite file); merge into another file"},
		{[]string{"merge", newer, good}, "newer.db has schema version 99, this tltune knows up to"},
		{[]string{"merge", newer, good}, "; upgrade tltune or merge into another file"},
	} {
		status, stdout, stderr := tltune(tc.args...)
		checkOneLine(t, status, exitUsage, stdout, stderr, tc.want)
		if strings.Contains(stderr, "--db") {
			t.Errorf("tltune %q names --db, which merge does not have: %s", tc.args, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused merge created the output store")
	}
}

// writeNewerStore writes a store whose schema a later tltune wrote.
func writeNewerStore(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, readFile(t, fixtureDB(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO schema_version VALUES (99, 'future')`); err != nil {
		t.Fatal(err)
	}
}

// TestShardsMergeIntoOneRun sweeps the tiny suite as the two tasks of a
// job array would, each into its own store: together they tune every
// shape once, a task started again resumes its part, and the merged store
// holds one run that table, regress, history and roofline read like any.
func TestShardsMergeIntoOneRun(t *testing.T) {
	dev := poclDevice(t)
	dir := t.TempDir()
	shards := []string{filepath.Join(dir, "1.db"), filepath.Join(dir, "2.db")}
	shapes := map[string]int{}
	for i, db := range shards {
		status, out, errOut := tltune(tinySweep(db, dev, "--shard", fmt.Sprintf("%d/2", i+1), "--campaign", "test-7", "--json")...)
		var rep sweepReport
		if status != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Shard != fmt.Sprintf("%d/2", i+1) {
			t.Fatalf("shard %d/2: status %d\n%s%s", i+1, status, out, errOut)
		}
		for _, s := range rep.Shapes {
			shapes[s.Name]++
		}
	}
	if len(shapes) != 3 {
		t.Errorf("the two shards swept %v; want the tiny suite's 3 shapes once each", shapes)
	}
	for shape, n := range shapes {
		if n != 1 {
			t.Errorf("%s swept %d times", shape, n)
		}
	}
	// Started again, shard 1 resumes its run: nothing is measured again.
	st := openResults(t, shards[0])
	before := len(evaluatedConfigs(t, st, 1))
	if status, out, errOut := tltune(tinySweep(shards[0], dev, "--shard", "1/2", "--campaign", "test-7")...); status != exitOK {
		t.Fatalf("shard 1/2 again: status %d\n%s%s", status, out, errOut)
	}
	if r := lastRun(t, st); r.ID != 1 || r.Status != results.Done || r.UUID != campaignUUID("test-7") || len(evaluatedConfigs(t, st, 1)) != before {
		t.Errorf("shard 1 after a second start: latest run %+v; want run 1 of campaign test-7, done, with its %d evaluations only", r, before)
	}

	merged := filepath.Join(dir, "merged.db")
	if status, out, errOut := tltune(append([]string{"merge", merged}, shards...)...); status != exitOK {
		t.Fatalf("merge: status %d\n%s%s", status, out, errOut)
	}
	status, out, errOut := tltune("table", "--db", merged)
	if n := strings.Count(out, `"params"`); status != exitOK || n != 3 {
		t.Errorf("table of the merged store: status %d, %d entries; want 3\n%s%s", status, n, out, errOut)
	}
	checkEvaluations(t, openResults(t, merged), 1, 2)

	// The nightly job of a campaign: a shard re-measures the merged
	// store's tuning table into a store of its own, merged in afterwards.
	table, nightly := filepath.Join(dir, "tuning.json"), filepath.Join(dir, "nightly.db")
	if status, out, errOut := tltune("table", "--db", merged, "-o", table); status != exitOK {
		t.Fatalf("table: status %d\n%s%s", status, out, errOut)
	}
	status, out, errOut = tltune(tinySweep(nightly, dev, "--remeasure", "--stored", table, "--json")...)
	var rep sweepReport
	if status != exitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Shapes) != 3 {
		t.Fatalf("remeasure of the table: status %d\n%s%s", status, out, errOut)
	}
	for _, s := range rep.Shapes {
		if s.Action != actionRemeasured || s.Stored == nil || s.Stored.Run != 1 {
			t.Errorf("%s: %s, stored %+v; want the table's configuration of run 1 re-measured", s.Name, s.Action, s.Stored)
		}
	}
	if status, out, errOut := tltune("merge", merged, nightly); status != exitOK {
		t.Fatalf("merge of the nightly store: status %d\n%s%s", status, out, errOut)
	}
	for _, args := range [][]string{
		{"regress", "--baseline", "1", "--run", "2"},
		{"history", "--op", "gemv", "--m", "17", "--n", "17"},
		{"roofline", "--run", "1", "-o", filepath.Join(dir, "roofline.svg")},
	} {
		status, out, errOut := tltune(append(args, "--db", merged)...)
		if (status != exitOK && !(args[0] == "regress" && status == exitRegression)) || strings.Contains(out+errOut, "only in run") {
			t.Errorf("tltune %v on the merged store: status %d\n%s%s", args, status, out, errOut)
		}
	}
}
