package results

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"tltune/internal/proc"
)

// The owner of a run. A run stays Running while its process records into
// it, and forever after that process was killed (SIGKILL, a node that
// died); only the second may be resumed, or two processes would record
// into one run and each change its status under the other. So a run
// records its owner, the process that began or last resumed it: host, pid
// and start, and a token of its own. The owner refreshes the run's
// heartbeat every HeartbeatInterval and with each measurement it records.
//
// ResumeRun refuses a running run whose owner is alive (LiveRunError): on
// this host, while its process runs; on another, while its heartbeat is
// recent. What it cannot see may still go wrong — a process on a host
// whose name another shares, a host suspended for longer than StaleAfter —
// so the owner's writes carry its token, and those of a process whose run
// another resumed since are refused (ErrNotOwner) instead of mixing into
// the run or changing its status.

// An Owner is a process that records into a run.
type Owner struct {
	Host  string // host name
	PID   int
	Start string // the process's start on its host (proc.Lookup), which tells a reused pid apart; "" untold
	Token string // random, one per process
}

// String is the owner as pid@host.
func (o Owner) String() string { return fmt.Sprintf("%d@%s", o.PID, o.Host) }

// ThisProcess is the owner of the runs this process begins and resumes.
func ThisProcess() Owner { return thisProcess() }

var thisProcess = sync.OnceValue(func() Owner {
	host, _ := os.Hostname() // "" when unknown: the same on every call
	pid := os.Getpid()
	start, _ := proc.Lookup(pid)
	return Owner{Host: host, PID: pid, Start: start, Token: NewUUID()}
})

// The heartbeat of a run. Variables so that tests need not wait.
var (
	// HeartbeatInterval is how often the owner of a run refreshes its
	// heartbeat (one small UPDATE) besides with each measurement.
	HeartbeatInterval = 10 * time.Second
	// StaleAfter is the age of the heartbeat after which the owner of a
	// run on another host is taken for dead. Six beats: a beat waits up
	// to the busy timeout (5 s) for the write lock of a busy store, a
	// loaded node may run the ticker late, and the clocks of two hosts
	// differ; a live owner taken for dead would have its run resumed
	// under it (its writes then fail: ErrNotOwner). A dead owner on
	// another host is seen a minute late, which a cluster does not
	// notice: Slurm requeues a dead node's tasks only after it gave up
	// on the node (SlurmdTimeout, 300 s by default). On its own host a
	// dead owner is seen at once.
	StaleAfter = 6 * HeartbeatInterval
)

// A LiveRunError is a running run that another process, alive, records
// into: ResumeRun refuses it.
type LiveRunError struct {
	ID        int64
	Owner     Owner
	Heartbeat time.Time // the owner's last
}

func (e *LiveRunError) Error() string {
	return fmt.Sprintf("run %d is being recorded by process %s (last heartbeat %v ago)", e.ID, e.Owner, e.HeartbeatAge())
}

// HeartbeatAge is how long ago the owner's last heartbeat was, to the
// second; 0 for a heartbeat in the future (the owner's clock is ahead).
func (e *LiveRunError) HeartbeatAge() time.Duration {
	return max(time.Since(e.Heartbeat), 0).Round(time.Second)
}

// ErrNotOwner is wrapped by the writes of a process into a run that
// another process resumed since.
var ErrNotOwner = errors.New("resumed by another process")

// alive reports whether o, whose last heartbeat was at heartbeat, may
// still be recording into its run at now. A run of an older tltune has no
// owner, and is taken for dead as before owners were recorded; this
// process is no other process.
func (o Owner) alive(heartbeat, now time.Time) bool {
	me := ThisProcess()
	switch {
	case o.Token == "" || o.Token == me.Token:
		return false
	case o.Host == me.Host:
		start, running := proc.Lookup(o.PID)
		if !running {
			return false
		}
		if start != "" && o.Start != "" {
			// Alive however old its heartbeat: a stopped process
			// (Ctrl-Z) records again when it is continued.
			return start == o.Start
		}
		// A process of that pid runs, which may be another: the
		// heartbeat tells.
	}
	return now.Sub(heartbeat) < StaleAfter
}

// Killed reports whether the run is Running but its owner is dead (its
// process was killed, or its host died): nothing records into it any
// more, and --resume continues it. A run of an older tltune, which
// recorded no owner, is not known to be killed.
func (r Run) Killed() bool {
	me := ThisProcess()
	return r.Status == Running && r.Owner.Token != "" && r.Owner.Token != me.Token && !r.Owner.alive(r.Heartbeat, time.Now())
}

// ownerFields are the owner's columns of a run r; ownerDest scans them.
const ownerFields = `coalesce(r.owner_host, ''), coalesce(r.owner_pid, 0), coalesce(r.owner_start, ''), coalesce(r.owner_token, '')`

func ownerDest(o *Owner) []any { return []any{&o.Host, &o.PID, &o.Start, &o.Token} }

// ownerAssignments set a run's owner and heartbeat to ownerValues' in an
// UPDATE.
const ownerAssignments = `owner_host = ?, owner_pid = ?, owner_start = ?, owner_token = ?, heartbeat_at = ?`

func ownerValues(o Owner, heartbeat time.Time) []any {
	return []any{o.Host, o.PID, o.Start, o.Token, formatTime(heartbeat)}
}

// checkOwner fails with ErrNotOwner when another process than this one
// owns the run.
func checkOwner(runID int64, o Owner) error {
	if o.Token != "" && o.Token != ThisProcess().Token {
		return fmt.Errorf("run %d was %w, %s; this one no longer records into it", runID, ErrNotOwner, o)
	}
	return nil
}

// beat refreshes the heartbeat of run id, which this process owns, every
// HeartbeatInterval until stopBeat or Close, or until the run is no longer
// this process's (finished, or resumed by another).
func (s *Store) beat(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.beats[id]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.beats[id] = func() { cancel(); <-done }
	interval := HeartbeatInterval
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if !s.heartbeat(ctx, id) {
					return
				}
			}
		}
	}()
}

// heartbeat refreshes the heartbeat of run id and reports whether the run
// is still this process's to beat for. A beat that fails (a busy store) is
// left to the next.
func (s *Store) heartbeat(ctx context.Context, id int64) (owned bool) {
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner_token = ? AND status = ?`,
		formatTime(time.Now()), id, ThisProcess().Token, Running)
	if err != nil {
		return true
	}
	n, err := res.RowsAffected()
	return err != nil || n > 0
}

// stopBeat stops the heartbeat of run id, if beat started it.
func (s *Store) stopBeat(id int64) {
	s.mu.Lock()
	stop := s.beats[id]
	delete(s.beats, id)
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// stopBeats stops every heartbeat of the store.
func (s *Store) stopBeats() {
	s.mu.Lock()
	ids := make([]int64, 0, len(s.beats))
	for id := range s.beats {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.stopBeat(id)
	}
}
