package tuning

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"tltune/internal/golden"
	"tltune/internal/speak"
)

// gemmProblem is an f16 GEMM accumulating in f32 with the default scalars
// and layout.
func gemmProblem(dtype, acc string, m, n, k int) speak.Problem {
	return speak.Problem{Op: "gemm", Trans: "nn", Dtype: dtype, Acc: acc, M: m, N: n, K: k,
		Alpha: "1", Beta: "0", Layout: "strided"}
}

func h200Key(m, n, k int) Key { return Key{"NVIDIA H200", gemmProblem("f16", "f32", m, n, k)} }

func gemmEntry(device string, m, n, k int, sg int) Entry {
	return Entry{
		Device: device, Driver: "580.159.04", Runtime: "opencl",
		Problem: gemmProblem("f16", "f32", m, n, k),
		Params: Params{SubgroupSize: sg, WorkGroupSize: [2]int{2 * sg, 2}, Tile: [2]int{32, 32},
			Coopmatrix: [3]int{16, 8, 16}, Unroll: 2, BatchPerGroup: 1},
		MedianNS: 1000, GFLOPS: 10, GBS: 20, Run: 7,
	}
}

func sampleTable() *Table {
	return &Table{Entries: []Entry{
		gemmEntry("NVIDIA H200", 256, 256, 256, 32),
		gemmEntry("NVIDIA H200", 64, 64, 32, 32),
		gemmEntry("Intel Data Center GPU Max 1550", 64, 64, 32, 16),
		gemmEntry("NVIDIA H200", 16, 16, 16, 32),
	}}
}

// TestRoundTrip writes a table, compares it with the golden file (sorted,
// indented, stable), reads it back and looks up an exact and a nearest shape.
func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleTable().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join(t.TempDir(), "tuning.json")
	if err := os.WriteFile(path, got, 0o644); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/table.golden.json", got)

	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Entries) != 4 || back.Entries[0].Origin != path {
		t.Fatalf("read back %d entries, origin %q", len(back.Entries), back.Entries[0].Origin)
	}
	exact := back.Lookup(h200Key(64, 64, 32))
	if exact.How != Exact || exact.Entry.M != 64 {
		t.Errorf("exact lookup: %v", exact)
	}
	near := back.Lookup(h200Key(48, 64, 40))
	if near.How != Nearest || near.Entry.M != 64 || near.Entry.K != 32 {
		t.Errorf("nearest lookup: %v", near)
	}
	var again bytes.Buffer
	if err := back.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), got) {
		t.Error("re-encoding a read table changed it")
	}
}

func TestLookup(t *testing.T) {
	tab := sampleTable()
	tab.Entries = append(tab.Entries, func() Entry {
		e := gemmEntry("NVIDIA H200", 128, 128, 128, 32)
		e.Acc = "f16"
		return e
	}())
	h200 := h200Key
	tests := []struct {
		name    string
		key     Key
		how     How
		m, n, k int
		explain string
	}{
		{"exact", h200(256, 256, 256), Exact, 256, 256, 256, "exact match for gemm.nn f16/f32 256x256x256 on NVIDIA H200"},
		// 128^3 with acc f32 is not tuned; the f16-accumulating 128^3 entry
		// is closer but another acc loses to 256^3 with the same acc.
		{"same acc preferred", h200(128, 128, 128), Nearest, 256, 256, 256, "nearest tuned shape 256x256x256"},
		{"other acc when alone", Key{"NVIDIA H200", gemmProblem("f16", "f64", 100, 100, 100)}, Nearest, 128, 128, 128, `tuned with acc "f16"`},
		// 32x32x32 is one doubling from 16^3 in each dim (distance sqrt 3)
		// and from 64x64x32 in two dims (sqrt 2).
		{"log distance", h200(32, 32, 32), Nearest, 64, 64, 32, "log2 distance 1.41"},
		// 32x32x16 is (1,1,0) doublings from 16^3 and (1,1,1) from 64x64x32.
		{"closest in log space", h200(32, 32, 16), Nearest, 16, 16, 16, "log2 distance 1.41"},
		{"other device", Key{"AMD MI300", gemmProblem("f16", "f32", 64, 64, 32)}, NoMatch, 0, 0, 0, "using the heuristic"},
		{"other dtype", Key{"NVIDIA H200", gemmProblem("f32", "f32", 64, 64, 32)}, NoMatch, 0, 0, 0, "no entry for gemm.nn f32 64x64x32 on NVIDIA H200, nor for its device, op, transposes, dtype and precision among 5 entries"},
		{"other trans", func() Key { k := h200Key(64, 64, 32); k.Trans = "tn"; return k }(), NoMatch, 0, 0, 0, "heuristic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tab.Lookup(tc.key)
			if got.How != tc.how {
				t.Fatalf("How = %v, want %v (%v)", got.How, tc.how, got)
			}
			if _, ok := got.Params(); ok != (tc.how != NoMatch) {
				t.Errorf("Params ok = %v", ok)
			}
			if e := got.Entry; tc.how != NoMatch && (e.M != tc.m || e.N != tc.n || e.K != tc.k) {
				t.Errorf("matched %dx%dx%d, want %dx%dx%d", e.M, e.N, e.K, tc.m, tc.n, tc.k)
			}
			if !strings.Contains(got.String(), tc.explain) {
				t.Errorf("explanation %q lacks %q", got.String(), tc.explain)
			}
		})
	}
}

