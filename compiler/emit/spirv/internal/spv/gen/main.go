// Command gen writes package spv's tables (tables.go) from the Khronos SPIR-V
// grammar JSON. Run it with `go generate ./compiler/emit/spirv/...`; the
// grammar comes from Debian's spirv-headers unless -dir says otherwise.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"tltune/compiler/emit/spirv/internal/spv/grammar"
)

func main() {
	dir := flag.String("dir", "/usr/include/spirv/unified1", "folder holding the SPIR-V grammar JSON files")
	out := flag.String("o", "tables.go", "output file")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	core, err := os.ReadFile(filepath.Join(dir, "spirv.core.grammar.json"))
	if err != nil {
		return fmt.Errorf("%w (install spirv-headers or pass -dir)", err)
	}
	ocl, err := os.ReadFile(filepath.Join(dir, "extinst.opencl.std.100.grammar.json"))
	if err != nil {
		return fmt.Errorf("%w (install spirv-headers or pass -dir)", err)
	}
	src, err := grammar.Generate(core, ocl)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
