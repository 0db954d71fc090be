package main

import (
	"bytes"
	stdctx "context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/target"
	"tltune/device"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/kernels/kernelstest"
	"tltune/results"
	"tltune/tuner"
	"tltune/tuner/worker"
)

// smallGEMM is a ragged GEMM that tunes in seconds on PoCL: few
// configurations, short timing.
func smallGEMM(db, dev string, extra ...string) []string {
	args := []string{"gemm", "--m", "20", "--n", "5", "--k", "7", "--dtype", "f32", "--beta", "1",
		"--device", dev, "--db", db, "--sample-time", "50ms", "--max-batch", "16", "--quiet"}
	return append(args, extra...)
}

func TestTuneUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"gemm", "--m", "0", "--n", "4", "--k", "4"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--dtype", "f12"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--strategy", "annealing"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--budget", "-1"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--ci", "2"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--target", "amd"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--device", "ref"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--bogus"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "extra"},
		{"gemv", "--m", "4", "--n", "4", "--k", "4"},
		{"ger", "--m", "4", "--n", "4", "--trans", "t"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--precision", "bf16"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--dtype", "f16", "--precision", "tf32"},
		{"gemv", "--m", "4", "--n", "4", "--precision", "tf32"},
		{"gemm", "--m", "4", "--n", "4", "--k", "4", "--build-procs", "-2"},
	} {
		status, stdout, stderr := tltune(args...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("tltune %v: status %d, stdout %q, stderr %q; want one usage line and status 2", args, status, stdout, stderr)
		}
	}
}

// TestTuneRefusesShapeTooLargeForHost: a shape whose verification inputs
// and reference the host cannot hold is one line and exit 2, before the
// store or a device is opened, not Go's out-of-memory dump.
func TestTuneRefusesShapeTooLargeForHost(t *testing.T) {
	defer func(m int64) { hostMemory = m }(hostMemory)
	hostMemory = 1 << 20
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	suite := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(suite, []byte("[[recipe]]\nop = \"ger\"\nsquare = 1024\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gemm", "--m", "512", "--n", "512", "--k", "512", "--device", "nosuch", "--db", db},
			"tltune gemm: gemm.nn f32 512x512x512 needs "},
		{[]string{"sweep", suite, "--device", "nosuch", "--db", db},
			"tltune sweep: " + suite + ": recipe 1: ger f32 1024x1024 needs"},
	} {
		status, stdout, stderr := tltune(c.args...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, c.want) ||
			!strings.Contains(stderr, "of host memory for its verification inputs and reference, more than the 1 MiB this host can spare") {
			t.Errorf("tltune %v: status %d, stdout %q, stderr %q; want status 2 and one line %q...", c.args, status, stdout, stderr, c.want)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the refused shapes created the store: %v", err)
	}
}

// TestTuneOnPoCL tunes a small GEMM, GEMV and GER end to end: every
// evaluation is stored, the best is verified, the report says where.
func TestTuneOnPoCL(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	for _, args := range [][]string{
		smallGEMM(db, dev, "--budget", "4"),
		{"gemv", "--m", "33", "--n", "17", "--trans", "t", "--device", dev, "--db", db, "--budget", "3", "--sample-time", "50ms", "--max-batch", "16", "--quiet"},
		{"ger", "--m", "9", "--n", "40", "--layout", "group", "--alpha", "0.5", "--beta", "1", "--device", dev, "--db", db, "--budget", "3", "--sample-time", "50ms", "--max-batch", "16", "--quiet"},
	} {
		status, stdout, stderr := tltune(args...)
		if status != exitOK {
			t.Fatalf("tltune %v: status %d\n%s%s", args, status, stdout, stderr)
		}
		// --max-batch 16 keeps each launch from its goals, and the report says so.
		for _, want := range []string{"timed launches short of their goals: batch capped at 16", "GFLOP/s", "% copy BW", "outcomes: ok", "throughput: ", "evaluations/s; wall time: setup", "stored as run", db} {
			if !strings.Contains(stdout, want) {
				t.Errorf("tltune %s: report lacks %q:\n%s", args[0], want, stdout)
			}
		}
	}
	st, err := results.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(stdctx.Background(), "")
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs %v, %v: want 3", runs, err)
	}
	for _, r := range runs {
		if r.Status != results.Done {
			t.Errorf("run %d (%s) ended %s", r.ID, r.Op, r.Status)
		}
		evaluated := evaluatedConfigs(t, st, r.ID)
		if len(evaluated) == 0 {
			t.Errorf("run %d (%s) stored no evaluation", r.ID, r.Op)
		}
		if tp, err := st.Throughput(stdctx.Background(), r.ID); err != nil || tp.Evaluations != len(evaluated) ||
			!(tp.Phases["time"] > 0 && tp.Phases["verify"] > 0 && tp.Phases["setup"] > 0) {
			t.Errorf("run %d (%s) stored throughput %+v, %v; want %d evaluations and the time of each phase", r.ID, r.Op, tp, err, len(evaluated))
		}
	}
	best, err := st.BestPerShape(stdctx.Background(), results.Filter{})
	if err != nil || len(best) != 3 {
		t.Fatalf("best per shape: %v, %v; want one per op", best, err)
	}
	for _, b := range best {
		if !b.Measurement.Verified || !(b.Measurement.VerifyError < 1e-5) || b.Measurement.GFLOPS <= 0 {
			t.Errorf("best %s: %+v; want verified, accurate and timed", b.Measurement.Config.Op, b.Measurement)
		}
	}
}

// evaluatedConfigs returns the configurations a run compiled or measured,
// by their params and source hash, failing on a duplicate.
func evaluatedConfigs(t *testing.T, st *results.Store, run int64) map[string]results.Outcome {
	t.Helper()
	ms, err := st.Measurements(stdctx.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]results.Outcome{}
	for _, m := range ms {
		if m.Outcome == results.Pruned {
			continue
		}
		key := m.Config.Params.String() + " " + m.Config.SourceHash
		if _, dup := seen[key]; dup {
			t.Errorf("run %d measured %s twice", run, key)
		}
		seen[key] = m.Outcome
	}
	return seen
}

