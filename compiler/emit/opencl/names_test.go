package opencl

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestKernelSymbol(t *testing.T) {
	for name, want := range map[string]string{
		"gemm": "gemm", "fused_kernel": "fused_kernel", "kernel1": "kernel1", "clamped": "clamped",
		"clamp": "tl_kernel_clamp", "min": "tl_kernel_min", "dot": "tl_kernel_dot",
		"kernel": "tl_kernel_kernel", "half": "tl_kernel_half", "main": "tl_kernel_main",
		"float4": "tl_kernel_float4", "get_group_id": "tl_kernel_get_group_id", "NAN": "tl_kernel_NAN",
		"0": "tl_kernel_0", "tl_helper": "tl_kernel_tl_helper", "convert_int": "tl_kernel_convert_int",
	} {
		if got := KernelSymbol(name); got != want {
			t.Errorf("KernelSymbol(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestReservedCoversClangHeader checks the reserved names against clang's
// declarations of the OpenCL C builtins and macros (opencl-c.h and
// opencl-c-base.h, installed with clang-15 by make setup): a builtin missing
// from the list would compile to a kernel that clCreateKernel cannot find.
func TestReservedCoversClangHeader(t *testing.T) {
	headers, _ := filepath.Glob("/usr/lib/llvm-*/lib/clang/*/include/opencl-c*.h")
	if len(headers) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no opencl-c.h; make setup installs clang-15, which has it")
		}
		t.Skip("no clang OpenCL headers on this machine")
	}
	decl := regexp.MustCompile(`__ovld[^;(]*\b([A-Za-z][A-Za-z0-9_]*)\(`)
	macro := regexp.MustCompile(`(?m)^\s*#define\s+([A-Za-z][A-Za-z0-9_]*)`)
	seen := 0
	for _, h := range headers {
		src, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{decl, macro} {
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				seen++
				if name := m[1]; !ReservedInOpenCLC(name) && !strings.HasPrefix(name, "__") {
					t.Errorf("%s declares %s, which ReservedInOpenCLC does not reserve", filepath.Base(h), name)
				}
			}
		}
	}
	if seen < 1000 {
		t.Fatalf("only %d declarations found in %v: the pattern no longer matches the headers", seen, headers)
	}
}
