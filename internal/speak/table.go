package speak

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

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
