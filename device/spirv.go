package device

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The SPIR-V tools, variables so that tests can name ones that do not exist.
var (
	clangTool     = "clang-15"
	llvmSPIRVTool = "llvm-spirv-15"
)

// SPIRVToBitcode converts a SPIR-V module to SPIR 1.2 LLVM bitcode with
// `llvm-spirv-15 -r`, for devices without SPIR-V IL that have cl_khr_spir
// (PoCL 3.1). A missing tool is ErrRuntimeMissing; a module the tool rejects
// is a *BuildError with its message.
func SPIRVToBitcode(spv []byte) ([]byte, error) {
	return runTool(spv, "k.spv", "k.bc", llvmSPIRVTool, "-r", "k.spv", "-o", "k.bc")
}

// CompileOpenCLC compiles OpenCL C source to SPIR-V with clang-15 (to spir64
// LLVM bitcode) and llvm-spirv-15; extra arguments go to clang (e.g. -D, or
// -cl-std=CL2.0). A compile error is a *BuildError with clang's messages.
func CompileOpenCLC(src string, clangArgs ...string) ([]byte, error) {
	args := append([]string{"-c", "-target", "spir64", "-O1", "-emit-llvm", "-cl-std=CL1.2",
		"-Xclang", "-finclude-default-header"}, clangArgs...)
	bc, err := runTool([]byte(src), "k.cl", "k.bc", clangTool, append(args, "-o", "k.bc", "k.cl")...)
	if err != nil {
		return nil, err
	}
	return runTool(bc, "k.bc", "k.spv", llvmSPIRVTool, "k.bc", "-o", "k.spv")
}

// runTool writes input to a scratch directory as in, runs the tool there
// and returns the file out.
func runTool(input []byte, in, out, tool string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(tool)
	if err != nil {
		return nil, fmt.Errorf("%s not found on PATH; install the Debian package %s: %w", tool, tool, ErrRuntimeMissing)
	}
	dir, err := os.MkdirTemp("", "tltune-tool-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, in), input, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, &BuildError{Log: stderr.String(), Err: fmt.Errorf("%s: %w", tool, err)}
		}
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, out))
}
