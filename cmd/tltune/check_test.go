package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/diag"
	"tltune/compiler/ir"
)

// runCmd runs the command line in process.
func runCmd(args ...string) (status int, stdout, stderr string) {
	var out, errb bytes.Buffer
	status = run(args, &out, &errb)
	return status, out.String(), errb.String()
}

func TestCheckValidIsSilent(t *testing.T) {
	status, out, errs := runCmd("check", "testdata/check/ok.tl", "testdata/check/messy.tl")
	if status != exitOK || out != "" || errs != "" {
		t.Errorf("status %d, stdout %q, stderr %q; want 0 and silence", status, out, errs)
	}
}

// TestCheckReportsEveryError pins the diagnostic format: every error of
// every file, sorted, with the source line and a caret (tabs kept).
func TestCheckReportsEveryError(t *testing.T) {
	status, out, errs := runCmd("check", "testdata/check/bad.tl", "testdata/check/ok.tl", "testdata/check/syntax.tl")
	if status != exitUsage || out != "" {
		t.Errorf("status %d, stdout %q; want 1 and nothing on stdout", status, out)
	}
	checkGolden(t, "check-errors.stderr", []byte(errs))
}

func TestCheckUsage(t *testing.T) {
	if status, _, errs := runCmd("check"); status != exitUsage || strings.Count(errs, "\n") != 1 {
		t.Errorf("no files: status %d, stderr %q; want 2 and one line", status, errs)
	}
	status, _, errs := runCmd("check", "testdata/check/missing.tl")
	if status != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "missing.tl") {
		t.Errorf("missing file: status %d, stderr %q; want 1 and one line naming the file", status, errs)
	}
}

// TestBinaryFileRefused: a binary file is one line of error, not one per
// byte (found by TestCLIRandomArguments: it took minutes per file).
func TestBinaryFileRefused(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "k.ir")
	if err := os.WriteFile(bin, []byte("SQLite format 3\x00\x10\x00\x02\x02"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"check", "fmt", "compile", "run"} {
		status, stdout, stderr := tltune(cmd, bin)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "holds NUL bytes") {
			t.Errorf("%s of a binary file: status %d, stdout %q, stderr %q; want one line and status 2", cmd, status, stdout, stderr)
		}
	}
}

func TestGuardedReportsInternalFault(t *testing.T) {
	prog, errs := guarded("k.tl", func() (*ir.Program, diag.List) { panic("boom") })
	if prog != nil || len(errs) != 1 || !strings.Contains(errs[0].Msg, "internal compiler error") || !strings.Contains(errs[0].Msg, "boom") {
		t.Errorf("got %v, %v", prog, errs)
	}
}

func TestFmtPrintsCanonicalForm(t *testing.T) {
	status, out, errs := runCmd("fmt", "testdata/check/messy.tl")
	if status != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", status, errs)
	}
	checkGolden(t, "fmt-messy.stdout", []byte(out))
}

func TestFmtFormatsInvalidButParsablePrograms(t *testing.T) {
	if status, out, _ := runCmd("fmt", "testdata/check/bad.tl"); status != exitOK || !strings.Contains(out, "func @bad") {
		t.Errorf("status %d, stdout %q", status, out)
	}
	status, out, errs := runCmd("fmt", "testdata/check/syntax.tl")
	if status != exitUsage || out != "" || !strings.Contains(errs, "syntax.tl:3:10: error: unknown instruction 'bogus'") {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errs)
	}
}

func TestFmtRewritesInPlace(t *testing.T) {
	dir := t.TempDir()
	messy, err := os.ReadFile("testdata/check/messy.tl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "k.tl")
	if err := os.WriteFile(file, messy, 0o640); err != nil {
		t.Fatal(err)
	}
	if status, out, errs := runCmd("fmt", "-w", file); status != exitOK || out != "" || errs != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errs)
	}
	got, _ := os.ReadFile(file)
	_, want, _ := runCmd("fmt", "testdata/check/messy.tl")
	if string(got) != want {
		t.Errorf("rewritten file:\n%s\nwant\n%s", got, want)
	}
	if info, _ := os.Stat(file); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestFlagsAfterFiles: check and fmt take their flags after the files