func TestTuneJSON(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	status, stdout, stderr := tltune(smallGEMM(db, dev, "--budget", "2", "--json", "--top", "1")...)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var rep tuneReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if rep.Run != 1 || rep.Database != db || len(rep.Top) != 1 || rep.Top[0].Timing.MedianNS <= 0 || rep.Counts["ok"] == 0 {
		t.Errorf("--json report: %+v", rep)
	}
	// Racing is on: the fastest (here every ok one) are re-timed at the end.
	if rep.Retimed != rep.Counts["ok"] || !rep.Top[0].Retimed || rep.Top[0].Raced {
		t.Errorf("--json: %d re-timed of %d ok, best retimed %v raced %v; want every ok one re-timed",
			rep.Retimed, rep.Counts["ok"], rep.Top[0].Retimed, rep.Top[0].Raced)
	}
	var fields struct {
		EvaluationsPerSecond float64            `json:"evaluations_per_second"`
		TimeSplit            map[string]float64 `json:"time_split"`
		WallSeconds          float64            `json:"wall_seconds"`
	}
	if err := json.Unmarshal([]byte(stdout), &fields); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, s := range fields.TimeSplit {
		sum += s
	}
	want := []string{"setup", "propose", "compile", "build", "verify", "time", "retime", "record", "idle"}
	if !(fields.EvaluationsPerSecond > 0) || len(fields.TimeSplit) != len(want) || math.Abs(sum-fields.WallSeconds) > 1e-6*fields.WallSeconds {
		t.Errorf("--json: evaluations_per_second %g, time_split %v (sum %g, wall %g); want a rate and the phases %v adding up to the wall time",
			fields.EvaluationsPerSecond, fields.TimeSplit, sum, fields.WallSeconds, want)
	}
	for _, phase := range want {
		if _, ok := fields.TimeSplit[phase]; !ok {
			t.Errorf("--json time_split lacks %q", phase)
		}
	}
}

// TestTuneTerminated: SIGTERM (what timeout and Slurm send) ends a tuning
// run as Ctrl-C does: recorded as interrupted, the way to resume it said,
// exit 130.
func TestTuneTerminated(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	child := tltuneProcess(t, smallGEMM(db, dev, "--budget", "8", "--strategy", "exhaustive", "--sample-time", "300ms", "--ci", "0.0001")...)
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEvaluations(t, db, 1, 2*time.Minute)
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := child.Wait()
	r, rerr := openResults(t, db).Run(stdctx.Background(), 1)
	if rerr != nil || r.Status != results.Interrupted || child.ProcessState.ExitCode() != exitInterrupted ||
		!strings.Contains(stderr.String(), "interrupted; continue with --resume 1") {
		t.Errorf("terminated: %v, run %+v (%v), stderr %q; want exit 130, the run interrupted and how to resume it", err, r, rerr, stderr.String())
	}
}

// TestResumeRefusesLiveRun: --resume of a run that another tltune process
// is tuning is refused in one line naming the process, status 2, and
// leaves the run to it: interrupted later, the run is interrupted, not
// failed under it by the second process.
func TestResumeRefusesLiveRun(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	child := tltuneProcess(t, smallGEMM(db, dev, "--budget", "8", "--strategy", "exhaustive")...)
	// Its second evaluation hangs until the configuration times out (2
	// minutes): the run goes on for as long as the test needs.
	child.Env = append(child.Env, worker.FaultEnv+"=hang@2")
	var childErr bytes.Buffer
	child.Stderr = &childErr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	waitForEvaluations(t, db, 1, 2*time.Minute)

	status, stdout, stderr := tltune(smallGEMM(db, dev, "--resume", "last", "--budget", "1")...)
	host, _ := os.Hostname()
	want := fmt.Sprintf("tltune gemm: --resume last: run 1 is still being tuned by process %d@%s (last heartbeat ", child.Process.Pid, host)
	fix := fmt.Sprintf("wait for it to finish or stop it (kill %d), then resume\n", child.Process.Pid)
	if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, fix) {
		t.Errorf("resuming the live run: status %d, stdout %q, stderr %q; want status 2 and one line %q...%q", status, stdout, stderr, want, fix)
	}

	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	r, err := openResults(t, db).Run(stdctx.Background(), 1)
	if err != nil || r.Status != results.Interrupted || child.ProcessState.ExitCode() != exitInterrupted {
		t.Errorf("the live run, then terminated: exit %d, run %s (%v), stderr %q; want exit 130 and the run interrupted",
			child.ProcessState.ExitCode(), r.Status, err, childErr.String())
	}
}

