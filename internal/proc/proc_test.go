package proc

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestLookupSelf(t *testing.T) {
	start, running := Lookup(os.Getpid())
	if !running {
		t.Fatal("this process does not run")
	}
	if runtime.GOOS == "linux" && start == "" {
		t.Error("no start on Linux")
	}
	if again, _ := Lookup(os.Getpid()); again != start {
		t.Errorf("start %q, then %q", start, again)
	}
}

// TestLookupEnded: a process that ended does not run, reaped or a zombie
// (its parent, the test, has not waited for it yet).
func TestLookupEnded(t *testing.T) {
	child := exec.Command("true")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	pid := child.Process.Pid
	if runtime.GOOS == "linux" {
		deadline := time.Now().Add(time.Minute)
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("the zombie %d runs", pid)
		}
	}
	child.Wait()
	if running(pid) {
		t.Errorf("the reaped %d runs", pid)
	}
	for _, pid := range []int{0, -1} {
		if running(pid) {
			t.Errorf("pid %d runs", pid)
		}
	}
}

func running(pid int) bool {
	_, ok := Lookup(pid)
	return ok
}

func TestParseStat(t *testing.T) {
	stat := "12219 (a) b (c) R 12217 12217 2436 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 8479437 3133440 405\n"
	state, ticks, ok := parseStat([]byte(stat))
	if !ok || state != "R" || ticks != "8479437" {
		t.Errorf("state %q, start %q, %v; want R, 8479437", state, ticks, ok)
	}
	if _, _, ok := parseStat([]byte("12219 (a) R 1 2")); ok {
		t.Error("a short line parsed")
	}
}
