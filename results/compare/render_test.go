package compare

import (
	"bytes"
	"encoding/xml"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"tltune/internal/golden"
	"tltune/internal/speak"
)

// goldenReport is one report with every verdict, an environment change on
// some shapes and a benchmath warning, from seeded synthetic samples.
func goldenReport(t *testing.T) *Report {
	t.Helper()
	rng := rand.New(rand.NewPCG(2026, 11))
	oldEnv := Env{Device: "NVIDIA H200", Driver: "580.95.05", Runtime: "opencl", Compiler: "v0.3.0", Version: "v0.3.0"}
	newEnv := oldEnv
	newEnv.Driver = "580.159.04"
	shapes := []struct {
		key          speak.Problem
		n            int
		median, cv   float64
		ratio        float64
		driverChange bool
	}{
		{speak.Problem{Alpha: "1", Beta: "0", Op: "gemm", Trans: "nn", Dtype: "f16", M: 64, N: 64, K: 32}, 30, 4100, 0.015, 1.06, true},
		{speak.Problem{Alpha: "1", Beta: "0", Op: "gemm", Trans: "nn", Dtype: "f32", M: 128, N: 128, K: 128}, 30, 52000, 0.01, 1.0, true},
		{speak.Problem{Alpha: "1", Beta: "0", Op: "gemv", Trans: "n", Dtype: "f32", M: 256, N: 256}, 30, 2300, 0.02, 0.92, true},
		{speak.Problem{Alpha: "1", Beta: "0", Op: "ger", Dtype: "f32", M: 64, N: 64}, 30, 950, 0.12, 1.05, false},
		{speak.Problem{Alpha: "1", Beta: "0", Op: "gemm", Trans: "nn", Dtype: "f16", M: 16, N: 16, K: 16}, 5, 1200, 0.02, 1.0, false},
	}
	var pairs []Pair
	for _, s := range shapes {
		p := Pair{
			Problem:  s.key,
			Baseline: Side{Samples: lognormal(rng, s.n, s.median, s.cv), Env: oldEnv},
			Current:  Side{Samples: lognormal(rng, s.n, s.median*s.ratio, s.cv), Env: oldEnv},
		}
		if s.driverChange {
			p.Current.Env = newEnv
		}
		pairs = append(pairs, p)
	}
	rep, err := Compare(pairs, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRenderGolden(t *testing.T) {
	rep := goldenReport(t)
	for _, v := range []Verdict{Slower, Faster, Same, Noisy} {
		if !hasVerdict(rep, v) {
			t.Errorf("golden report lacks a %v shape; adjust goldenReport", v)
		}
	}
	renderers := []struct {
		file  string
		write func(io.Writer, *Report) error
	}{
		{"report.txt", WriteTable},
		{"report.md", WriteMarkdown},
		{"report.xml", WriteJUnit},
	}
	for _, r := range renderers {
		t.Run(r.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := r.write(&buf, rep); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", r.file), buf.Bytes())
		})
	}
}

func hasVerdict(rep *Report, v Verdict) bool {
	for _, r := range rep.Results {
		if r.Verdict == v {
			return true
		}
	}
	return false
}

// TestJUnitFailuresMatchExitRule parses the XML back: the failures are
// exactly the shapes that make Regressed true.
func TestJUnitFailuresMatchExitRule(t *testing.T) {
	rep := goldenReport(t)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output is not XML: %v", err)
	}
	if got := doc.Suites[0].Tests; got != len(rep.Results) {
		t.Errorf("%d test cases, want one per shape (%d)", got, len(rep.Results))
	}
	for i, c := range doc.Suites[0].Cases {
		if failed, slower := c.Failure != nil, rep.Results[i].Verdict == Slower; failed != slower {
			t.Errorf("%s: failure element %v, verdict %v", c.Name, failed, rep.Results[i].Verdict)
		}
	}
	if (doc.Failures > 0) != rep.Regressed() {
		t.Errorf("%d failures but Regressed() = %v", doc.Failures, rep.Regressed())
	}
}

// TestTableHeaderVerbatim guards against tablewriter's header auto-format,
// which would print "RATIO CI".
func TestTableHeaderVerbatim(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, &Report{Options: DefaultOptions}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "ratio CI") {
		t.Errorf("header not printed verbatim:\n%s", buf.String())
	}
}
