package speak

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// The table writer caches the display widths of the strings it measures
// in a map made at init for 8192 entries: 640 KiB of pointers that live as
// long as the process and that the garbage collector marks in every
// cycle, in every binary linking this package, the compiler's included
// (a compile allocates enough for a cycle every few dozen compiles; with
// the map the collector took 13 % of a GEMM compile's CPU time, without
// it 8 %). The tables written here are a few dozen short cells, which
// measuring again costs nothing: the cache is off.
func init() { twwidth.SetCacheCapacity(0) }

// A Table is the plain-text table of every report: a header row as written
// (never upper-cased: "GFLOP/s" stays so), then the rows, numeric columns
// right-aligned.
type Table struct {
	Header []string
	Right  []bool // per column: right-aligned (numbers); missing entries are left-aligned
	Rows   [][]string
}

// Append adds a row.
func (t *Table) Append(row ...string) { t.Rows = append(t.Rows, row) }

// Write renders the table.
func (t *Table) Write(w io.Writer) error {
	align := make([]tw.Align, len(t.Header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i < len(t.Right) && t.Right[i] {
			align[i] = tw.AlignRight
		}
	}
	tab := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}))
	tab.Header(t.Header)
	for _, r := range t.Rows {
		if err := tab.Append(r); err != nil {
			return err
		}
	}
	return tab.Render()
}

// Columns marks the right-aligned columns of a header: Columns("rrl")
// is right, right, left.
func Columns(spec string) []bool {
	right := make([]bool, len(spec))
	for i, c := range spec {
		right[i] = c == 'r'
	}
	return right
}
