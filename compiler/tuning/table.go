package tuning

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"tltune/internal/speak"
)

// Format and Version identify a tuning table file. A reader refuses any other
// format, and versions it does not know: guessing at a table written by a
// newer tltune could silently feed the compiler wrong configurations.
//
// Version 2 keys entries by the whole Problem; version 1 files (no alpha,
// beta, atomic or layout) are still read, their entries' scalars and layout
// unknown, so they serve lookups only as nearest matches. An entry's
// "precision" ("tf32") is written only where it is not exact, so a table
// of exact entries reads in every version 2 reader, and one that predates
// the field refuses a tf32 entry (an unknown field) rather than serving it
// to an exact compile.
const (
	Format  = "tltune-tuning-table"
	Version = 2
)

// legacyVersion is the oldest version Parse reads.
const legacyVersion = 1

// A Key is what the compiler knows when it lowers a collective: the device it
// compiles for and the problem.
type Key struct {
	Device string
	speak.Problem
}

// String is the key as messages print it, e.g. "gemm.nn f16/f32 64x64x32 on
// NVIDIA H200"; a key without a device (compiling for no device) says so.
func (k Key) String() string {
	if k.Device == "" {
		return k.Problem.String() + " for no device"
	}
	return k.Problem.String() + " on " + k.Device
}

// family is the part of a key that must agree for a nearest-shape match:
// a configuration tuned with tf32 products never serves an exact compile,
// nor the other way round.
type family struct{ device, op, trans, dtype, precision string }

func (k Key) family() family { return family{k.Device, k.Op, k.Trans, k.Dtype, k.Precision} }

// An Entry is one tuned problem: its key, the configuration that won, where
// it was measured (driver, runtime, results run) and how fast it was.
type Entry struct {
	Device  string `json:"device"`
	Driver  string `json:"driver"`
	Runtime string `json:"runtime"`
	speak.Problem
	Params   Params  `json:"params"`
	MedianNS float64 `json:"median_ns"`
	GFLOPS   float64 `json:"gflops"`
	GBS      float64 `json:"gbs"`
	Run      int64   `json:"run"` // results run that measured it; 0 when unknown

	// Origin names the file the entry was read from, for explanations. It
	// is not part of the format.
	Origin string `json:"-"`
	// legacy marks an entry of a version 1 file, whose scalars and layout
	// are unknown.
	legacy bool
}

// Key returns the lookup key the entry answers.
func (e *Entry) Key() Key { return Key{e.Device, e.Problem} }

// A Table is a set of entries with at most one entry per key.
type Table struct {
	Entries []Entry
}

// file is the on-disk form. Entries stay raw until format and version are
// known, so that a table from a newer tltune is reported as such rather than
// as a pile of unknown fields.
type file struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Entries json.RawMessage `json:"entries"`
}

// ReadFile reads and validates the table in the named file.
func ReadFile(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes and validates a table; name is used in error messages and as
// the entries' Origin.
func Parse(name string, data []byte) (*Table, error) {
	var f file
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a tuning table: %v", name, err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("%s: format is %q, want %q (is this a tuning table?)", name, f.Format, Format)
	}
	if f.Version < legacyVersion || f.Version > Version {
		return nil, fmt.Errorf("%s: tuning table version %d is not supported (this tltune reads versions %d to %d); regenerate it with 'tltune table'", name, f.Version, legacyVersion, Version)
	}
	t := &Table{}
	if len(f.Entries) > 0 {
		if err := decodeStrict(f.Entries, &t.Entries); err != nil {
			return nil, fmt.Errorf("%s: entries: %v", name, err)
		}
	}
	for i := range t.Entries {
		t.Entries[i].Origin = name
		t.Entries[i].legacy = f.Version == legacyVersion
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return t, nil
}

// decodeStrict decodes one JSON value and rejects unknown fields and trailing
// data: a misspelt field must not be silently dropped.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the table")
	}
	return nil
}

// Validate checks every entry and that no key appears twice; errors name the
// entry by its index in the file.
func (t *Table) Validate() error {
	seen := make(map[Key]int, len(t.Entries))
	for i := range t.Entries {
		e := &t.Entries[i]
		if err := e.validate(); err != nil {
			return fmt.Errorf("entry %d: %v", i, err)
		}
		if j, dup := seen[e.Key()]; dup {
			return fmt.Errorf("entry %d: same key as entry %d (%s)", i, j, e.Key())
		}
		seen[e.Key()] = i
	}
	return nil
}

var (
	ops     = []string{"gemm", "gemv", "ger"}
	dtypes  = []string{"f16", "bf16", "f32", "f64", "c32", "c64"}
	layouts = []string{"strided", "group"}
)

func contains(list []string, s string) bool { return slices.Contains(list, s) }

func (e *Entry) validate() error {
	if strings.TrimSpace(e.Device) == "" {
		return errors.New("device is empty")
	}
	if err := validateProblem(e.Problem, e.legacy); err != nil {
		return err
	}
	if e.MedianNS < 0 || e.GFLOPS < 0 || e.GBS < 0 || e.Run < 0 {
		return errors.New("median_ns, gflops, gbs and run must not be negative")
	}
	if err := e.Params.Validate(); err != nil {
		return fmt.Errorf("params: %v", err)
	}
	return nil
}

// Devices are the devices the table has entries for, sorted.
func (t *Table) Devices() []string {
	var names []string
	for _, e := range t.Entries {
		if !slices.Contains(names, e.Device) {
			names = append(names, e.Device)
		}
	}
	slices.Sort(names)
	return names
}

// Sort orders the entries by key so that written tables are stable and diff
// well.
func (t *Table) Sort() {
	slices.SortFunc(t.Entries, func(a, b Entry) int { return compareKeys(a.Key(), b.Key()) })
}

func compareKeys(a, b Key) int {
	return cmp.Or(strings.Compare(a.Device, b.Device), a.Problem.Compare(b.Problem))
}

// Encode writes the table as JSON, entries sorted by key and one entry per
// line: a re-tuned shape is a one-line diff. The table itself is not
// modified.
func (t *Table) Encode(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	for i := range t.Entries {
		if e := &t.Entries[i]; e.legacy {
			return fmt.Errorf("entry %s from %s: a version 1 entry has no alpha, beta, atomic or layout and cannot be written as version %d; export the table again with 'tltune table'", e.Key(), e.Origin, Version)
		}
	}
	sorted := Table{Entries: slices.Clone(t.Entries)}
	sorted.Sort()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n  \"format\": %q,\n  \"version\": %d,\n  \"entries\": [", Format, Version)
	for i, e := range sorted.Entries {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		buf.Write(line)
	}
	if len(sorted.Entries) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// Merge returns a table holding the entries of all tables; where several
// hold the same key, the later table wins, so a user's table passed after the
// shipped defaults overrides them.
func Merge(tables ...*Table) *Table {
	index := map[Key]int{}
	merged := &Table{}
	for _, t := range tables {
		if t == nil {
			continue
		}
		for _, e := range t.Entries {
			if i, ok := index[e.Key()]; ok {
				merged.Entries[i] = e
				continue
			}
			index[e.Key()] = len(merged.Entries)
			merged.Entries = append(merged.Entries, e)
		}
	}
	merged.Sort()
	return merged
}
