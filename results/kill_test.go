package results

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writerEnv makes the test binary act as a tuning process that records
// measurements into the database it names and then hangs until killed.
const writerEnv = "TLTUNE_RESULTS_TEST_WRITER"

func init() {
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(writer(path))
	}
}

// killedConfigs are the configurations of the simulated run, in order.
func killedConfigs() []Config {
	var cs []Config
	for _, sg := range []int{8, 16, 32, 64, 128} {
		cs = append(cs, gemm(64, 64, 32, sg))
	}
	return cs
}

const measuredBeforeKill = 3

func writer(path string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	run, err := s.BeginRun(ctx, h200, Run{CommandLine: "tltune gemm", Op: "gemm"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	for i, c := range killedConfigs()[:measuredBeforeKill] {
		if _, err := s.Record(ctx, run.ID, ok(c, float64(100+i))); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("recorded", i) // the parent kills after the last line
	}
	time.Sleep(time.Minute) // never finishes the run: SIGKILL ends it
	return 0
}

// TestKilledWriterThenResume kills a process that is recording a run with
// SIGKILL, then checks that every measurement it committed survived, that
// the run is seen as unfinished, and that resuming it measures only the
// missing configurations.
func TestKilledWriterThenResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for i := 0; i < measuredBeforeKill; i++ {
		if !lines.Scan() || !strings.HasPrefix(lines.Text(), "recorded") {
			cmd.Process.Kill()
			t.Fatalf("writer said %q, want %d records", lines.Text(), measuredBeforeKill)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != Running || !run.FinishedAt.IsZero() {
		t.Errorf("killed run is %s, finished %v; want running, unfinished", run.Status, run.FinishedAt)
	}
	done, err := s.MeasuredConfigs(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != measuredBeforeKill {
		t.Fatalf("%d measurements survived the kill, want %d", len(done), measuredBeforeKill)
	}

	// Resume the way the tuner does: skip what the run has measured.
	if run, err = s.ResumeRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	for i, c := range killedConfigs() {
		if _, measured := done[c]; measured {
			continue
		}
		record(t, s, run.ID, ok(c, float64(100+i)))
	}
	if _, err := s.Record(ctx, run.ID, ok(killedConfigs()[0], 1)); !errors.Is(err, ErrAlreadyMeasured) {
		t.Errorf("re-measuring a surviving config: %v, want ErrAlreadyMeasured", err)
	}
	if err := s.FinishRun(ctx, run.ID, Done, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Measurements(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(killedConfigs()) {
		t.Errorf("%d measurements after resuming, want %d", len(ms), len(killedConfigs()))
	}
	for i, m := range ms {
		if m.MedianNS != float64(100+i) {
			t.Errorf("measurement %d has median %v, want %d (in order, none repeated)", i, m.MedianNS, 100+i)
		}
	}
}
