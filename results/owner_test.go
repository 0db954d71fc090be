package results

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// endedPID is the pid of a process of this host that has ended (and was
// reaped).
func endedPID(t *testing.T) int {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	return child.ProcessState.Pid()
}

// TestResumeRefusesLiveOwner: a running run whose owner is alive — on
// this host, its process runs with its start; on another, its heartbeat
// is recent — is refused and stays its owner's. A dead owner's run, a run
// of an older tltune (no owner) and a finished run are resumed, and this
// process owns them then.
func TestResumeRefusesLiveOwner(t *testing.T) {
	me := ThisProcess()
	now := time.Now()
	stale := now.Add(-StaleAfter - time.Second)
	other := func(host string, pid int, start string) Owner {
		return Owner{Host: host, PID: pid, Start: start, Token: "another process"}
	}
	aliveHere := other(me.Host, me.PID, me.Start) // a process that runs, as another would
	for _, c := range []struct {
		name      string
		owner     Owner
		heartbeat time.Time
		status    RunStatus
		live      bool
	}{
		{"running here", aliveHere, now, Running, true},
		{"running here, stopped (old heartbeat)", aliveHere, stale, Running, true},
		{"ended here", other(me.Host, endedPID(t), "boot/1"), now, Running, false},
		{"pid reused here", other(me.Host, me.PID, "boot/1"), now, Running, false},
		{"pid runs here, start untold, recent heartbeat", other(me.Host, me.PID, ""), now, Running, true},
		{"pid runs here, start untold, stale heartbeat", other(me.Host, me.PID, ""), stale, Running, false},
		{"another host, recent heartbeat", other("node7.invalid", 1234, "boot/1"), now.Add(-StaleAfter / 2), Running, true},
		{"another host, stale heartbeat", other("node7.invalid", 1234, "boot/1"), stale, Running, false},
		{"this process", me, now, Running, false},
		{"alive, but it finished the run", aliveHere, now, Interrupted, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t)
			run, err := s.BeginRun(ctx, h200, Run{Op: "gemm", Owner: c.owner, Heartbeat: c.heartbeat})
			if err != nil {
				t.Fatal(err)
			}
			if c.status != Running {
				execSQL(t, s, `UPDATE runs SET status = ? WHERE id = ?`, c.status, run.ID)
			}
			resumed, err := s.ResumeRun(ctx, run.ID)
			after, rerr := s.Run(ctx, run.ID)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var live *LiveRunError
			switch {
			case c.live && !errors.As(err, &live):
				t.Fatalf("resumed: %v; want a LiveRunError", err)
			case c.live:
				if live.ID != run.ID || live.Owner != c.owner || !live.Heartbeat.Equal(c.heartbeat.Truncate(time.Nanosecond)) {
					t.Errorf("refusal %+v, want run %d, owner %+v, heartbeat %v", live, run.ID, c.owner, c.heartbeat)
				}
				if after.Owner != c.owner || after.Status != c.status {
					t.Errorf("the refused run became %s, owned by %+v", after.Status, after.Owner)
				}
			case err != nil:
				t.Fatalf("refused: %v", err)
			case resumed.Owner != me || after.Owner != me || after.Status != Running || !after.FinishedAt.IsZero():
				t.Errorf("resumed: %s owned by %+v (stored %+v), want running, owned by this process %+v", after.Status, resumed.Owner, after.Owner, me)
			}
		})
	}
}

func execSQL(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
		t.Fatal(err)
	}
}

// TestResumeOlderRun: a running run of an older tltune, which recorded no
// owner, is resumed as before.
func TestResumeOlderRun(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	s.stopBeat(run.ID)
	execSQL(t, s, `UPDATE runs SET owner_host = NULL, owner_pid = NULL, owner_start = NULL, owner_token = NULL, heartbeat_at = NULL`)
	if r, err := s.Run(ctx, run.ID); err != nil || r.Owner != (Owner{}) || !r.Heartbeat.IsZero() {
		t.Fatalf("an older run reads as owned by %+v, heartbeat %v (%v)", r.Owner, r.Heartbeat, err)
	}
	if r, err := s.ResumeRun(ctx, run.ID); err != nil || r.Owner != ThisProcess() {
		t.Errorf("resuming an older run: %v, owner %+v", err, r.Owner)
	}
}

