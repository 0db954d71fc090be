package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/golden"
	"tltune/tuner/worker"
)

// checkGolden compares got with testdata/NAME, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// TestMain lets a test run tltune as a child process (to kill it mid-way,
// or to give it its own environment): with TLTUNE_TEST_MAIN set to a JSON
// list of arguments, the test binary is tltune. The tuning commands start
// their workers that way too. With TLTUNE_TEST_ARGV set it is tltune with
// its command-line arguments, as a script calls it (the Slurm test).
func TestMain(m *testing.M) {
	workerLauncher = func() *exec.Cmd {
		cmd := worker.Command(os.Args[0])
		cmd.Env = append(cmd.Env, `TLTUNE_TEST_MAIN=["worker"]`)
		return cmd
	}
	if raw := os.Getenv("TLTUNE_TEST_MAIN"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Exit(run(args, os.Stdout, os.Stderr))
	}
	if os.Getenv("TLTUNE_TEST_ARGV") != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// The binary cache of the tests' tuning runs, shared by their child
	// processes, not the user's.
	cache, err := os.MkdirTemp("", "tltune-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	status := m.Run()
	os.RemoveAll(cache)
	os.Exit(status)
}

// tltuneProcess returns an unstarted child process running tltune args.
func tltuneProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TLTUNE_TEST_MAIN="+string(raw))
	return cmd
}

// poclDevice returns the device id of the PoCL CPU device. Without one the
// test fails in CI (make setup installs it) and is skipped elsewhere.
func poclDevice(t *testing.T) string {
	t.Helper()
	for _, d := range device.Enumerate().Devices {
		if d.Platform == "Portable Computing Language" {
			return d.ID
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no PoCL device, and CI=true: run `make setup` (pocl-opencl-icd)")
	}
	t.Skip("no PoCL device (install pocl-opencl-icd)")
	return ""
}

// TestVersionStamped: the Makefile's stamps (-ldflags -X) are what
// `tltune version` prints and what the store records with each run.
func TestVersionStamped(t *testing.T) {
	oldVersion, oldCommit := stampedVersion, stampedCommit
	t.Cleanup(func() { stampedVersion, stampedCommit = oldVersion, oldCommit })
	stampedVersion, stampedCommit = "v0.3.0-4-gabcdef0", "abcdef0123456789abcdef0123456789abcdef01+dirty"
	status, out, _ := tltune("version")
	if status != exitOK || out != "tltune v0.3.0-4-gabcdef0 (commit abcdef012345+dirty)\n" {
		t.Errorf("version: status %d, %q", status, out)
	}
	if env := environment(device.Info{Name: "D"}); env.Version != stampedVersion || env.Commit != stampedCommit {
		t.Errorf("environment records %q %q", env.Version, env.Commit)
	}
	stampedVersion, stampedCommit = "", ""
	if v, _ := buildVersion(); v == "" {
		t.Error("an unstamped build has no version")
	}
}

// TestVersionArgs: version takes no argument, and says so rather than
// ignoring one.
func TestVersionArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"version", "extra"}, exitUsage, `tltune version: unexpected argument "extra"`},
		{[]string{"--version", "extra"}, exitUsage, `tltune version: unexpected argument "extra"`},
		{[]string{"version", "--json"}, exitUsage, "tltune version: flag provided but not defined: -json"},
	} {
		status, out, errOut := tltune(tc.args...)
		checkOneLine(t, status, tc.status, out, errOut, tc.want)
	}
	if status, out, errOut := tltune("version", "-h"); status != exitOK || out != "usage: tltune version\n\nprint the version and commit\n" || errOut != "" {
		t.Errorf("version -h: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

// TestReadmeLegend keeps README.md's legend of the configuration
// abbreviations the one `tltune help` prints.
func TestReadmeLegend(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"gemm", "gemv", "ger"} {
		if legend := tuning.Legend(op); !strings.Contains(string(readme), legend) {
			t.Errorf("README.md lacks the %s legend of tltune help:\n%s", op, legend)
		}
	}
}
