// Package spvtest runs spirv-val on modules the SPIR-V back end's tests
// emit. Without spirv-val a test is skipped on a developer machine and fails
// in CI (CI set), where `make setup` installs spirv-tools.
package spvtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Validate fails t when spirv-val rejects module in target environment env
// (e.g. "opencl1.2", "opencl2.2").
func Validate(t testing.TB, module []byte, env string) {
	t.Helper()
	tool, err := exec.LookPath("spirv-val")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("spirv-val not installed (apt-get install spirv-tools)")
		}
		t.Fatal("CI is set but spirv-val is missing: make setup installs spirv-tools")
	}
	path := filepath.Join(t.TempDir(), "module.spv")
	if err := os.WriteFile(path, module, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "--target-env", env, path).CombinedOutput()
	if err != nil {
		t.Errorf("spirv-val --target-env %s: %v\n%s", env, err, out)
	}
}
