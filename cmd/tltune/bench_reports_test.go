package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

// TestBenchReportsReadTuneJSON runs docs/bench's report scripts on the
// --json report tuning writes today, so a change of that JSON that the GPU
// machine's bench scripts would trip over fails here first. Without
// PyTorch the scripts print tltune's side of their tables, which is what
// is checked. throughput_report.py compares three runs' reports (here
// three copies of one) and prints the commands' wall times beside them;
// ncu_launch.py prints the launch ptxrun repeats;
// correctness_report.py names a run with wrong results and exits 1.
func TestBenchReportsReadTuneJSON(t *testing.T) {
	python := pythonOrSkip(t)
	wantTime := "4.00 µs"
	tf32 := gemmConfig(0, 0).Problem
	tf32.Dtype, tf32.Acc, tf32.Precision = "f32", "f32", speak.TF32
	splitGemv := gemvConfig().Params
	splitGemv.Split = 8
	for _, tc := range []struct {
		script  string
		problem speak.Problem
		want    []string
		reports int            // copies of the report the script reads
		params  *tuning.Params // the best configuration's, when not a GEMM's
		wrong   int            // configurations with wrong results in the report
		status  int            // the script's exit status
	}{
		{"gemm_report.py", gemmConfig(0, 0).Problem, []string{"| 64x64x32 f16→f32 exact | 4096 | sg32 wg64x2 t32x32 cm16x8x16 u2 b1 | " + wantTime + " | 0.1 | 6 | 0.2 % |", "copy ceiling (tltune peak): 4020.0 GB/s"}, 1, nil, 0, 0},
		{"gemm_report.py", tf32, []string{"torch.backends.cuda.matmul.allow_tf32 = True", "| 64x64x32 f32→f32 tf32 | 4096 |"}, 1, nil, 0, 0},
		{"blas2_report.py", gemvConfig().Problem, []string{"copy ceiling (tltune peak): 4020.0 GB/s",
			"| gemv.n f32→f32 64×64 | 4096 | sg32 wg64x1 t2x1 b4 sp8 | " + wantTime}, 1, &splitGemv, 0, 0},
		{"ncu_launch.py", gemmConfig(0, 0).Problem, []string{"4096 1 64 2 16777216 16777216 67108864 4096 2",
			"tltune: sg32 wg64x2 t32x32 cm16x8x16 u2 b1, 4.00 us"}, 1, nil, 0, 0},
		{"correctness_report.py", gemmConfig(0, 0).Problem, []string{"1 run(s), 48 configuration(s) evaluated, 0 run(s) with outcomes"}, 1, nil, 0, 0},
		{"correctness_report.py", gemmConfig(0, 0).Problem, []string{"report.json: gemm f16→f32 64x64x32 alpha=1 beta=0 strided batch 4096: wrong_result 8",
			"1 run(s), 48 configuration(s) evaluated, 1 run(s) with outcomes"}, 1, nil, 8, 1},
		{"seeds_report.py", gemvConfig().Problem, []string{"gemv.n f32→f32 64x64: 3 run(s)",
			"report     sg32 wg64x1 t2x1 b4 sp8                            4 µs        6    0.2 %     4.0      1",
			"share of copy over 3 run(s): least 0.2 %, median 0.2 %, largest 0.2 %; 0 of 3 at or above 90 %"}, 3, &splitGemv, 0, 0},
		{"throughput_report.py", gemmConfig(0, 0).Problem, []string{
			"cold       4.0      12 s    13.5 s       3       1        2     25        3  sg32 wg64x2 t32x32 cm16x8x16 u2 b1  4 µs [3.98 µs, 4.02 µs]",
			"today  time 9", "winners: cold: same winner as today (median +0.0 %)", "goals: cold 4.0/s < (MISSED) 50/s"}, 3, nil, 0, 0},
	} {
		t.Run(tc.script, func(t *testing.T) {
			report := exampleTuneReport(speak.Named(tc.problem))
			if tc.params != nil {
				report.Top[0].Params, report.Top[0].Config = *tc.params, tc.params.String()
			}
			if tc.wrong > 0 {
				report.Counts["wrong_result"] = tc.wrong
			}
			var b bytes.Buffer
			if err := speak.WriteJSON(&b, report); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "report.json")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			// The command's wall time, as fresh.sh writes it beside each report.
			if err := os.WriteFile(strings.TrimSuffix(path, ".json")+".wall", []byte("13.500\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{filepath.Join("..", "..", "docs", "bench", tc.script)}
			for range tc.reports {
				args = append(args, path)
			}
			cmd := exec.Command(python, args...)
			out, err := cmd.CombinedOutput()
			if status := cmd.ProcessState.ExitCode(); status != tc.status {
				t.Fatalf("%s: exit status %d, want %d (%v)\n%s", tc.script, status, tc.status, err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%s does not print %q:\n%s", tc.script, w, out)
				}
			}
		})
	}
}

// pythonOrSkip returns python3's path; CI must have it (make setup).
func pythonOrSkip(t *testing.T) string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no python3, and CI=true: run `make setup` (python3)")
		}
		t.Skip("no python3")
	}
	return python
}
