package main

import (
	stdctx "context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tltune/results"
)

// replayDB stores one exhaustive run of ten configurations whose medians fall
// from 1000 to 550 ns in enumeration order (the optimum comes last), then
// a wrong result, and returns the database.
func replayDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	r := begin(t, s, results.Environment{Device: "dev", Runtime: "opencl"}, "", at)
	for i := range 10 {
		if _, err := s.Record(stdctx.Background(), r.ID, timed(gemmConfig(32, 32*(i+1)), float64(1000-50*i), at)); err != nil {
			t.Fatal(err)
		}
	}
	wrong := results.Measurement{Config: gemmConfig(16, 16), Outcome: results.WrongResult, Message: "relative error 1", MeasuredAt: at}
	if _, err := s.Record(stdctx.Background(), r.ID, wrong); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplay(t *testing.T) {
	db := replayDB(t)
	status, stdout, stderr := tltune("replay", "--db", db, "--run", "1", "--trials", "3")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	// Exhaustive proposes in enumeration order: only the tenth
	// configuration is within 5 % of the optimum.
	for _, want := range []string{"11 configurations evaluated (1 failed)", "optimum 550.0 ns", "10.0 │  10 │   10.0 │  10 │", "100.0 %"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay output lacks %q:\n%s", want, stdout)
		}
	}
	status, stdout, stderr = tltune("replay", "--db", db, "--strategy", "exhaustive", "--in-flight", "4")
	if status != exitOK || !strings.Contains(stdout, "4 in flight") || !strings.Contains(stdout, "10.0 │  10 │   10.0 │  10 │") {
		t.Errorf("4 in flight: status %d, want the exhaustive count unchanged and the setting named\n%s%s", status, stdout, stderr)
	}
	status, stdout, stderr = tltune("replay", "--db", db, "--tolerance", "90%", "--strategy", "exhaustive")
	if status != exitOK || !strings.Contains(stdout, " 1.0 │   1 │    1.0 │   1 │") {
		t.Errorf("a 90%% tolerance accepts the first configuration: status %d\n%s%s", status, stdout, stderr)
	}
	// The tenth configuration is found: a budget of 9 never gets there.
	status, stdout, stderr = tltune("replay", "--db", db, "--strategy", "exhaustive", "--budget", "9")
	if status != exitOK || !strings.Contains(stdout, "found within 9") || !strings.Contains(stdout, "0.0 %") {
		t.Errorf("budget 9: status %d, want no trial found within it\n%s%s", status, stdout, stderr)
	}
	// Several budgets: a column each, and in JSON a share each, the
	// first also as the single budget's.
	status, stdout, stderr = tltune("replay", "--db", db, "--strategy", "exhaustive", "--budget", "9,10", "--json")
	var rep replayReport
	if err := json.Unmarshal([]byte(stdout), &rep); status != exitOK || err != nil {
		t.Fatalf("budgets 9,10: status %d, %v\n%s", status, err, stderr)
	}
	want := []foundWithin{{9, 0}, {10, 100}}
	if s := rep.Strategies[0]; rep.Budget != 9 || s.FoundPercent != 0 || !slices.Equal(s.FoundWithin, want) {
		t.Errorf("budgets 9,10: budget %d, found %v and %+v; want 9, 0 and %+v", rep.Budget, s.FoundPercent, s.FoundWithin, want)
	}
	if status, stdout, _ = tltune("replay", "--db", db, "--strategy", "exhaustive", "--budget", "9,10"); status != exitOK ||
		!strings.Contains(stdout, "found within 9 │ found within 10") {
		t.Errorf("budgets 9,10: status %d, want a column each\n%s", status, stdout)
	}
}

func TestReplayErrors(t *testing.T) {
	db := replayDB(t)
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"--strategy", "annealing"}, exitUsage, "--strategy"},
		{[]string{"--tolerance", "150%"}, exitUsage, "--tolerance"},
		{[]string{"--trials", "0"}, exitUsage, "--trials"},
		{[]string{"--in-flight", "0"}, exitUsage, "--in-flight"},
		{[]string{"--budget", "0"}, exitUsage, "--budget"},
		{[]string{"--budget", "48,x"}, exitUsage, `--budget: "x" is not a number`},
		{[]string{"--budget", "48,80,48"}, exitUsage, "--budget: 48 is given twice"},
		{[]string{"--strategy", "gp,random,gp"}, exitUsage, "--strategy: gp is given twice"},
		{[]string{"--run", "99"}, exitUsage, "99"},
		{[]string{"--run", "1", "gp"}, exitUsage, `unexpected argument "gp"`},
	} {
		status, stdout, stderr := tltune(append([]string{"replay", "--db", db}, tc.args...)...)
		checkOneLine(t, status, tc.status, stdout, stderr, tc.want)
	}
	status, stdout, stderr := tltune("replay", "--db", filepath.Join(t.TempDir(), "none.db"))
	checkOneLine(t, status, exitUsage, stdout, stderr, "none.db")
}
