package main

import (
	stdcontext "context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/results"
)

// The environments of the nightly fixture: the H200 before and after a
// driver update, and a CPU that shares the database.
var (
	nightlyOld = results.Environment{Device: "NVIDIA H200", Vendor: "NVIDIA Corporation", Driver: "580.159.04",
		Runtime: "opencl", Host: "gpu-box", Version: "v0.1.0", Commit: "0123456789ab", CompilerVersion: "tltune v0.1.0"}
	nightlyNew = withDriver(nightlyOld, "590.48.01")
	nightlyCPU = results.Environment{Device: "cpu-haswell-Intel(R) Xeon(R)", Vendor: "GenuineIntel", Driver: "3.1",
		Runtime: "opencl", Host: "ci", Version: "v0.1.0", Commit: "0123456789ab", CompilerVersion: "tltune v0.1.0"}
)

func withDriver(e results.Environment, driver string) results.Environment {
	e.Driver = driver
	return e
}

// A synthShape is one shape of the nightly fixture with its work per launch
// (a batch of 10), from which GFLOP/s and GB/s follow.
type synthShape struct {
	op, trans, dtype string
	m, n, k          int
}

func (s synthShape) problem() speak.Problem {
	return speak.Problem{Op: s.op, Trans: s.trans, Dtype: s.dtype, Acc: "f32", M: s.m, N: s.n, K: s.k,
		Alpha: "1", Beta: "0", Layout: "strided"}
}

func (s synthShape) config(sg int) results.Config {
	return results.Config{Problem: s.problem(),
		Params:     tuning.Params{SubgroupSize: sg, WorkGroupSize: [2]int{sg, 2}, Tile: [2]int{16, 16}, Unroll: 1, BatchPerGroup: 1},
		SourceHash: "sha256:" + s.op + s.dtype + tuning.Params{SubgroupSize: sg}.String()}
}

const synthBatch = 10

// work is the FLOPs and bytes of one launch: inputs read once, outputs
// written once (DESIGN.md §5), f32 accumulators as outputs.
func (s synthShape) work() (flops, bytes float64) {
	size := 4.0
	if s.dtype == "f16" {
		size = 2
	}
	m, n, k := float64(s.m), float64(s.n), float64(s.k)
	switch s.op {
	case "gemm":
		flops, bytes = 2*m*n*k, (m*k+k*n)*size+m*n*4
	case "gemv":
		flops, bytes = 2*m*n, (m*n+n)*size+m*4
	case "ger":
		flops, bytes = 2*m*n, (m+n)*size+2*m*n*4
	}
	return flops * synthBatch, bytes * synthBatch
}

var (
	gemmF16 = synthShape{"gemm", "nn", "f16", 64, 64, 32}
	gemmF32 = synthShape{"gemm", "nn", "f32", 128, 128, 128}
	gemv256 = synthShape{"gemv", "n", "f32", 256, 256, 0}
	ger32   = synthShape{"ger", "", "f32", 32, 32, 0}
	ger64   = synthShape{"ger", "", "f32", 64, 64, 0}
	gemv512 = synthShape{"gemv", "n", "f32", 512, 512, 0}
)

// synthSamples is the number of repeats of every synthetic measurement,
// and synthNoise their relative standard deviation.
const (
	synthSamples = 25
	synthNoise   = 0.01
)

// synth is an ok measurement of s with the given subgroup size: samples
// drawn around medianNS with 1 % Gaussian noise, statistics computed from
// them as the tuner would.
func synth(rng *rand.Rand, s synthShape, sg int, medianNS float64, at time.Time) results.Measurement {
	samples := make([]float64, synthSamples)
	for i := range samples {
		samples[i] = medianNS * (1 + synthNoise*rng.NormFloat64())
	}
	sorted := slices.Sorted(slices.Values(samples))
	med := sorted[synthSamples/2]
	flops, bytes := s.work()
	return results.Measurement{Config: s.config(sg), Outcome: results.OK, SamplesNS: samples,
		MedianNS: med, MinNS: sorted[0], MaxNS: sorted[synthSamples-1], IQRNS: sorted[18] - sorted[6],
		CILowNS: sorted[8], CIHighNS: sorted[16], GFLOPS: flops / med, GBS: bytes / med,
		Verified: true, VerifyError: 1e-4, Seed: 7, MeasuredAt: at}
}