// TestLookupTie: 32^3 lies one doubling from both 16^3 and 64^3 in every
// dimension; the smaller shape wins whatever the entry order.
func TestLookupTie(t *testing.T) {
	small, large := gemmEntry("D", 16, 16, 16, 16), gemmEntry("D", 64, 64, 64, 16)
	k := Key{"D", gemmProblem("f16", "f32", 32, 32, 32)}
	for _, tab := range []*Table{{Entries: []Entry{small, large}}, {Entries: []Entry{large, small}}} {
		if got := tab.Lookup(k); got.Entry.M != 16 {
			t.Errorf("tie chose %v", got)
		}
	}
}

func TestLookupIgnoresEntryOrder(t *testing.T) {
	a, b := sampleTable(), sampleTable()
	for i, j := 0, len(b.Entries)-1; i < j; i, j = i+1, j-1 {
		b.Entries[i], b.Entries[j] = b.Entries[j], b.Entries[i]
	}
	k := h200Key(32, 16, 16)
	if ma, mb := a.Lookup(k), b.Lookup(k); ma.Entry.Key() != mb.Entry.Key() {
		t.Errorf("order changed the answer: %v vs %v", ma, mb)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"not json", `hello`, "t.json: not a tuning table"},
		{"wrong format", `{"format":"other","version":1,"entries":[]}`, `t.json: format is "other"`},
		{"newer version", `{"format":"tltune-tuning-table","version":3,"entries":[{"future":1}]}`, "t.json: tuning table version 3 is not supported"},
		{"unknown field", `{"format":"tltune-tuning-table","version":1,"entries":[{"devise":"x"}]}`, `unknown field "devise"`},
		{"unknown top field", `{"format":"tltune-tuning-table","version":1,"extra":0}`, `unknown field "extra"`},
		{"trailing", `{"format":"tltune-tuning-table","version":1} {}`, "trailing data"},
		{"bad op", entryJSON(`"op":"conv"`), `entry 0: op "conv"`},
		{"bad dtype", entryJSON(`"dtype":"f8"`), `dtype "f8"`},
		{"bad trans", entryJSON(`"trans":"nx"`), `trans "nx"`},
		{"gemm k", entryJSON(`"k":0`), "gemm shape needs k >= 1"},
		{"params", entryJSON(`"params":{"subgroup_size":16,"work_group_size":[24,1]}`), "a multiple of the subgroup size 16"},
		{"no beta", entryJSON(`"beta":""`), `beta "" is not a number`},
		{"bad layout", entryJSON(`"layout":"packed"`), `layout "packed" is not one of strided, group`},
		{"atomic beta", entryJSON(`"beta":"0.5"`, `"atomic":true`), "beta 0.5 with an atomic update"},
		{"bad precision", entryJSON(`"precision":"bf16"`), `precision "bf16": only an f32 gemm into f32 may have one`},
		{"tf32 of f16", entryJSON(`"dtype":"f16"`, `"precision":"tf32"`), `precision "tf32": only an f32 gemm`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.json", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// entryJSON is a one-entry version 2 table with some fields replaced.
func entryJSON(overrides ...string) string {
	names := []string{`"device"`, `"op"`, `"trans"`, `"dtype"`, `"k"`, `"alpha"`, `"beta"`, `"atomic"`, `"layout"`, `"precision"`, `"params"`}
	fields := map[string]string{
		`"device"`: `"device":"D"`, `"op"`: `"op":"gemm"`, `"trans"`: `"trans":"nn"`,
		`"dtype"`: `"dtype":"f32"`, `"k"`: `"k":8`, `"alpha"`: `"alpha":"1"`, `"beta"`: `"beta":"0"`,
		`"atomic"`: `"atomic":false`, `"layout"`: `"layout":"strided"`, `"params"`: `"params":{}`,
	}
	for _, o := range overrides {
		fields[o[:strings.Index(o, ":")]] = o
	}
	parts := []string{`"m":8`, `"n":8`}
	for _, k := range names {
		if fields[k] != "" {
			parts = append(parts, fields[k])
		}
	}
	return `{"format":"tltune-tuning-table","version":2,"entries":[{` + strings.Join(parts, ",") + `}]}`
}

func TestDuplicateKeyRejected(t *testing.T) {
	tab := &Table{Entries: []Entry{gemmEntry("D", 8, 8, 8, 16), gemmEntry("D", 8, 8, 8, 32)}}
	if err := tab.Validate(); err == nil || !strings.Contains(err.Error(), "entry 1: same key as entry 0") {
		t.Errorf("Validate = %v", err)
	}
	if err := tab.Encode(&bytes.Buffer{}); err == nil {
		t.Error("Encode wrote a table with a duplicate key")
	}
}

func TestMergeLaterWins(t *testing.T) {
	old := &Table{Entries: []Entry{gemmEntry("D", 8, 8, 8, 16), gemmEntry("D", 16, 16, 16, 16)}}
	newer := &Table{Entries: []Entry{gemmEntry("D", 8, 8, 8, 32)}}
	m := Merge(old, nil, newer)
	if len(m.Entries) != 2 {
		t.Fatalf("merged %d entries, want 2", len(m.Entries))
	}
	if got := m.Lookup(Key{"D", gemmProblem("f16", "f32", 8, 8, 8)}); got.Entry.Params.SubgroupSize != 32 {
		t.Errorf("later table did not win: %v", got)
	}
}

func TestLoadFS(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleTable().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"tuning/a.json":    {Data: buf.Bytes()},
		"tuning/README.md": {Data: []byte("not a table")},
	}
	tab, err := loadFS(fsys, defaultsGlob)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Entries) != 4 || tab.Entries[0].Origin != "configs/tuning/a.json" {
		t.Errorf("loaded %d entries from %q", len(tab.Entries), tab.Entries[0].Origin)
	}
	fsys["tuning/b.json"] = &fstest.MapFile{Data: []byte(`{"format":"tltune-tuning-table","version":9}`)}
	if _, err := loadFS(fsys, defaultsGlob); err == nil || !strings.Contains(err.Error(), "configs/tuning/b.json") {
		t.Errorf("bad shipped table: error %v does not name the file", err)
	}
}