// TestTakenOverRunRefusesWrites: once another process resumed a run (it
// took this one for dead), this one's writes are refused and leave the run
// to it.
func TestTakenOverRunRefusesWrites(t *testing.T) {
	s := openTemp(t)
	run := begin(t, s, h200, "")
	record(t, s, run.ID, ok(gemm(64, 64, 32, 8), 100))
	execSQL(t, s, `UPDATE runs SET owner_token = 'another process', owner_pid = 4321, owner_host = 'node7' WHERE id = ?`, run.ID)
	want := "run 1 was resumed by another process, 4321@node7"
	for name, err := range map[string]error{
		"Record":       second(s.Record(ctx, run.ID, ok(gemm(64, 64, 32, 16), 90))),
		"Retime":       s.Retime(ctx, run.ID, ok(gemm(64, 64, 32, 8), 95)),
		"RecordPruned": s.RecordPruned(ctx, run.ID, []PrunedCount{{Problem: gemm(64, 64, 32, 8).Problem, Rule: "registers", Count: 1}}),
		"FinishRun":    s.FinishRun(ctx, run.ID, Failed, time.Time{}),
	} {
		if !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s into a run another process resumed: %v; want %q", name, err, want)
		}
	}
	after, err := s.Run(ctx, run.ID)
	ms, merr := s.Measurements(ctx, run.ID)
	if err != nil || merr != nil || after.Status != Running || len(ms) != 1 || ms[0].MedianNS != 100 {
		t.Errorf("the run became %s with %d measurements (%v, %v); want it as the other process left it", after.Status, len(ms), err, merr)
	}
}

func second[T any](_ T, err error) error { return err }

// TestHeartbeat: the owner refreshes the heartbeat of its run while it
// runs, on a timer and with each measurement, and stops with the run.
func TestHeartbeat(t *testing.T) {
	old := HeartbeatInterval
	t.Cleanup(func() { HeartbeatInterval = old })
	HeartbeatInterval = time.Millisecond
	s := openTemp(t)
	past := time.Now().Add(-time.Hour)
	run, err := s.BeginRun(ctx, h200, Run{Op: "gemm", Heartbeat: past})
	if err != nil {
		t.Fatal(err)
	}
	if !beatsAfter(t, s, run.ID, past) {
		t.Fatal("no heartbeat in a minute")
	}
	if err := s.FinishRun(ctx, run.ID, Interrupted, time.Time{}); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	beating := len(s.beats)
	s.mu.Unlock()
	if beating != 0 {
		t.Errorf("%d heartbeats after the run finished", beating)
	}

	HeartbeatInterval = time.Hour // only measurements beat
	execSQL(t, s, `UPDATE runs SET heartbeat_at = ?`, formatTime(past))
	if _, err := s.ResumeRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	execSQL(t, s, `UPDATE runs SET heartbeat_at = ?`, formatTime(past))
	record(t, s, run.ID, ok(gemm(64, 64, 32, 8), 100))
	if r, _ := s.Run(ctx, run.ID); !r.Heartbeat.After(past) {
		t.Errorf("heartbeat %v after a measurement, want later than %v", r.Heartbeat, past)
	}
}

// beatsAfter waits up to a minute for the heartbeat of run id to be later
// than t0.
func beatsAfter(t *testing.T, s *Store, id int64, t0 time.Time) bool {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Heartbeat.After(t0) {
			return true
		}
	}
	return false
}

// TestMigrateOwner opens a store of schema 8, from before runs recorded
// their owner, holding a run left running: it reads with no owner, and
// resuming it makes this process its owner.
func TestMigrateOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db := schemaAt(t, path, 8)
	oldRun(t, db, "running")
	db.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := schemaRows(t, s); n != SchemaVersion() {
		t.Errorf("schema version %d after the migration, want %d", n, SchemaVersion())
	}
	r, err := s.Run(ctx, 1)
	if err != nil || r.Status != Running || r.Owner != (Owner{}) || !r.Heartbeat.IsZero() {
		t.Fatalf("the old run reads as %s, owner %+v, heartbeat %v (%v)", r.Status, r.Owner, r.Heartbeat, err)
	}
	if r, err = s.ResumeRun(ctx, 1); err != nil || r.Owner != ThisProcess() || r.Heartbeat.IsZero() {
		t.Errorf("resuming the old run: %v, owner %+v, heartbeat %v", err, r.Owner, r.Heartbeat)
	}
}

// TestKilled: a running run whose owner is dead was killed; one whose
// owner lives, of this process, of an older tltune (no owner) or that
// ended is not.
func TestKilled(t *testing.T) {
	node7 := Owner{Host: "node7.invalid", PID: 4321, Token: "a tltune on node7"}
	now, stale := time.Now(), time.Now().Add(-StaleAfter-time.Second)
	for _, c := range []struct {
		run    Run
		killed bool
	}{
		{Run{Status: Running, Owner: node7, Heartbeat: stale}, true},
		{Run{Status: Running, Owner: node7, Heartbeat: now}, false},
		{Run{Status: Running, Owner: ThisProcess(), Heartbeat: stale}, false},
		{Run{Status: Running}, false},
		{Run{Status: Interrupted, Owner: node7, Heartbeat: stale}, false},
	} {
		if got := c.run.Killed(); got != c.killed {
			t.Errorf("%s run of %v, heartbeat %v: killed %v, want %v", c.run.Status, c.run.Owner, c.run.Heartbeat, got, c.killed)
		}
	}
}
