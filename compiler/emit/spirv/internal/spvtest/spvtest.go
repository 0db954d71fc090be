// Package spvtest runs SPIRV-Tools (spirv-val, spirv-as) for the SPIR-V
// back end's tests. Without them a test is skipped on a developer machine
// and fails in CI (CI set), where `make setup` installs spirv-tools.
package spvtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Validate fails t when spirv-val rejects module in target environment env
// (e.g. "opencl1.2", "opencl2.2").
func Validate(t testing.TB, module []byte, env string) {
	t.Helper()
	tool := lookPath(t, "spirv-val")
	path := filepath.Join(t.TempDir(), "module.spv")
	if err := os.WriteFile(path, module, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "--target-env", env, path).CombinedOutput()
	if err != nil {
		t.Errorf("spirv-val --target-env %s: %v\n%s", env, err, out)
	}
}

// Assemble runs spirv-as on text in environment env and returns the
// binary (with the same rules for a missing tool as Validate).
func Assemble(t testing.TB, text, env string) []byte {
	t.Helper()
	tool := lookPath(t, "spirv-as")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "module.spvasm"), filepath.Join(dir, "module.spv")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(tool, "--preserve-numeric-ids", "--target-env", env, in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("spirv-as: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Available reports whether the SPIRV-Tools program name is installed.
func Available(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// lookPath finds a SPIRV-Tools program: skipped without it on a developer
// machine, fatal in CI.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s not installed (apt-get install spirv-tools)", name)
		}
		t.Fatalf("CI is set but %s is missing: make setup installs spirv-tools", name)
	}
	return path
}

// Link runs spirv-link on modules, leaving imports no module exports
// unresolved (the consumer's built-ins), and returns the linked module
// (with the same rules for a missing tool as Validate).
func Link(t testing.TB, modules ...[]byte) []byte {
	t.Helper()
	tool := lookPath(t, "spirv-link")
	dir := t.TempDir()
	linked := filepath.Join(dir, "linked.spv")
	args := []string{"--allow-partial-linkage", "-o", linked}
	for i, m := range modules {
		path := filepath.Join(dir, fmt.Sprintf("m%d.spv", i))
		if err := os.WriteFile(path, m, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	if msg, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("spirv-link: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(linked)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