// TestDefaultsValid keeps the shipped tables readable: a broken file in
// configs/tuning would otherwise only show up when the compiler runs.
func TestDefaultsValid(t *testing.T) {
	if _, err := Defaults(); err != nil {
		t.Fatal(err)
	}
}

// TestLookupBeta: β is part of the key. A β=1 GER never gets the β=0
// entry as an exact match, and a nearest search prefers an entry with the
// same β over a closer shape with another.
func TestLookupBeta(t *testing.T) {
	ger := func(m int, beta string) Entry {
		e := gemmEntry("D", m, m, 1, 16)
		e.Problem = speak.Problem{Op: "ger", Dtype: "f32", Acc: "f32", M: m, N: m, Alpha: "1", Beta: beta, Layout: "strided"}
		e.Params.SubgroupSize = len(beta) * 16 // tells the entries apart
		return e
	}
	tab := &Table{Entries: []Entry{ger(32, "0"), ger(256, "1")}}
	if err := tab.Validate(); err != nil {
		t.Fatal(err)
	}
	asked := Key{"D", ger(32, "1").Problem}
	got := tab.Lookup(asked)
	if got.How != Nearest || got.Entry.M != 256 {
		t.Fatalf("ger 32x32 beta=1 matched %v, want the beta=1 entry as nearest", got)
	}
	if !strings.Contains(got.String(), "no entry for ger f32 32x32 beta=1 on D") {
		t.Errorf("explanation %q", got)
	}
	asked.Beta = "0"
	if got := tab.Lookup(asked); got.How != Exact || got.Entry.M != 32 {
		t.Errorf("ger 32x32 beta=0 matched %v, want the exact entry", got)
	}
	asked.Beta = speak.DynamicScalar
	if got := tab.Lookup(asked); got.How != Nearest || !strings.Contains(got.String(), "beta=?") {
		t.Errorf("dynamic beta: %v", got)
	}
}

