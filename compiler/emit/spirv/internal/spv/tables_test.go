package spv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"tltune/compiler/emit/spirv/internal/spv/grammar"
)

// grammarDir is where Debian's spirv-headers installs the grammar; `make
// setup` installs it in CI.
const grammarDir = "/usr/include/spirv/unified1"

// TestTablesUpToDate regenerates tables.go in memory and fails when the
// committed file differs: run `go generate ./compiler/emit/spirv/...`.
func TestTablesUpToDate(t *testing.T) {
	core, err1 := os.ReadFile(filepath.Join(grammarDir, "spirv.core.grammar.json"))
	ocl, err2 := os.ReadFile(filepath.Join(grammarDir, "extinst.opencl.std.100.grammar.json"))
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("SPIR-V grammar JSON not installed (apt-get install spirv-headers): %v %v", err1, err2)
		}
		t.Fatalf("CI is set but the SPIR-V grammar JSON is missing (make setup installs spirv-headers): %v %v", err1, err2)
	}
	want, err := grammar.Generate(core, ocl)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("tables.go is stale: run `go generate ./compiler/emit/spirv/...`")
	}
}

func TestTableLookups(t *testing.T) {
	if got := OpFAdd.Info().Name; got != "OpFAdd" {
		t.Errorf("OpFAdd.Info().Name = %q", got)
	}
	e, ok := Enumerant(KindExecutionMode, uint32(ExecutionModeLocalSize))
	if !ok || len(e.Params) != 3 {
		t.Errorf("LocalSize: %+v, %v; want three parameters", e, ok)
	}
	if CLVloadHalf.String() != "vload_half" || CLFma.String() != "fma" {
		t.Errorf("OpenCL.std names: %s %s", CLVloadHalf, CLFma)
	}
	if info := OpSubgroupShuffleINTEL.Info(); len(info.Caps) != 1 || info.Caps[0] != CapabilitySubgroupShuffleINTEL {
		t.Errorf("OpSubgroupShuffleINTEL capabilities: %v", info.Caps)
	}
}