// nightlyDB builds a database of four runs a day apart and returns its path:
//
//	run 1 "nightly" H200, driver 580: gemm f16 (two configs), gemm f32, gemv, ger 32×32, gemv 512 without samples
//	run 2 "nightly" H200, driver 590: gemm f16 10 % slower, the rest unchanged; ger 64×64 instead of 32×32
//	run 3 "nightly" H200, driver 590: the distributions of run 2 drawn again, but the other gemm f16
//	      configuration is the best; no gemv 512; interrupted
//	run 4 (untagged) on the CPU: gemm f16 only
//
// Ceilings are stored for the H200 with driver 580 only.
func nightlyDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := stdcontext.Background()
	rng := rand.New(rand.NewPCG(8, 2026))
	day := time.Date(2026, 11, 18, 2, 0, 0, 0, time.UTC)
	runs := []struct {
		env          results.Environment
		tag          string
		measurements func(at time.Time) []results.Measurement
	}{
		{nightlyOld, "nightly", func(at time.Time) []results.Measurement {
			return []results.Measurement{synth(rng, gemmF16, 16, 4600, at), synth(rng, gemmF16, 32, 4000, at),
				synth(rng, gemmF32, 16, 21000, at), synth(rng, gemv256, 32, 1500, at), synth(rng, ger32, 16, 700, at),
				unsampled(synth(rng, gemv512, 32, 5200, at))}
		}},
		{nightlyNew, "nightly", func(at time.Time) []results.Measurement {
			return append(nightlyAfterUpdate(rng, 16, 32, at), unsampled(synth(rng, gemv512, 32, 5200, at)))
		}},
		{nightlyNew, "nightly", func(at time.Time) []results.Measurement { return nightlyAfterUpdate(rng, 32, 16, at) }},
		{nightlyCPU, "", func(at time.Time) []results.Measurement {
			return []results.Measurement{synth(rng, gemmF16, 8, 91000, at)}
		}},
	}
	for i, r := range runs {
		at := day.Add(time.Duration(i) * 24 * time.Hour)
		run, err := s.BeginRun(ctx, r.env, results.Run{CommandLine: "tltune sweep configs/suites/nightly.toml", Tag: r.tag, Op: "sweep", StartedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range r.measurements(at) {
			if _, err := s.Record(ctx, run.ID, m); err != nil {
				t.Fatal(err)
			}
		}
		status := results.Done
		if i == 2 {
			status = results.Interrupted // stopped by hand after its last shape
		}
		if err := s.FinishRun(ctx, run.ID, status, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	ceilings := results.Ceilings{CopyGBS: 4020, F32GFLOPS: 61000, F64GFLOPS: 31500, F16GFLOPS: 122000, MeasuredAt: day}
	if err := s.RecordCeilings(ctx, nightlyOld, ceilings); err != nil {
		t.Fatal(err)
	}
	return path
}

// nightlyAfterUpdate is a run after the driver update: gemm f16 10 %
// slower (4400 ns instead of 4000) with subgroup size fast, the other size
// at 4650 ns; ger 32×32 replaced by 64×64.
func nightlyAfterUpdate(rng *rand.Rand, fast, slow int, at time.Time) []results.Measurement {
	return []results.Measurement{synth(rng, gemmF16, slow, 4650, at), synth(rng, gemmF16, fast, 4400, at),
		synth(rng, gemmF32, 16, 21000, at), synth(rng, gemv256, 32, 1500, at), synth(rng, ger64, 16, 900, at)}
}

// unsampled is m as an older store may hold it: statistics without raw
// samples.
func unsampled(m results.Measurement) results.Measurement {
	m.SamplesNS = nil
	return m
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRegressSlower: the 10 % slowdown of one shape at 1 % noise is a
// confirmed regression (exit 1), in the table, the Markdown and the JUnit
// report, with the driver change and the new and gone shapes listed.
func TestRegressSlower(t *testing.T) {
	db := nightlyDB(t)
	dir := t.TempDir()
	md, junit := filepath.Join(dir, "report.md"), filepath.Join(dir, "report.xml")
	status, out, errOut := tltune("regress", "--db", db, "--baseline", "1", "--run", "2", "--md", md, "--junit", junit)
	if status != exitRegression || errOut != "" {
		t.Fatalf("status %d (want %d), stderr %q", status, exitRegression, errOut)
	}
	for _, want := range []string{"slower", "REGRESSION CONFIRMED", `driver changed: "580.159.04" → "590.48.01"`,
		"new (only in the current run): ger f32 64x64", "gone (only in the baseline): ger f32 32x32",
		"not compared (no raw samples): gemv.n f32 512x512"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	checkGolden(t, "regress-slower.stdout", []byte(out))
	checkGolden(t, "regress-slower.md", readFile(t, md))
	checkGolden(t, "regress-slower.xml", readFile(t, junit))
}

// TestRegressSame: two runs drawn from the same distributions pass (exit
// 0), whichever configuration is the best. Baseline "last" is the run
// before the current one, and so is the current run's own tag.
func TestRegressSame(t *testing.T) {
	db := nightlyDB(t)
	for _, baseline := range []string{"last", "nightly"} {
		status, out, errOut := tltune("regress", "--db", db, "--baseline", baseline, "--run", "3")
		if status != exitOK || errOut != "" {
			t.Fatalf("--baseline %s: status %d (want %d), stderr %q", baseline, status, exitOK, errOut)
		}
		if !strings.Contains(out, "no confirmed regression: 4 shapes, 0 slower") ||
			!strings.Contains(out, "gemm.nn f16/f32 64x64x32: best configuration changed from sg16") {
			t.Errorf("--baseline %s: identical distributions reported as a change:\n%s", baseline, out)
		}
		checkGolden(t, "regress-same.stdout", []byte(out))
	}
}

// TestRegressNothingCompared: runs without a shape in common pass, and
// still list their shapes and how the environment changed.
func TestRegressNothingCompared(t *testing.T) {
	db := nightlyDB(t)
	s, err := results.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := stdcontext.Background()
	run, err := s.BeginRun(ctx, nightlyOld, results.Run{Op: "gemv"})
	if err == nil {
		_, err = s.Record(ctx, run.ID, synth(rand.New(rand.NewPCG(1, 2)), gemv512, 16, 5200, run.StartedAt))
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	status, out, errOut := tltune("regress", "--db", db, "--baseline", "last", "--run", "5")
	if status != exitOK || errOut != "" {
		t.Fatalf("status %d (want %d), stderr %q", status, exitOK, errOut)
	}
	for _, want := range []string{"baseline: run 3", "no confirmed regression: 0 shapes", `driver changed: "590.48.01" → "580.159.04"`,
		"new (only in the current run): gemv.n f32 512x512", "gone (only in the baseline): gemm.nn f16/f32 64x64x32, "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func TestRegressErrors(t *testing.T) {
	db := nightlyDB(t)
	noDir := filepath.Join(t.TempDir(), "missing", "report.md")
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{nil, exitUsage, "--baseline is required"},
		{[]string{"--baseline", "1", "--threshold", "five"}, exitUsage, `--threshold: threshold "five" is not a number`},
		{[]string{"--baseline", "1", "--threshold", "150%"}, exitUsage, "--threshold: threshold 1.5 out of range"},
		{[]string{"--baseline", "1", "--alpha", "0.7"}, exitUsage, "--alpha: alpha 0.7 out of range"},
		{[]string{"--baseline", "1", "--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"--baseline", "1", "2"}, exitUsage, `unexpected argument "2"`},
		{[]string{"--baseline", "3", "--run", "nightly"}, exitUsage, "--baseline 3 and --run nightly are both run 3"},
		{[]string{"--baseline", "monthly"}, exitUsage, `no run id or tag "monthly" in ` + db + " other than run 4"},
		{[]string{"--baseline", "9", "--run", "2"}, exitUsage, "no such run 9 in " + db},
		{[]string{"--baseline", "1", "--run", "weekly"}, exitUsage, `no run id or tag "weekly"`},
		// The latest run is the CPU's, and no CPU run came before it.
		{[]string{"--baseline", "last"}, exitUsage, "no run on cpu-haswell-Intel(R) Xeon(R) before run 4"},
		{[]string{"--baseline", "1", "--run", "2", "--md", noDir}, exitUsage, "--md: "},
	}
	for _, tc := range tests {
		status, out, errOut := tltune(append([]string{"regress", "--db", db}, tc.args...)...)
		checkOneLine(t, status, tc.status, out, errOut, tc.want)
	}
}

// TestBetaIsPartOfTheProblem: ger 32×32 tuned with β = 0 and then, in a
// nightly suite, with β = 1 (1.5× slower: it reads C) are two problems in
// one database. The table has an entry for each, and regress compares
// neither with the other: no false regression, both listed as new and gone.
func TestBetaIsPartOfTheProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := stdcontext.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 11, 18, 2, 0, 0, 0, time.UTC)
	withBeta := func(m results.Measurement, beta string) results.Measurement {
		m.Config.Beta = beta
		return m
	}
	for i, m := range []results.Measurement{
		synth(rng, ger32, 16, 700, at),
		withBeta(synth(rng, ger32, 32, 1050, at), "1"),
	} {
		run, err := s.BeginRun(ctx, nightlyOld, results.Run{CommandLine: "tltune ger", Op: "ger", Tag: "nightly", StartedAt: at.Add(time.Duration(i) * time.Hour)})
		if err == nil {
			_, err = s.Record(ctx, run.ID, m)
		}
		if err == nil {
			err = s.FinishRun(ctx, run.ID, results.Done, time.Time{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	tablePath := filepath.Join(t.TempDir(), "tuning.json")
	if status, out, errOut := tltune("table", "--db", path, "-o", tablePath); status != exitOK {
		t.Fatalf("table: status %d, %s%s", status, out, errOut)
	}
	table, err := tuning.ReadFile(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Entries) != 2 || table.Entries[0].Beta != "0" || table.Entries[1].Beta != "1" ||
		table.Entries[0].Params.SubgroupSize != 16 || table.Entries[1].Params.SubgroupSize != 32 {
		t.Errorf("table entries %+v, want ger beta=0 (sg16) and beta=1 (sg32)", table.Entries)
	}

	status, out, errOut := tltune("regress", "--db", path, "--baseline", "1", "--run", "2")
	if status != exitOK || errOut != "" {
		t.Fatalf("regress: status %d (want %d), stderr %q\n%s", status, exitOK, errOut, out)
	}
	for _, want := range []string{"no confirmed regression: 0 shapes", "new (only in the current run): ger f32 32x32 beta=1", "gone (only in the baseline): ger f32 32x32"} {
		if !strings.Contains(out, want) {
			t.Errorf("regress output lacks %q:\n%s", want, out)
		}
	}
}

// TestDescribeKilledRun: a running run whose process is gone is described
// as killed, one that a process still tunes as running.
func TestDescribeKilledRun(t *testing.T) {
	node7 := results.Owner{Host: "node7.invalid", PID: 4321, Token: "a tltune on node7"}
	run := results.Run{ID: 3, Status: results.Running, Owner: node7, Heartbeat: time.Now()}
	if got := describeRun(run); !strings.HasSuffix(got, ", running") {
		t.Errorf("a live run: %q", got)
	}
	run.Heartbeat = time.Now().Add(-2 * results.StaleAfter)
	if got := describeRun(run); !strings.HasSuffix(got, ", killed") {
		t.Errorf("a killed run: %q", got)
	}
}