// too, as compile does; a flag there is no file name to open.
func TestFlagsAfterFiles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "k.tl")
	if err := os.WriteFile(file, readFile(t, "testdata/check/messy.tl"), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, out, errs := runCmd("fmt", file, "-w"); status != exitOK || out != "" || errs != "" {
		t.Fatalf("fmt FILE -w: status %d, stdout %q, stderr %q; want the file rewritten, silently", status, out, errs)
	}
	if _, want, _ := runCmd("fmt", "testdata/check/messy.tl"); string(readFile(t, file)) != want {
		t.Errorf("fmt FILE -w did not rewrite the file:\n%s", readFile(t, file))
	}
	status, out, errs := runCmd("check", "testdata/check/ok.tl", "--json")
	if status != exitOK || !strings.Contains(out, `"errors": []`) || errs != "" {
		t.Errorf("check FILE --json: status %d, stdout %q, stderr %q; want 0 and the JSON", status, out, errs)
	}
}

func TestFmtKeepsComments(t *testing.T) {
	status, out, errs := runCmd("fmt", "testdata/check/commented.tl")
	if status != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", status, errs)
	}
	checkGolden(t, "fmt-commented.stdout", []byte(out))
}

// TestDialects: check, fmt and compile read the released dialect (detected,
// or forced with --dialect), fmt converts to either written dialect, and
// errors point into the file as written.
func TestDialects(t *testing.T) {
	if status, out, errs := runCmd("check", "testdata/dialects/released.tl"); status != exitOK || out != "" || errs != "" {
		t.Errorf("check: status %d, stdout %q, stderr %q; want 0 and silence", status, out, errs)
	}
	status, out, errs := runCmd("fmt", "testdata/dialects/released.tl")
	if status != exitOK || errs != "" {
		t.Fatalf("fmt: status %d, stderr %q", status, errs)
	}
	checkGolden(t, "fmt-from-released.stdout", []byte(out))
	status, out, errs = runCmd("fmt", "--to", "released", "testdata/dialects/released.tl")
	if status != exitOK || errs != "" {
		t.Fatalf("fmt --to released: status %d, stderr %q", status, errs)
	}
	checkGolden(t, "fmt-to-released.stdout", []byte(out))
	if status, _, errs := runCmd("compile", "--dialect", "released", "testdata/dialects/released.tl"); status != exitOK {
		t.Errorf("compile --dialect released: status %d, stderr %q", status, errs)
	}
	status, _, errs = runCmd("check", "--dialect", "current", "testdata/dialects/released.tl")
	if status != exitUsage || !strings.Contains(errs, "--dialect released") {
		t.Errorf("check --dialect current of a released file: status %d, stderr %q; want 2 and a hint", status, errs)
	}
	status, _, errs = runCmd("check", "testdata/dialects/released_bad.tl")
	if status != exitUsage {
		t.Errorf("errors: status %d, want 2", status)
	}
	checkGolden(t, "check-released.stderr", []byte(errs))
	status, out, errs = runCmd("fmt", "--from", "legacy", "testdata/dialects/legacy.tl")
	if status != exitOK || errs != "" {
		t.Fatalf("fmt --from legacy: status %d, stderr %q", status, errs)
	}
	checkGolden(t, "fmt-from-legacy.stdout", []byte(out))
	if status, out, errs := runCmd("check", "testdata/dialects/legacy.tl"); status != exitOK || out != "" || errs != "" {
		t.Errorf("check of a legacy file: status %d, stdout %q, stderr %q; want 0 and silence", status, out, errs)
	}
	if status, _, errs := runCmd("fmt", "--to", "legacy", "testdata/dialects/released.tl"); status != exitUsage || strings.Count(errs, "\n") != 1 {
		t.Errorf("fmt --to legacy: status %d, stderr %q; want 2 and one line", status, errs)
	}
	if status, _, errs := runCmd("check", "--dialect", "klingon", "testdata/dialects/released.tl"); status != exitUsage || strings.Count(errs, "\n") != 1 {
		t.Errorf("--dialect klingon: status %d, stderr %q; want 2 and one line", status, errs)
	}
}
