package main

import (
	"bytes"
	stdctx "context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"tltune/internal/speak"
	"tltune/results"
	"tltune/tuner/suite"
)

// TestSlurmScript pins the script of a campaign and checks that bash
// reads it.
func TestSlurmScript(t *testing.T) {
	dir := t.TempDir()
	status, out, errOut := tltune("slurm", "nightly", "--array", "8", "--dir", dir, "--partition", "gpu", "--gpus-per-task", "1",
		"--time", "2:00:00", "--sbatch=--constraint=h100", "--tltune", "/opt/tltune/bin/tltune", "--", "--remeasure", "--tag", "nightly night")
	script := filepath.Join(dir, "campaign.sbatch")
	if status != exitOK || errOut != "" || out != fmt.Sprintf("wrote %s: configs/suites/nightly.toml in 8 shards\nsubmit it with: bash %s\n", script, script) {
		t.Fatalf("status %d\n%s%s", status, out, errOut)
	}
	data := readFile(t, script)
	checkGolden(t, "slurm-nightly.sbatch", bytes.ReplaceAll(data, []byte(dir), []byte("/scratch/tune")))
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n %s: %v\n%s", script, err, out)
	}
}

// TestSlurmTimes: every form of sbatch --time goes into the script.
func TestSlurmTimes(t *testing.T) {
	dir := t.TempDir()
	for _, limit := range []string{"90", "90:30", "2:00:00", "1-12", "1-12:30", "1-12:30:00", "UNLIMITED", "infinite"} {
		status, out, errOut := tltune("slurm", tinySuite, "--array", "2", "--dir", dir, "--partition", "gpu,gpu-long", "--time", limit)
		if status != exitOK || errOut != "" || !strings.Contains(string(readFile(t, filepath.Join(dir, "campaign.sbatch"))), "\n#SBATCH --time="+limit+"\n") {
			t.Errorf("--time %s: status %d\n%s%s", limit, status, out, errOut)
		}
	}
}

func TestSlurmErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"slurm", tinySuite}, "--array N is required"},
		{[]string{"slurm", tinySuite, "--array", "0"}, "--array N is required"},
		{[]string{"slurm", "--array", "2"}, "name one suite file"},
		{[]string{"slurm", tinySuite, "--array", "4"}, "--array 4: testdata/sweep-tiny.toml has 3 shapes; give at most 3 shards"},
		{[]string{"slurm", tinySuite, "--array", "2", "--gpus-per-task", "-1"}, "--gpus-per-task -1 must be ≥ 0"},
		{[]string{"slurm", tinySuite, "--array", "2", "--sbatch", "constraint=a"}, `--sbatch "constraint=a": give one sbatch option`},
		{[]string{"slurm", tinySuite, "--array", "2", "--", "--shard", "1/2"}, "--shard is the script's to set for each shard"},
		{[]string{"slurm", tinySuite, "--array", "2", "--", "--budget", "-1"}, "tltune sweep: --budget -1 must be ≥ 0"},
		{[]string{"slurm", tinySuite, "--array", "2", "--", "--bogus"}, "tltune sweep: flag provided but not defined: -bogus"},
		// What goes into the #SBATCH lines is what sbatch reads.
		{[]string{"slurm", tinySuite, "--array", "2", "--time", "abc"}, `--time "abc": give it as sbatch takes it: minutes, minutes:seconds,`},
		{[]string{"slurm", tinySuite, "--array", "2", "--time", "2h"}, `--time "2h": give it as sbatch takes it`},
		{[]string{"slurm", tinySuite, "--array", "2", "--time", "1:2:3:4"}, `--time "1:2:3:4": give it as sbatch takes it`},
		{[]string{"slurm", tinySuite, "--array", "2", "--time", "1-"}, `--time "1-": give it as sbatch takes it`},
		{[]string{"slurm", tinySuite, "--array", "2", "--partition", "a b"}, `--partition "a b": a Slurm name is letters, digits, '_', '-' and '.'`},
		{[]string{"slurm", tinySuite, "--array", "2", "--partition", "gpu;rm"}, `--partition "gpu;rm": a Slurm name is`},
		{[]string{"slurm", tinySuite, "--array", "2", "--partition", "gpu\n#SBATCH --mem=1"}, `--partition "gpu\n#SBATCH --mem=1": a Slurm name is`},
		{[]string{"slurm", tinySuite, "--array", "2", "--account", "'me'"}, `--account "'me'": a Slurm name is`},
		// The suite is slurm's argument, not sweep's.
		{[]string{"slurm", "nosuch.toml", "--array", "2"}, "tltune slurm: reading the suite: open nosuch.toml: no such file or directory (shipped suites: nightly"},
	} {
		status, stdout, stderr := tltune(append(tc.args, "--dir", dir)...)
		if strings.Contains(strings.Join(tc.args, " "), " -- ") {
			status, stdout, stderr = tltune(slices.Insert(slices.Clone(tc.args), slices.Index(tc.args, "--"), "--dir", dir)...)
		}
		checkOneLine(t, status, exitUsage, stdout, stderr, tc.want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused commands wrote %d files in %s", len(entries), dir)
	}
}

