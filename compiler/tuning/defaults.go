package tuning

import (
	"io/fs"
	"slices"
	"sync"

	"tltune/configs"
)

// defaultsGlob selects the shipped tables inside configs.FS.
const defaultsGlob = "tuning/*.json"

// Defaults returns the tables shipped in configs/tuning, merged in file-name
// order. With no shipped table it is empty, and every lookup falls through to
// the compiler's heuristic. The caller owns the table it gets.
func Defaults() (*Table, error) {
	t, err := shipped()
	if err != nil {
		return nil, err
	}
	return &Table{Entries: slices.Clone(t.Entries)}, nil
}

// SharedDefaults returns the tables of Defaults without copying them:
// one table shared by every caller, which must not modify it. The compiler
// only looks entries up, once per compile, where the copy cost a tenth of
// the compile's allocations.
func SharedDefaults() (*Table, error) { return shipped() }

// shipped parses the embedded tables once: every compilation without a
// table of its own reads them, and parsing them took about half the time
// of compiling a GEMM kernel.
var shipped = sync.OnceValues(func() (*Table, error) { return loadFS(configs.FS, defaultsGlob) })

func loadFS(fsys fs.FS, glob string) (*Table, error) {
	names, err := fs.Glob(fsys, glob) // sorted
	if err != nil {
		return nil, err
	}
	tables := make([]*Table, 0, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		t, err := Parse("configs/"+name, data)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return Merge(tables...), nil
}

// Load returns the shipped defaults overridden by the tables in paths, in
// order: a later file wins for the same key.
func Load(paths ...string) (*Table, error) {
	def, err := Defaults()
	if err != nil {
		return nil, err
	}
	tables := []*Table{def}
	for _, p := range paths {
		t, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return Merge(tables...), nil
}
