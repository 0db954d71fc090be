// Package diag owns compiler diagnostics: positioned error messages, their
// order, and the user-facing format
//
//	FILE:LINE:COL: error: MESSAGE
//	<the source line>
//	<a caret under the column>
//
// shared by the parser, the verifier and the command line.
package diag

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"tltune/compiler/ir"
)

// Error is one diagnostic.
type Error struct {
	Pos ir.Pos
	Msg string
}

func (e Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// List is a list of diagnostics; the zero value is empty and ready to use.
type List []Error

// Add appends a diagnostic.
func (l *List) Add(pos ir.Pos, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	*l = append(*l, Error{Pos: pos, Msg: msg})
}

// Sort orders the list by position (line, then column), then message, and
// drops exact duplicates.
func (l List) Sort() List {
	slices.SortStableFunc(l, func(a, b Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col), strings.Compare(a.Msg, b.Msg))
	})
	return slices.Compact(l)
}

// Err returns the list as an error, or nil if it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error joins the diagnostics, one per line, without file names.
func (l List) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Print writes every diagnostic of l (in its order) as
// "file:line:col: error: msg", followed by the source line and a caret under
// the column. Tabs in the source line are kept under the caret too, so the
// caret lines up in a terminal.
func Print(w io.Writer, file string, src []byte, l List) error {
	for _, e := range l {
		if _, err := fmt.Fprintf(w, "%s:%d:%d: error: %s\n", file, e.Pos.Line, e.Pos.Col, e.Msg); err != nil {
			return err
		}
		line, ok := sourceLine(src, int(e.Pos.Line))
		if !ok {
			continue
		}
		caret := make([]byte, 0, e.Pos.Col)
		for i := 0; i < int(e.Pos.Col)-1 && i < len(line); i++ {
			if line[i] == '\t' {
				caret = append(caret, '\t')
			} else {
				caret = append(caret, ' ')
			}
		}
		if _, err := fmt.Fprintf(w, "%s\n%s^\n", printable(line), caret); err != nil {
			return err
		}
	}
	return nil
}

// sourceLine returns the 1-based line n of src without its newline.
func sourceLine(src []byte, n int) ([]byte, bool) {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return nil, false
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return bytes.TrimSuffix(src, []byte("\r")), n >= 1
}

// printable replaces control bytes other than tab so that a stray byte in
// the input cannot garble the terminal; the width stays the same.
func printable(line []byte) []byte {
	out := make([]byte, len(line))
	for i, c := range line {
		if c < 0x20 && c != '\t' || c == 0x7f {
			c = '?'
		}
		out[i] = c
	}
	return out
}

// A JSON diagnostic is how --json output gives one (docs/json.md).
type JSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"` // 0 when the error has no position (a file that cannot be read)
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// JSONOf is l as JSON diagnostics of file; never nil.
func JSONOf(file string, l List) []JSON {
	out := make([]JSON, len(l))
	for i, e := range l {
		out[i] = JSON{File: file, Line: int(e.Pos.Line), Column: int(e.Pos.Col), Message: e.Msg}
	}
	return out
}