// TestSlurmCampaign runs campaigns on a real single-node Slurm cluster
// (slurmctld, slurmd and munged from Debian, configured here): the tiny
// suite tuned as a job array of two shards on PoCL, then merged; the
// merged store holds one run whose tuning table covers every problem of
// the suite. Then the nightly job: a second campaign re-measures that
// table, and regress compares the two runs. It needs root to start the
// daemons; CI runs it.
func TestSlurmCampaign(t *testing.T) {
	dev := poclDevice(t)
	cluster := startSlurm(t)
	dir := t.TempDir()
	tuned := cluster.campaign(t, dir, "campaign.sbatch", "--device", dev)
	db := filepath.Join(dir, "results.db")
	if !checkCampaign(t, db, "tltunetest-"+tuned) {
		cluster.dumpLogs(t, filepath.Join(dir, "logs"))
		t.FailNow()
	}
	nightly := cluster.campaign(t, dir, "nightly.sbatch", "--device", dev, "--remeasure", "--tag", "nightly")
	status, out, errOut := tltune("regress", "--db", db, "--baseline", "1", "--run", "nightly")
	if (status != exitOK && status != exitRegression) || !strings.Contains(out, ": 3 shapes, ") || strings.Contains(out+errOut, "only in run") {
		cluster.dumpLogs(t, filepath.Join(dir, "logs"))
		t.Errorf("regress of the nightly campaign %s with the tuned one %s: status %d\n%s%s", nightly, tuned, status, out, errOut)
	}
}

// campaign writes the tiny suite's campaign script into dir with the
// sweep flags, submits it, waits for its jobs and returns the array's job
// id.
func (c *testCluster) campaign(t *testing.T, dir, script string, sweepFlags ...string) string {
	t.Helper()
	suitePath, err := filepath.Abs(tinySuite)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := filepath.Abs(os.Args[0]) // the test binary is tltune with TLTUNE_TEST_ARGV
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, script)
	args := []string{"slurm", suitePath, "--array", "2", "--dir", dir, "-o", script, "--tltune", exe, "--time", "10:00",
		"--", "--sample-time", "50ms", "--max-batch", "16", "--wx", "1,2", "--wy", "1,2"}
	if status, out, errOut := tltune(append(args, sweepFlags...)...); status != exitOK {
		t.Fatalf("tltune slurm: status %d\n%s%s", status, out, errOut)
	}
	submit := exec.Command("bash", script)
	submit.Env = append(c.env(), "TLTUNE_TEST_ARGV=1")
	submitted, err := submit.CombinedOutput()
	ids := regexp.MustCompile(`shards: job array (\d+); merge: job (\d+),`).FindStringSubmatch(string(submitted))
	if err != nil || ids == nil {
		t.Fatalf("submitting %s: %v\n%s", script, err, submitted)
	}
	if !c.wait(t, ids[1:], 4*time.Minute) {
		c.dumpLogs(t, filepath.Join(dir, "logs"))
		t.Fatalf("jobs %v still queued or running after 4 minutes", ids[1:])
	}
	return ids[1]
}

// checkCampaign checks the merged store of the tiny suite's campaign:
// one run, the campaign's, whose tuning table has an entry for every
// problem of the suite, each tuned with the suite's budget.
func checkCampaign(t *testing.T, db, campaign string) bool {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no merged store: %v", err)
		return false
	}
	st := openResults(t, db)
	ctx := stdctx.Background()
	runs, err := st.Runs(ctx, "")
	if err != nil || len(runs) != 1 || runs[0].UUID != campaignUUID(campaign) || runs[0].Status != results.Done || runs[0].ID != 1 {
		t.Errorf("merged store holds runs %+v (%v); want one, campaign %s's, done", runs, err, campaign)
		return false
	}
	table, err := st.TuningTable(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(tinySuite)
	if err != nil {
		t.Fatal(err)
	}
	tuned := map[speak.Problem]bool{}
	for _, e := range table.Entries {
		tuned[e.Key().Problem] = true
	}
	ok := len(table.Entries) == len(s.Cases)
	for _, c := range s.Cases {
		if !tuned[c.Spec.Problem()] {
			t.Errorf("the merged tuning table has no entry for %s", c.Spec.Name())
			ok = false
		}
	}
	checkEvaluations(t, st, runs[0].ID, 2)
	return ok && !t.Failed()
}

// testCluster is a Slurm cluster of one node on this machine, in a
// temporary folder: munged, slurmctld and slurmd on free ports, with their
// own key, state and logs.
type testCluster struct {
	dir, conf string
}