// TestTuneKillAndResume kills a tuning process after it stored a few
// evaluations, then resumes the run: what was stored stays, nothing is
// measured twice, and the run reaches its budget.
func TestTuneKillAndResume(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	const budget = 8
	// --ci that no run reaches: each configuration is timed for the whole
	// --sample-time, so the kill lands mid-run.
	args := smallGEMM(db, dev, "--budget", "8", "--strategy", "exhaustive", "--sample-time", "300ms", "--ci", "0.0001")
	child := tltuneProcess(t, args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	before := waitForEvaluations(t, db, 2, 2*time.Minute)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed := storedEvaluations(t, db)
	if len(killed) < len(before) || len(killed) >= budget {
		t.Fatalf("after the kill %d evaluations are stored (saw %d before): want some, not all", len(killed), len(before))
	}
	if r, err := openResults(t, db).Run(stdctx.Background(), 1); err != nil || r.Status != results.Running || r.Owner.PID != child.Process.Pid {
		t.Errorf("the killed run is %s, owned by %v (%v); want running, by the killed process %d", r.Status, r.Owner, err, child.Process.Pid)
	}

	// Its owner is dead: the run is resumed at once.
	status, stdout, stderr := tltune(append(args, "--resume", "last")...)
	if status != exitOK {
		t.Fatalf("resume: status %d\n%s%s", status, stdout, stderr)
	}
	after := storedEvaluations(t, db)
	if len(after) != budget {
		t.Errorf("resumed run stored %d evaluations, want the budget %d", len(after), budget)
	}
	for key, outcome := range killed {
		if after[key] != outcome {
			t.Errorf("%s was %s before the kill and %s after the resume", key, outcome, after[key])
		}
	}
}

// TestTuneFaults injects every fault the worker knows into a run on PoCL,
// kills the tuning process with -9 in the middle and resumes it: each
// fault is recorded as its kind, every other configuration is measured,
// the corrupted one is never selected, and nothing is lost or measured
// twice.
func TestTuneFaults(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	args := smallGEMM(db, dev, "--budget", "10", "--strategy", "exhaustive", "--config-timeout", "10s", "--top", "10")
	t.Setenv(worker.FaultEnv, "abort@3,hang@5,segv@6,wrong@7,lost@9")
	child := tltuneProcess(t, args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEvaluations(t, db, 3, 2*time.Minute) // past the abort
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed := storedEvaluations(t, db)

	status, stdout, stderr := tltune(append(args, "--resume", "last")...)
	if status != exitOK {
		t.Fatalf("resume: status %d\n%s%s", status, stdout, stderr)
	}
	st, err := results.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evaluatedConfigs(t, st, 1) // fails on a configuration measured twice
	ms, err := st.Measurements(stdctx.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var wrong results.Config
	for _, m := range ms {
		if m.Outcome == results.Pruned {
			continue
		}
		got = append(got, string(m.Outcome))
		switch m.Outcome {
		case results.Crash:
			if !strings.Contains(m.Message, "SIG") && !strings.Contains(m.Message, "signal") || !strings.Contains(m.Message, "injected fault") {
				t.Errorf("crash message %q names no signal or lacks the worker's last output", m.Message)
			}
		case results.WrongResult:
			wrong = m.Config
		}
	}
	// Evaluations are recorded in proposal order, the resumed ones first.
	want := []string{"ok", "ok", "crash", "ok", "timeout", "crash", "wrong_result", "ok", "device_lost", "ok"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("outcomes in evaluation order:\n got %v\nwant %v", got, want)
	}
	after := storedEvaluations(t, db)
	for key, outcome := range killed {
		if after[key] != outcome {
			t.Errorf("%s was %s before the kill and %s after the resume", key, outcome, after[key])
		}
	}
	best, err := st.BestPerShape(stdctx.Background(), results.Filter{})
	if err != nil || len(best) != 1 || best[0].Measurement.Config.Params == wrong.Params {
		t.Errorf("best %+v, %v: want one, not the corrupted configuration %s", best, err, wrong.Params)
	}
	// The configuration column holds the compact form alone, padded: one
	// that only starts with the corrupted one's (a split added) is another.
	if regexp.MustCompile(`│ ` + regexp.QuoteMeta(wrong.Params.String()) + ` *│`).MatchString(stdout) {
		t.Errorf("the report ranks the corrupted configuration %s:\n%s", wrong.Params, stdout)
	}
}

// TestTuneForcedTargetTheDeviceLacks: --target intel on a PoCL without
// cl_intel_subgroups (3.1) would fail every build (exit 3 after a recorded
// run); it is bad input, refused in one line before the store is touched.
func TestTuneForcedTargetTheDeviceLacks(t *testing.T) {
	dev := poclDevice(t)
	for _, d := range device.Enumerate().Devices {
		if d.ID == dev && d.HasExtension("cl_intel_subgroups") {
			t.Skip("this PoCL has cl_intel_subgroups (PoCL 5): the intel target builds there")
		}
	}
	db := filepath.Join(t.TempDir(), "results.db")
	status, stdout, stderr := tltune(smallGEMM(db, dev, "--budget", "1", "--target", "intel")...)
	if want := "tltune gemm: --target intel: "; status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "has no cl_intel_subgroups") {
		t.Errorf("status %d, stderr %q; want %d and one line starting %q\n%s", status, stderr, exitUsage, want, stdout)
	}
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused run touched the store: %v", err)
	}
}

// TestTunePTXNeedsNVIDIA: --ptx on a device whose driver builds no PTX
// tltune writes is bad input, refused in one line before the store is
// touched.
func TestTunePTXNeedsNVIDIA(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	status, stdout, stderr := tltune(smallGEMM(db, dev, "--budget", "1", "--ptx")...)
	if want := "tltune gemm: --ptx: "; status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "leave out --ptx") {
		t.Errorf("status %d, stderr %q; want %d and one line starting %q\n%s", status, stderr, exitUsage, want, stdout)
	}
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused run touched the store: %v", err)
	}
}

