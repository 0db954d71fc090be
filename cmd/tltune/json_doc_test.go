package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tltune/device"
	"tltune/internal/speak"
	"tltune/results"
)

// jsonDoc is the page that documents every JSON output.
const jsonDoc = "../../docs/json.md"

// docExample matches an example of docs/json.md: a marker naming the
// output, then a json code block.
var docExample = regexp.MustCompile("(?s)<!-- json: ([a-z-]+) -->\\s*```json\\n(.*?)```")

// jsonOutputs produce each documented output from the test fixtures: the
// command itself where it runs without a GPU, the report's own type filled
// in where it needs one (tuning).
func jsonOutputs(t *testing.T) map[string]func() []byte {
	run := func(args ...string) []byte {
		t.Helper()
		status, out, errOut := tltune(args...)
		if status != exitOK && status != exitUsage && status != exitRegression { // check reports errors, regress a regression
			t.Fatalf("tltune %v: status %d, stderr %q", args, status, errOut)
		}
		return []byte(out)
	}
	marshal := func(v any) []byte {
		var b bytes.Buffer
		if err := speak.WriteJSON(&b, v); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	nightly, fixture, replay := nightlyDB(t), fixtureDB(t), replayDB(t)
	best := exampleBest()
	problem := speak.Named(gemmConfig(0, 0).Problem)
	return map[string]func() []byte{
		"gemm": func() []byte { return marshal(exampleTuneReport(problem)) },
		"sweep": func() []byte {
			return marshal(sweepReport{Run: 2, Database: "results.db", Device: "NVIDIA H200", Driver: "580.159.04", Suite: "nightly",
				Mode: "remeasure", CopyGBs: 4020, Shapes: []sweepShape{{NamedProblem: problem, Action: actionRemeasured, Best: &best,
					Stored: &storedBest{Run: 1, MedianNs: 3990, Params: best.Params}, Counts: map[string]int{"ok": 1}, Stop: "exhausted", Seconds: 1.5}}})
		},
		"export":  func() []byte { return run("export", "--db", fixture, "--run", "1", "--format", "json") },
		"regress": func() []byte { return run("regress", "--db", nightly, "--baseline", "1", "--run", "2", "--json") },
		"history": func() []byte {
			return run("history", "--db", nightly, "--op", "gemm", "--m", "64", "--n", "64", "--k", "32", "--device", "h200", "--json")
		},
		"replay": func() []byte { return run("replay", "--db", replay, "--run", "1", "--trials", "2", "--json") },
		"check":  func() []byte { return run("check", "--json", "testdata/compile/bad.tl") },
		"compile": func() []byte {
			return run("compile", "--json", "--target", "nvidia", "--tuning", "testdata/compile/tuning.json", "testdata/compile/gemm.tl")
		},
		"run": func() []byte {
			return run("run", "--json", "testdata/run/fused.ir", "--func", "scale", "--arg", "a=2", "--arg", "x=rand", "--shape", "x=4")
		},
		"devices": func() []byte { withInventory(t, fixedInventory()); return run("devices", "--json") },
		"peak": func() []byte {
			return marshal(device.Peak{Device: "NVIDIA H200", Driver: "580.159.04", Runtime: "opencl", Ceilings: []device.Ceiling{
				{Name: "fma_f32", Unit: "GFLOP/s", Value: 60000, Work: 1e12, Kernel: "float x16 chains, work-groups of 256", SamplesNS: []int64{16600000}}},
				Skipped: []string{"fma_f64: no fp64"}})
		},
		"table": func() []byte { return run("table", "--db", fixture, "--op", "gemm") },
		"cache": func() []byte { t.Setenv("XDG_CACHE_HOME", t.TempDir()); return run("cache", "stats", "--json") },
		"merge": func() []byte {
			return marshal([]results.MergeReport{{Source: "shard-1.db", Added: map[string]int{"runs": 1, "measurements": 40},
				Runs: []results.MergedRun{{UUID: "7bbd87b6-c764-4792-a972-d9c4e82015c5", From: 1, Into: 3, Result: results.RunJoined}}}})
		},
	}
}

// exampleBest is a ranked configuration as a GPU run reports one.
func exampleBest() rankedConfig {
	p := gemmConfig(32, 64).Params
	return rankedConfig{Params: p, Config: p.String(), Timing: results.Timing{MedianNS: 4000, MinNS: 3950, MaxNS: 4200,
		IQRNS: 40, CILowNS: 3980, CIHighNS: 4020, GFLOPS: 65.5, GBS: 6.1}, Samples: 25, Retimed: true, BWPercent: 0.2, VerifyErr: 1e-4, AboveRoof: "warning: ..."}
}

// exampleTuneReport is the report of a tuning run of problem on a GPU.
func exampleTuneReport(problem speak.NamedProblem) tuneReport {
	return tuneReport{Run: 1, Database: "results.db", Device: "NVIDIA H200", Driver: "580.159.04", NamedProblem: problem,
		Batch: 4096, BufferSets: 4, Stop: "budget", Candidates: 900, Counts: map[string]int{"ok": 40, "pruned": 2000},
		Raced: 25, Retimed: 3, PrunedBy: map[string]int{"work-group": 2000}, CopyGBs: 4020, Top: []rankedConfig{exampleBest()},
		throughput: throughput{Evaluated: 48, WallSeconds: 12, EvaluationsPerSecond: 4, TimeSplit: map[string]float64{"time": 9},
			BusySeconds: map[string]float64{"compile": 20}, Builds: 3, CachedBuilds: 1, BuilderBuilds: 2, BuilderProcesses: 2}}
}

// TestJSONDocumented checks every example of docs/json.md against what the
// command prints now: the same fields, at every level, of the same JSON
// types (an empty list or a null matches anything). Every output a command
// prints with --json (and table and export, which write JSON files) must
// have an example.
func TestJSONDocumented(t *testing.T) {
	doc, err := os.ReadFile(jsonDoc)
	if err != nil {
		t.Fatal(err)
	}
	outputs := jsonOutputs(t)
	var documented []string
	for _, m := range docExample.FindAllSubmatch(doc, -1) {
		name := string(m[1])
		documented = append(documented, name)
		produce, ok := outputs[name]
		if !ok {
			t.Errorf("docs/json.md documents %q, which no test produces", name)
			continue
		}
		var want, got any
		if err := json.Unmarshal(m[2], &want); err != nil {
			t.Errorf("docs/json.md, example %s: %v", name, err)
			continue
		}
		out := produce()
		if err := json.Unmarshal(out, &got); err != nil {
			t.Errorf("%s: the output is not JSON: %v\n%s", name, err, out)
			continue
		}
		for _, d := range shapeDiff(name, want, got) {
			t.Errorf("docs/json.md, example %s: %s", name, d)
		}
	}
	for name := range outputs {
		if !slices.Contains(documented, name) {
			t.Errorf("the JSON output of %s has no example in docs/json.md (<!-- json: %s --> before a json block)", name, name)
		}
	}
}

// shapeDiff lists where got differs from the documented want in its
// fields or their types.
func shapeDiff(path string, want, got any) []string {
	if want == nil || got == nil {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: documented an object, the output has %T", path, got)}
		}
		var diffs []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: documented, not in the output", path, k))
				continue
			}
			diffs = append(diffs, shapeDiff(path+"."+k, wv, gv)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok && !isMapOfCounts(w) {
				diffs = append(diffs, fmt.Sprintf("%s.%s: in the output, not documented", path, k))
			}
		}
		slices.Sort(diffs)
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: documented a list, the output has %T", path, got)}
		}
		if len(w) == 0 || len(g) == 0 {
			return nil
		}
		return shapeDiff(path+"[0]", w[0], g[0])
	}
	if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
		return []string{fmt.Sprintf("%s: documented a %T, the output has a %T", path, want, got)}
	}
	return nil
}

// isMapOfCounts tells a map keyed by data (outcome names, rules, phases)
// from an object with fixed fields: its documented keys are examples.
func isMapOfCounts(m map[string]any) bool {
	for k, v := range m {
		if _, ok := v.(float64); !ok || strings.ContainsAny(k, " ") {
			return false
		}
	}
	return len(m) > 0 && slices.ContainsFunc([]string{"ok", "pruned", "time", "compile", "work-group", "runs"}, func(k string) bool { _, ok := m[k]; return ok })
}