func (c *testCluster) env() []string { return append(os.Environ(), "SLURM_CONF="+c.conf) }

// startSlurm starts the cluster and stops it when the test ends, failed or
// not: the jobs are cancelled, then the daemons stopped.
func startSlurm(t *testing.T) *testCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("starting slurmctld, slurmd and munged needs root; CI runs this test as root")
	}
	bins := map[string]string{}
	for _, name := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"} {
		path, err := exec.LookPath(name)
		if err != nil {
			path, err = exec.LookPath("/usr/sbin/" + name)
		}
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found, and CI=true: run `make setup` (slurmctld, slurmd, slurm-client, munge)", name)
			}
			t.Skipf("%s not found: `make setup` installs Slurm (slurmctld, slurmd, slurm-client, munge)", name)
		}
		bins[name] = path
	}
	dir := t.TempDir()
	c := &testCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	for _, sub := range []string{"munge", "state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 128)
	for i := range key {
		key[i] = byte(i*37 + 11) // any 128 bytes: the key never leaves the test
	}
	if err := os.WriteFile(filepath.Join(dir, "munge", "munge.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.conf, []byte(slurmConf(dir, freePort(t), freePort(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	c.daemon(t, "munged", bins["munged"], "-F", "-f", "--socket="+filepath.Join(dir, "munge", "socket"),
		"--key-file="+filepath.Join(dir, "munge", "munge.key"), "--pid-file="+filepath.Join(dir, "munge", "pid"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"), "--log-file="+filepath.Join(dir, "munge", "log"))
	c.waitFor(t, "munged's socket", func() bool { _, err := os.Stat(filepath.Join(dir, "munge", "socket")); return err == nil })
	c.daemon(t, "slurmctld", bins["slurmctld"], "-D", "-f", c.conf)
	c.daemon(t, "slurmd", bins["slurmd"], "-D", "-f", c.conf, "-N", "localhost")
	t.Cleanup(func() { c.cancelJobs(t) }) // runs before the daemons stop
	c.waitFor(t, "the node to be idle", func() bool {
		out, _ := c.command("sinfo", "-h", "-o", "%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	return c
}

// slurmConf configures one node, localhost, with every CPU; jobs are
// tracked without cgroups and nothing is accounted.
func slurmConf(dir string, ctldPort, slurmdPort int) string {
	return fmt.Sprintf(`ClusterName=tltunetest
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[3]s/munge/socket
CredType=cred/munge
StateSaveLocation=%[3]s/state
SlurmdSpoolDir=%[3]s/spool
SlurmctldPidFile=%[3]s/slurmctld.pid
SlurmdPidFile=%[3]s/slurmd.pid
SlurmctldLogFile=%[3]s/slurmctld.log
SlurmdLogFile=%[3]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
NodeName=localhost CPUs=%[4]d State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, ctldPort, slurmdPort, dir, runtime.NumCPU())
}

// freePort returns a TCP port no one listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// daemon starts a daemon in the foreground, its output in DIR/NAME.out,
// and stops it when the test ends (it also dies with the test process).
func (c *testCluster) daemon(t *testing.T, name, path string, args ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(c.dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = c.env()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
}

// command runs a Slurm client command against the cluster.
func (c *testCluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = c.env()
	return cmd
}

// waitFor polls ready until it holds, for at most a minute.
func (c *testCluster) waitFor(t *testing.T, what string, ready func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ready() {
			return
		}
	}
	c.dumpLogs(t, "")
	t.Fatalf("waited a minute for %s", what)
}

// wait waits until the jobs have left the queue, and reports whether they
// did within limit.
func (c *testCluster) wait(t *testing.T, jobs []string, limit time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Second) {
		out, err := c.command("squeue", "-h", "-o", "%i", "-j", strings.Join(jobs, ",")).Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return true
		}
	}
	return false
}

// cancelJobs cancels every job and waits for them to end: a job's
// slurmstepd would outlive slurmd.
func (c *testCluster) cancelJobs(t *testing.T) {
	if out, err := c.command("scancel", "--full", "--user=root").CombinedOutput(); err != nil {
		t.Logf("scancel: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := c.command("squeue", "-h").Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
	}
	t.Logf("jobs still in the queue after scancel")
}

// dumpLogs logs the daemons' logs and the jobs' output in jobLogs.
func (c *testCluster) dumpLogs(t *testing.T, jobLogs string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
	more, _ := filepath.Glob(filepath.Join(c.dir, "*.out"))
	if jobLogs != "" {
		jobs, _ := filepath.Glob(filepath.Join(jobLogs, "*.out"))
		more = append(more, jobs...)
	}
	for _, f := range append(files, more...) {
		data, _ := os.ReadFile(f)
		if len(data) > 8000 {
			data = data[len(data)-8000:]
		}
		t.Logf("==> %s <==\n%s", f, data)
	}
}