// TestLookupPrecision: a tf32 entry serves only tf32 lookups, exact or
// nearest, and an exact entry only exact ones; the table writes precision
// for the tf32 entry alone and reads it back.
func TestLookupPrecision(t *testing.T) {
	f32 := func(m int, precision string) Entry {
		e := gemmEntry("D", m, m, m, 32)
		e.Problem = gemmProblem("f32", "f32", m, m, m)
		e.Precision = precision
		return e
	}
	tab := &Table{Entries: []Entry{f32(64, speak.TF32), f32(256, "")}}
	var buf bytes.Buffer
	if err := tab.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"precision":"tf32"`); n != 1 || strings.Contains(buf.String(), `"precision":""`) {
		t.Errorf("encoded table writes precision %d times:\n%s", n, buf.String())
	}
	back, err := Parse("t.json", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		precision string
		m         int
		how       How
		want      int
	}{
		{speak.TF32, 64, Exact, 64}, {speak.TF32, 128, Nearest, 64},
		{"", 64, Nearest, 256}, {"", 256, Exact, 256},
	} {
		k := Key{"D", gemmProblem("f32", "f32", tc.m, tc.m, tc.m)}
		k.Precision = tc.precision
		if got := back.Lookup(k); got.How != tc.how || got.Entry.M != tc.want {
			t.Errorf("%v: %v, want %v of the %d³ entry", k, got, tc.how, tc.want)
		}
	}
	exactOnly := &Table{Entries: []Entry{f32(256, "")}}
	k := Key{"D", gemmProblem("f32", "f32", 64, 64, 64)}
	k.Precision = speak.TF32
	if got := exactOnly.Lookup(k); got.How != NoMatch || !strings.Contains(got.String(), "dtype and precision") {
		t.Errorf("tf32 lookup among exact entries: %v", got)
	}
}

// TestLegacyTable: a version 1 file still loads; its entries, whose α, β
// and layout are unknown, serve only as nearest matches, say so, and are
// not written back as version 2.
func TestLegacyTable(t *testing.T) {
	v1 := `{"format":"tltune-tuning-table","version":1,"entries":[{"device":"D","driver":"","runtime":"opencl","op":"gemm","trans":"nn","dtype":"f16","acc":"f32","m":64,"n":64,"k":32,"params":{},"median_ns":0,"gflops":0,"gbs":0,"run":0}]}`
	tab, err := Parse("old.json", []byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	got := tab.Lookup(Key{"D", gemmProblem("f16", "f32", 64, 64, 32)})
	if got.How != Nearest || !strings.Contains(got.String(), "unknown alpha, beta and layout (a version 1 table)") {
		t.Errorf("lookup in a version 1 table: %v", got)
	}
	err = tab.Encode(&bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "export the table again with 'tltune table'") {
		t.Errorf("Encode of a version 1 entry: %v", err)
	}
}