// TestTuneNothingToEvaluate: space flags that leave no configuration the
// device can run, or a --time that runs out before the first proposal, are
// the input's fault, not the device's: exit 2 and one line that says which
// and how to fix it, the earlier runs of the store kept.
func TestTuneNothingToEvaluate(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	if status, stdout, stderr := tltune(smallGEMM(db, dev, "--budget", "2")...); status != exitOK {
		t.Fatalf("first run: status %d\n%s%s", status, stdout, stderr)
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--cm", "3"}, "tltune gemm: the search space holds no configuration (a coopmatrix must divide its tile"},
		{[]string{"--wx", "4096"}, "tltune gemm: all 5292 configurations of the search space were pruned for this problem on this device (work-group 5292); widen the space flags"},
		{[]string{"--time", "1ns"}, "tltune gemm: the time limit ran out before the first of "},
	} {
		status, stdout, stderr := tltune(smallGEMM(db, dev, c.flags...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if status != exitUsage || !strings.HasPrefix(lines[len(lines)-1], c.want) {
			t.Errorf("%v: status %d, last line of stderr %q; want %d and %q\n%s", c.flags, status, lines[len(lines)-1], exitUsage, c.want, stdout)
		}
	}
	if got := storedEvaluations(t, db); len(got) != 2 {
		t.Errorf("the first run's 2 evaluations are stored as %v", got)
	}
}

// TestTuneNothingCorrect: where every configuration fails, the last line
// names the last failure, once.
func TestTuneNothingCorrect(t *testing.T) {
	dev := poclDevice(t)
	for fault, want := range map[string]string{
		"wrong@1,wrong@2": "; the last: wrong_result: relative error ",
		"abort@1,abort@2": "; the last: crash: the worker process died on it twice",
	} {
		t.Setenv(worker.FaultEnv, fault)
		db := filepath.Join(t.TempDir(), "results.db")
		status, stdout, stderr := tltune(smallGEMM(db, dev, "--budget", "2")...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if status != exitRuntime || !strings.HasPrefix(last, "tltune gemm: no configuration ran correctly") ||
			!strings.Contains(last, want) || strings.Contains(last, "crash: crash:") {
			t.Errorf("%s: status %d, last line %q; want %d and %q\n%s", fault, status, last, exitRuntime, want, stdout)
		}
	}
}

func TestNothingToTuneNeedsAnEmptySearch(t *testing.T) {
	for _, rep := range []*tuner.Report{
		{Candidates: 3, Counts: map[tuner.Kind]int{tuner.Pruned: 5}},
		{Evaluations: 1, Counts: map[tuner.Kind]int{}},
	} {
		if why, ok := nothingToTune(rep, false, "gemm"); ok {
			t.Errorf("%+v: %q, want nothing: there was something to evaluate", rep, why)
		}
	}
	why, ok := nothingToTune(&tuner.Report{Candidates: 3, Stop: tuner.StopTime, Counts: map[tuner.Kind]int{tuner.Pruned: 5},
		Split: tuner.Split{Wall: 300 * time.Millisecond}}, false, "gemm")
	if want := "the time limit ran out before the first of 3 candidate configurations was proposed (setup and pruning took 300.0 ms); give a longer --time or leave it out (see 'tltune gemm -h')"; !ok || why != want {
		t.Errorf("out of time before the first proposal: %q\nwant %q", why, want)
	}
	why, ok = nothingToTune(&tuner.Report{Counts: map[tuner.Kind]int{tuner.Pruned: 4}, PrunedByRule: map[string]int{"tile": 3, "unroll": 1}}, false, "gemv")
	if want := "all 4 configurations of the search space were pruned for this problem on this device (tile 3, unroll 1); give candidate values the device can run with the space flags (see 'tltune gemv -h')"; !ok || why != want {
		t.Errorf("all pruned, no space flags: %q\nwant %q", why, want)
	}
}

// storedEvaluations opens the database read-only and returns the first
// run's evaluated configurations.
func storedEvaluations(t *testing.T, db string) map[string]results.Outcome {
	t.Helper()
	st, err := results.OpenExisting(db)
	if err != nil {
		return nil // not created yet
	}
	defer st.Close()
	return evaluatedConfigs(t, st, 1)
}

func waitForEvaluations(t *testing.T, db string, n int, limit time.Duration) map[string]results.Outcome {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if got := storedEvaluations(t, db); len(got) >= n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %d evaluations stored in %s after %v", n, db, limit)
	return nil
}

// TestTunedTableFeedsCompiler closes the loop of the main job: the best
// configuration of a tuning run, exported with `tltune table`, is what
// `tltune compile` uses for a collective gemm of that shape on that device.
func TestTunedTableFeedsCompiler(t *testing.T) {
	dev := poclDevice(t)
	dir := t.TempDir()
	db, table := filepath.Join(dir, "results.db"), filepath.Join(dir, "tuning.json")
	if status, _, stderr := tltune(smallGEMM(db, dev, "--budget", "3", "--json")...); status != exitOK {
		t.Fatalf("tune: %s", stderr)
	}
	if status, _, stderr := tltune("table", "--db", db, "-o", table); status != exitOK {
		t.Fatalf("table: %s", stderr)
	}
	st, err := results.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	best, err := st.BestPerShape(stdctx.Background(), results.Filter{})
	st.Close()
	if err != nil || len(best) != 1 {
		t.Fatalf("best: %v %v", best, err)
	}
	kernel := filepath.Join(dir, "k.ir")
	// The tuned problem: β = 1 (smallGEMM), a strided batch.
	src := `func @k(%A: memref<f32x20x7x?>, %B: memref<f32x7x5x?>, %C: memref<f32x20x5x?>) {
  %g = builtin.group_id : index
  %one = constant 1.0 : f32
  %a = subview %A[0:20, 0:7, %g] : memref<f32x20x7>
  %b = subview %B[0:7, 0:5, %g] : memref<f32x7x5>
  %c = subview %C[0:20, 0:5, %g] : memref<f32x20x5>
  gemm.n.n %one, %a, %b, %one, %c
}
`
	if err := os.WriteFile(kernel, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := tltune("compile", kernel, "--device", dev, "--tuning", table, "--explain", "-o", filepath.Join(dir, "k.cl"))
	if status != exitOK {
		t.Fatalf("compile: status %d\n%s%s", status, stdout, stderr)
	}
	explain := stdout + stderr
	p := best[0].Measurement.Config.Params
	if !strings.Contains(explain, "tuning table: exact match") {
		t.Errorf("--explain does not say the tuning table matched exactly:\n%s", explain)
	}
	if want := "chosen: " + p.String() + "\n"; !strings.Contains(explain, want) {
		t.Errorf("compile did not choose the tuning run's best %q:\n%s", p.String(), explain)
	}
}

func TestDeviceSupports(t *testing.T) {
	noFP64 := device.Info{Name: "NoDouble GPU"}
	f64 := kernels.Spec{Op: kernels.GEMMOp, DType: kernels.F64, Acc: kernels.F64}
	c32to64 := kernels.Spec{Op: kernels.GEMMOp, DType: kernels.C32, Acc: kernels.C64}
	half := kernels.Spec{Op: kernels.GEMMOp, DType: kernels.F16, Acc: kernels.F32}
	generic, intel := target.Generic(), target.Intel()
	for _, s := range []kernels.Spec{f64, c32to64} {
		if err := deviceSupports(noFP64, generic, s); err == nil || !strings.Contains(err.Error(), "cl_khr_fp64") {
			t.Errorf("%v/%v on a device without fp64: %v, want an error naming cl_khr_fp64", s.DType, s.Acc, err)
		}
		if err := deviceSupports(device.Info{FP64: true}, generic, s); err != nil {
			t.Errorf("%v/%v on a device with fp64: %v", s.DType, s.Acc, err)
		}
	}
	for _, tgt := range []*target.Target{generic, target.Nvidia()} {
		if err := deviceSupports(noFP64, tgt, half); err != nil {
			t.Errorf("f16 on the %s target needs no cl_khr_fp16 (stored as half, computed in f32): %v", tgt.Name, err)
		}
	}
	// The intel target computes in half: PoCL 5, which has the subgroups
	// but no cl_khr_fp16, failed to build every configuration.
	if err := deviceSupports(noFP64, intel, half); err == nil || !strings.Contains(err.Error(), "cl_khr_fp16") || !strings.Contains(err.Error(), "leave out --target") {
		t.Errorf("f16 on the intel target without cl_khr_fp16: %v, want an error naming cl_khr_fp16 and the fix", err)
	}
	if err := deviceSupports(device.Info{FP16: true}, intel, half); err != nil {
		t.Errorf("f16 on the intel target with cl_khr_fp16: %v", err)
	}
}

// TestDeviceProfileKeepsTargetLimits: a forced target's limits bound the
// profile the pruner reads, so that no configuration the target refuses
// is compiled: the emulated target runs one subgroup per work-group, and
// both it and the generic one have at most 32 KiB of local memory and a
// few hundred work-items, on a CPU that allows 4 MiB and 4096.
func TestDeviceProfileKeepsTargetLimits(t *testing.T) {
	cpu := device.Info{Name: "some CPU", MaxWorkGroupSize: 4096, LocalMemBytes: 4 << 20, SubgroupSizes: []int{8, 16, 32}}
	for _, tgt := range []*target.Target{target.Generic(), target.Emulated()} {
		p, err := deviceProfile(cpu, tgt)
		if err != nil {
			t.Fatal(err)
		}
		if p.MaxWorkGroupSize != tgt.MaxWorkGroupSize || p.LocalMemoryBytes != tgt.LocalMemBytes || p.OneSubgroupPerGroup != tgt.OneSubgroupPerGroup {
			t.Errorf("%s: max work-group %d, local memory %d, one subgroup per group %v; want the target's %d, %d, %v", tgt.Name,
				p.MaxWorkGroupSize, p.LocalMemoryBytes, p.OneSubgroupPerGroup, tgt.MaxWorkGroupSize, tgt.LocalMemBytes, tgt.OneSubgroupPerGroup)
		}
	}
	// A device below the target's limits keeps its own.
	small := device.Info{Name: "small GPU", MaxWorkGroupSize: 128, LocalMemBytes: 16 << 10}
	if p, _ := deviceProfile(small, target.Generic()); p.MaxWorkGroupSize != 128 || p.LocalMemoryBytes != 16<<10 {
		t.Errorf("small device: max work-group %d, local memory %d; want its own 128, 16384", p.MaxWorkGroupSize, p.LocalMemoryBytes)
	}
}

// TestResumeRefuses: --resume continues only an unfinished run of the same
// op, device, driver and problem; anything else is refused in one line with
// status 2, and the run's measurements stay as they were.
func TestResumeRefuses(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	if status, _, stderr := tltune(smallGEMM(db, dev, "--budget", "2")...); status != exitOK {
		t.Fatalf("tune: %s", stderr)
	}
	st, err := results.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := stdctx.Background()
	first, err := st.Run(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	other := first.Env
	other.Device, other.Driver = "Other GPU", "0.1"
	elsewhere, err := st.BeginRun(ctx, other, results.Run{Op: "gemm"})
	if err != nil {
		t.Fatal(err)
	}
	tf32Run := interruptedTF32Run(t, st, first)
	before := len(storedEvaluations(t, db))
	refused := func(args []string, want string) {
		t.Helper()
		status, stdout, stderr := tltune(args...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Errorf("tltune %v: status %d, stdout %q, stderr %q; want one line about %q and status 2", args, status, stdout, stderr, want)
		}
	}
	refused(smallGEMM(db, dev, "--resume", "1"), "run 1 finished")
	if err := st.FinishRun(ctx, 1, results.Interrupted, time.Time{}); err != nil {
		t.Fatal(err)
	}
	refused(smallGEMM(db, dev, "--resume", "1", "--m", "16"), "run 1 tuned gemm")
	refused(smallGEMM(db, dev, "--resume", "1", "--alpha", "2"), "run 1 tuned gemm")
	refused([]string{"gemv", "--m", "20", "--n", "5", "--device", dev, "--db", db, "--resume", "1"}, "run 1 is a gemm run, not gemv")
	refused(smallGEMM(db, dev, "--resume", fmt.Sprint(elsewhere.ID)), "ran on Other GPU (driver 0.1)")
	// The other precision is another problem, both ways (nvidia forced:
	// PoCL's own target has no tf32; nothing is compiled before the refusal).
	refused(smallGEMM(db, dev, "--resume", "1", "--precision", "tf32", "--target", "nvidia"), "run 1 tuned gemm.nn f32 20x5x7 beta=1, which this command does not")
	refused(smallGEMM(db, dev, "--resume", fmt.Sprint(tf32Run)), "tuned gemm.nn f32 20x5x7 beta=1 tf32, which this command does not")
	if after := len(storedEvaluations(t, db)); after != before {
		t.Errorf("the refused commands changed run 1: %d evaluations, %d before", after, before)
	}
	if status, _, stderr := tltune(smallGEMM(db, dev, "--resume", "1", "--budget", "3")...); status != exitOK {
		t.Errorf("resuming the interrupted run of the same problem: status %d: %s", status, stderr)
	}

	// A run that a live process on another host is tuning: its heartbeat
	// is recent. So is a campaign's part that a shard started again finds
	// (Slurm started the task again while the first still runs).
	there := results.Owner{Host: "node7.invalid", PID: 4321, Start: "b/1", Token: "a tltune on node7"}
	liveThere, err := st.BeginRun(ctx, first.Env, results.Run{Op: "gemm", Owner: there})
	if err != nil {
		t.Fatal(err)
	}
	tuning := fmt.Sprintf("run %d is still being tuned by process 4321@node7.invalid (last heartbeat ", liveThere.ID)
	refused(smallGEMM(db, dev, "--resume", fmt.Sprint(liveThere.ID)), tuning)
	refused(smallGEMM(db, dev, "--resume", fmt.Sprint(liveThere.ID)), "wait for it to finish or stop it (kill 4321 on node7.invalid), then resume")
	shard, err := st.BeginRun(ctx, first.Env, results.Run{Op: "sweep", UUID: campaignUUID("c"), Owner: there})
	if err != nil {
		t.Fatal(err)
	}
	refused(tinySweep(db, dev, "--shard", "1/1", "--campaign", "c"), fmt.Sprintf("--campaign c: run %d is still being tuned by process 4321@node7.invalid", shard.ID))
	// Its heartbeat stale, the owner is taken for dead.
	deadThere, err := st.BeginRun(ctx, first.Env, results.Run{Op: "gemm", Owner: there, Heartbeat: time.Now().Add(-2 * results.StaleAfter)})
	if err != nil {
		t.Fatal(err)
	}
	if status, _, stderr := tltune(smallGEMM(db, dev, "--resume", fmt.Sprint(deadThere.ID), "--budget", "1")...); status != exitOK {
		t.Errorf("resuming the run of a dead owner on another host: status %d: %s", status, stderr)
	}
	if r, err := st.Run(ctx, deadThere.ID); err != nil || r.Status != results.Done || r.Owner != results.ThisProcess() {
		t.Errorf("the resumed run of a dead owner is %s, owned by %v (%v); want done, by this process", r.Status, r.Owner, err)
	}
}

// TestFinishTakenOverRun: a run that another process resumed, taking this
// one for dead, is left to it, and this process fails saying so instead of
// telling how to resume it.
func TestFinishTakenOverRun(t *testing.T) {
	st, err := results.Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := stdctx.Background()
	other := results.Owner{Host: "node7", PID: 4321, Token: "another tltune"}
	run, err := st.BeginRun(ctx, results.Environment{Device: "D"}, results.Run{Op: "gemm", Owner: other})
	if err != nil {
		t.Fatal(err)
	}
	r := &tuneRun{store: st, stored: run}
	status, err := r.finish(stdctx.Canceled)
	if status == results.Interrupted || !errors.Is(err, results.ErrNotOwner) {
		t.Errorf("finishing a run another process resumed: %s, %v; want no interrupted status and ErrNotOwner", status, err)
	}
	if after, _ := st.Run(ctx, run.ID); after.Status != results.Running || after.Owner != other {
		t.Errorf("the run became %s, owned by %v; want it left to %v", after.Status, after.Owner, other)
	}
}

// interruptedTF32Run stores an interrupted run of the tf32 variant of the
// problem first tuned, in first's environment, and returns its id.
func interruptedTF32Run(t *testing.T, st *results.Store, first results.Run) int64 {
	t.Helper()
	ctx := stdctx.Background()
	ms, err := st.Measurements(ctx, first.ID)
	if err != nil || len(ms) == 0 {
		t.Fatalf("run %d: %d measurements, %v", first.ID, len(ms), err)
	}
	c := ms[0].Config
	c.Precision = speak.TF32
	run, err := st.BeginRun(ctx, first.Env, results.Run{Op: "gemm", CommandLine: "tltune gemm --precision tf32"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Record(ctx, run.ID, results.Measurement{Config: c, Outcome: results.CompileError, Message: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, run.ID, results.Interrupted, time.Time{}); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// TestTuneRefusesTF32WithoutEngine: --precision tf32 on a device whose
// target has no tf32 matrix engine (PoCL: generic) is one usage line,
// before anything is stored.
func TestTuneRefusesTF32WithoutEngine(t *testing.T) {
	dev := poclDevice(t)
	db := filepath.Join(t.TempDir(), "results.db")
	status, stdout, stderr := tltune(smallGEMM(db, dev, "--precision", "tf32")...)
	if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "--precision tf32: precision tf32 needs the nvidia target") || !strings.Contains(stderr, "--precision exact") {
		t.Errorf("status %d, stdout %q, stderr %q; want one usage line naming the target and the fix", status, stdout, stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the refused run created %s (%v)", db, err)
	}
}

// TestTF32Report: a tf32 problem says so in its name, in a line of the
// report, and in the JSON document's precision field; an exact one has
// neither the line nor the field.
func TestTF32Report(t *testing.T) {
	p := gemmConfig(0, 0).Problem
	p.Dtype, p.Acc = "f32", "f32"
	for precision, want := range map[string]bool{"": false, speak.TF32: true} {
		p.Precision = precision
		r := tuneReport{NamedProblem: speak.Named(p)}
		var text, js strings.Builder
		if err := r.write(&text); err != nil {
			t.Fatal(err)
		}
		if err := speak.WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text.String(), "64x64x32 tf32 on") && strings.Contains(text.String(), "\nprecision tf32: f32 inputs rounded to tf32"); got != want {
			t.Errorf("precision %q: the report names tf32 = %v:\n%s", precision, got, text.String())
		}
		if got := strings.Contains(js.String(), `"precision": "tf32"`); got != want {
			t.Errorf("precision %q: the JSON has precision tf32 = %v:\n%s", precision, got, js.String())
		}
		if strings.Contains(js.String(), `"precision": ""`) {
			t.Errorf("an exact problem writes an empty precision:\n%s", js.String())
		}
	}
}

// TestEnableTF32: on nvidia the run's tf32 problems compile with tf32 and
// their profile lists the m16n8k8 f32 shape, so the pruner keeps f32
// coopmatrices to grids of it, while its exact problems (a sweep may hold
// both) compile and prune as before; the shipped profile stays as it was;
// a target without the engine refuses.
func TestEnableTF32(t *testing.T) {
	h200 := device.Info{Name: "NVIDIA H200"}
	prof, err := deviceProfile(h200, target.Nvidia())
	if err != nil {
		t.Fatal(err)
	}
	r := &tuneRun{prof: prof, copts: compiler.Options{Target: "nvidia"}}
	if err := r.enableTF32(target.Nvidia()); err != nil {
		t.Fatal(err)
	}
	tf32, exact := r.setupFor(speak.TF32), r.setupFor("")
	m := slices.Collect(tf32.prof.MatrixFor("f32"))
	if tf32.copts.Precision != speak.TF32 || tf32.copts.Target != "nvidia" || len(m) != 1 || !m[0].Fits(32, 32, 16, 16) || m[0].Fits(32, 16, 8, 4) {
		t.Errorf("tf32: options %+v, f32 matrix shapes %+v; want tf32 and m16n8k8", tf32.copts, m)
	}
	if m := slices.Collect(exact.prof.MatrixFor("f32")); exact.copts.Precision != "" || len(m) != 0 {
		t.Errorf("exact: precision %q, f32 matrix shapes %+v; want exact and none", exact.copts.Precision, m)
	}
	if again, _ := deviceProfile(h200, target.Nvidia()); len(slices.Collect(again.MatrixFor("f32"))) != 0 {
		t.Error("enabling tf32 for a run changed the shipped profile")
	}
	generic := &tuneRun{prof: prof}
	if err := generic.enableTF32(target.Generic()); err == nil || generic.tf32 != nil {
		t.Errorf("generic target: %v, tf32 setup %+v", err, generic.tf32)
	}
}

// TestKernelCacheKeyHasPrecision: a kernel compiled with tf32 comes from
// the same source as the exact one, so the binary cache must key them
// apart.
func TestKernelCacheKeyHasPrecision(t *testing.T) {
	keys := map[string]bool{}
	r := &tuneRun{flags: &tuneFlags{kernelsPerProgram: 1}, info: device.Info{Name: "NVIDIA H200", Driver: "580", Runtime: "opencl"}}
	for _, precision := range []string{"", speak.TF32} {
		keys[newBatcher(r, compiler.Options{Target: "nvidia", Precision: precision}).CacheKey(devcall.PathOpenCLC, "source-hash")] = true
	}
	if len(keys) != 2 {
		t.Error("exact and tf32 kernels of one source share a binary-cache key")
	}
}

// TestHelpPerOp: `tltune help OP` (as OP -h) lists the flags of that op
// only and ends with its legend of the configuration abbreviations.
func TestHelpPerOp(t *testing.T) {
	for op, want := range map[string]struct{ has, lacks []string }{
		"gemm": {[]string{"  -k int", "  -cm value", "  -stage value", "  -precision string", "  cm     cooperative-matrix block", "  local  A and B panels"}, []string{"  -vector-width"}},
		"gemv": {[]string{"  -trans string", "  -vector-width value", "  v      elements per vector access"}, []string{"  -k int", "  -cm value", "  -stage value", "  cm  ", "  -precision"}},
		"ger":  {[]string{"  -vector-width value"}, []string{"  -k int", "  -trans string", "  -ck value", "  -precision"}},
	} {
		status, out, _ := tltune("help", op)
		if status != exitOK || !strings.HasPrefix(out, "usage: tltune "+op) {
			t.Fatalf("help %s: status %d\n%s", op, status, out)
		}
		for _, s := range want.has {
			if !strings.Contains(out, s) {
				t.Errorf("help %s lacks %q", op, s)
			}
		}
		for _, s := range want.lacks {
			if strings.Contains(out, s) {
				t.Errorf("help %s has %q", op, s)
			}
		}
	}
	if status, _, errOut := tltune("help", "nosuch"); status != exitUsage || !strings.Contains(errOut, `unknown command "nosuch"`) {
		t.Errorf("help nosuch: status %d, %q", status, errOut)
	}
	if status, out, _ := tltune("help"); status != exitOK || !strings.Contains(out, "exit status (every command):") || !strings.Contains(out, "130  interrupted") {
		t.Errorf("help lacks the exit statuses:\n%s", out)
	}
}

// TestHelpListsOnlyWhatItDescribes: every command `tltune help` lists,
// help and version included, has a usage from `tltune help NAME`.
func TestHelpListsOnlyWhatItDescribes(t *testing.T) {
	status, list, _ := tltune("help")
	if status != exitOK {
		t.Fatalf("help: status %d", status)
	}
	names := regexp.MustCompile(`(?m)^  ([a-z]+) +\S`).FindAllStringSubmatch(list, -1)
	if len(names) < len(commands) {
		t.Fatalf("help lists %d commands, %d are registered:\n%s", len(names), len(commands), list)
	}
	for _, m := range names {
		status, out, errOut := tltune("help", m[1])
		if status != exitOK || !strings.HasPrefix(out, "usage: tltune "+m[1]) || errOut != "" {
			t.Errorf("help %s: status %d, stdout %.40q, stderr %q", m[1], status, out, errOut)
		}
	}
}

// tuneJSON runs a tuning command with --json and returns its report,
// failing the test when it does not succeed.
func tuneJSON(t *testing.T, args ...string) tuneReport {
	t.Helper()
	args = append(args, "--json")
	status, stdout, stderr := tltune(args...)
	if status != exitOK {
		t.Fatalf("tltune %v: status %d: %s", args, status, stderr)
	}
	var rep tuneReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("tltune %v --json: %v\n%s", args, err, stdout)
	}
	return rep
}

// TestTuneAgainBuildsLittle: the gp search run again on the same shape,
// with the binary cache the first run filled, starts from the
// configurations the first run noted, all in the cache, even with another
// seed (another random start), and its model prefers them after; with the
// same seed it retraces the first run's path and builds nothing, or one
// configuration: a step leaves the path where this run's measurements put
// it far below the best, which on PoCL sharing its cores with other work
// (a CI run beside another test run) happened once; under --no-cache it
// builds them all.
func TestTuneAgainBuildsLittle(t *testing.T) {
	dev := poclDevice(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	gp := func(db string, flags ...string) tuneReport {
		rep := tuneJSON(t, smallGEMM(filepath.Join(dir, db), dev, append([]string{"--budget", "10", "--strategy", "gp"}, flags...)...)...)
		t.Logf("%s: %d of %d builds from the cache", db, rep.CachedBuilds, rep.Builds)
		if rep.Builds != 10 {
			t.Errorf("%s: %d builds, want 10", db, rep.Builds)
		}
		return rep
	}
	if rep := gp("first.db"); rep.CachedBuilds != 0 {
		t.Errorf("the first run took %d builds from an empty cache", rep.CachedBuilds)
	}
	if rep := gp("same.db"); rep.CachedBuilds < rep.Builds-1 {
		t.Errorf("run again with the same seed, %d of %d builds came from the cache; want all, or all but one", rep.CachedBuilds, rep.Builds)
	}
	if rep := gp("again.db", "--seed", "2"); rep.CachedBuilds < 6 {
		t.Errorf("run again, %d builds came from the cache; want its random start's 6 at least", rep.CachedBuilds)
	}
	if rep := gp("nocache.db", "--seed", "2", "--no-cache"); rep.CachedBuilds != 0 {
		t.Errorf("--no-cache: %d builds from the cache", rep.CachedBuilds)
	}
	if status, stdout, _ := tltune("cache", "stats"); status != exitOK || !strings.Contains(stdout, "2 search path(s)") {
		t.Errorf("cache stats after gp runs with two seeds: status %d, %q; want 2 search paths", status, stdout)
	}
}

// TestTuneBinaryCache: a tuning run builds its configurations a few to a
// program; the same run again builds nothing, every program coming from the
// binary cache, and finds the same configurations correct; a run with other
// inputs (another seed) loads every program from the cache too and still
// verifies each configuration on its own inputs, so an output corrupted in
// the worker is caught; --no-cache builds them all again. The runs race
// (at least the 3 fastest re-timed, recorded so; more when a re-timing
// came out slower than the next), but --no-race, which times every
// configuration in full once.
func TestTuneBinaryCache(t *testing.T) {
	dev := poclDevice(t)
	// 8 configurations make two full batches; none waits for a last one.
	batchQuiet = time.Second
	t.Cleanup(func() { batchQuiet = 0 })
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	for _, c := range []struct {
		db             string
		flags          []string
		fault          string
		builds, cached int
		ok, retimed    int
	}{
		{"cold.db", nil, "", 2, 0, 8, 3},
		{"warm.db", nil, "", 2, 2, 8, 3},
		{"seed.db", []string{"--seed", "2"}, "wrong@3", 2, 2, 7, 3},
		{"nocache.db", []string{"--no-cache", "--no-race"}, "", 2, 0, 8, 0},
		// Builder processes build beside the worker; the outcomes stay.
		{"builders.db", []string{"--no-cache", "--build-procs", "2"}, "", 2, 0, 8, 3},
	} {
		t.Setenv(worker.FaultEnv, c.fault)
		db := filepath.Join(dir, c.db)
		rep := tuneJSON(t, smallGEMM(db, dev, append([]string{"--budget", "8", "--strategy", "exhaustive",
			"--kernels-per-program", "4"}, c.flags...)...)...)
		if rep.Builds != c.builds || rep.CachedBuilds != c.cached {
			t.Errorf("%s %v: %d builds, %d from the cache; want %d and %d", c.db, c.flags, rep.Builds, rep.CachedBuilds, c.builds, c.cached)
		}
		// Whether a builder is up in time for a build is the machine's
		// business; the worker takes any build it is not.
		t.Logf("%s: %d of %d builds in builder processes", c.db, rep.BuilderBuilds, rep.Builds)
		if rep.Counts["ok"] != c.ok || rep.Counts["wrong_result"] != 8-c.ok {
			t.Errorf("%s %v: outcomes %v, want %d ok, the rest wrong", c.db, c.flags, rep.Counts, c.ok)
		}
		if rep.Retimed < c.retimed || (c.retimed == 0 && rep.Retimed+rep.Raced != 0) {
			t.Errorf("%s %v: %d raced, %d re-timed; want %d re-timed or more (none without racing)", c.db, c.flags, rep.Raced, rep.Retimed, c.retimed)
		}
		checkStoredTimings(t, db, rep)
	}
	status, stdout, stderr := tltune("cache", "stats")
	if status != exitOK || !strings.Contains(stdout, "2 program(s)") || !strings.Contains(stdout, "8 kernel(s) indexed") ||
		!strings.Contains(stdout, "noted for 1 shape(s)") {
		t.Errorf("cache stats: status %d, %q %q", status, stdout, stderr)
	}
	if status, stdout, _ := tltune("cache", "clear"); status != exitOK || !strings.Contains(stdout, "0 program(s)") ||
		!strings.Contains(stdout, "noted for 0 shape(s)") {
		t.Errorf("cache clear: status %d, %q", status, stdout)
	}
}

// TestTunePrestartBuilders: a gp run of a shape not tuned here before
// starts all its builder processes as its worker opens the device, more
// than its few builds would start on demand; the same run again retraces
// the first's path, finds every program in the cache and starts none.
func TestTunePrestartBuilders(t *testing.T) {
	dev := poclDevice(t)
	batchQuiet = time.Second
	t.Cleanup(func() { batchQuiet = 0 })
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	for i, want := range []struct{ procs, cached int }{{3, 0}, {0, 1}} {
		db := filepath.Join(dir, fmt.Sprintf("run%d.db", i))
		rep := tuneJSON(t, smallGEMM(db, dev, "--budget", "4", "--kernels-per-program", "4", "--build-procs", "3")...)
		if rep.BuilderProcesses != want.procs || rep.Builds != 1 || rep.CachedBuilds != want.cached {
			t.Errorf("run %d: %d builder processes, %d builds, %d from the cache; want %d, 1 and %d",
				i, rep.BuilderProcesses, rep.Builds, rep.CachedBuilds, want.procs, want.cached)
		}
	}
}

// checkStoredTimings checks that the store says of run 1 what the report
// does: as many raced and re-timed measurements, all ok, the best
// re-timed when any was, and every raced one slower than the best.
func checkStoredTimings(t *testing.T, db string, rep tuneReport) {
	t.Helper()
	raced, retimed := 0, 0
	for _, m := range firstRunMeasurements(t, db) {
		if (m.Raced || m.Retimed) && m.Outcome != results.OK || m.Raced && m.Retimed {
			t.Errorf("%s: %s measurement with raced %v, retimed %v", db, m.Outcome, m.Raced, m.Retimed)
		}
		if m.Raced {
			raced++
			if len(rep.Top) > 0 && m.MedianNS <= rep.Top[0].Timing.MedianNS {
				t.Errorf("%s: raced measurement with median %g ns, the best's %g", db, m.MedianNS, rep.Top[0].Timing.MedianNS)
			}
		}
		if m.Retimed {
			retimed++
		}
	}
	if raced != rep.Raced || retimed != rep.Retimed {
		t.Errorf("%s: stored %d raced, %d re-timed; the report says %d and %d", db, raced, retimed, rep.Raced, rep.Retimed)
	}
	if len(rep.Top) > 0 && rep.Retimed > 0 && !rep.Top[0].Retimed {
		t.Errorf("%s: the best was not re-timed", db)
	}
}

// firstRunMeasurements are the measurements of run 1 in the store at db.
func firstRunMeasurements(t *testing.T, db string) []results.Measurement {
	t.Helper()
	st, err := results.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.Measurements(stdctx.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestReferenceOncePerProblem: a tuning run of 6 configurations generates
// the verification inputs and computes their float64 reference once, in
// the tuning process, and checks every configuration's output against it.
func TestReferenceOncePerProblem(t *testing.T) {
	dev := poclDevice(t)
	var made []*kernelstest.Counting
	newRecipe = func(s kernels.Spec) (kernels.Recipe, error) {
		r, err := kernels.New(s)
		c := &kernelstest.Counting{Recipe: r}
		made = append(made, c)
		return c, err
	}
	t.Cleanup(func() { newRecipe = kernels.New })
	db := filepath.Join(t.TempDir(), "results.db")
	status, stdout, stderr := tltune(smallGEMM(db, dev, "--budget", "6", "--strategy", "exhaustive", "--kernels-per-program", "2", "--json")...)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var rep tuneReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 {
		t.Fatalf("%d recipes made for one problem", len(made))
	}
	if inputs, references := made[0].Counts(); rep.Evaluated != 6 || inputs != 1 || references != 1 {
		t.Errorf("%d configurations evaluated; inputs generated %d times, the reference computed %d times; want 6, 1, 1",
			rep.Evaluated, inputs, references)
	}
	for _, m := range firstRunMeasurements(t, db) {
		if m.Outcome == results.OK && !(m.Verified && m.VerifyError < 1e-5) {
			t.Errorf("ok measurement %d: verified %v, error %g; want checked against the reference", m.ID, m.Verified, m.VerifyError)
		}
	}
}

// TestPTXMode: PTX is the default where the device builds it, --ptx=false
// turns it off, and --ptx on a device that builds no PTX is refused.
func TestPTXMode(t *testing.T) {
	for _, tc := range []struct {
		args            []string
		buildsPTX       bool
		wantUse, wantOK bool
	}{
		{nil, true, true, true},
		{nil, false, false, true},
		{[]string{"--ptx"}, true, true, true},
		{[]string{"--ptx"}, false, false, false},
		{[]string{"--ptx=false"}, true, false, true},
		{[]string{"--ptx=false"}, false, false, true},
	} {
		var m ptxMode
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Var(&m, "ptx", "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if use, ok := m.decide(tc.buildsPTX); use != tc.wantUse || ok != tc.wantOK {
			t.Errorf("%v on a device that builds PTX: %v: use %v, ok %v; want %v, %v", tc.args, tc.buildsPTX, use, ok, tc.wantUse, tc.wantOK)
		}
	}
	var m ptxMode
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&m, "ptx", "")
	if err := fs.Parse([]string{"--ptx=maybe"}); err == nil || !strings.Contains(err.Error(), "want true or false") {
		t.Errorf("--ptx=maybe: %v; want an error asking for true or false", err)
	}
}
