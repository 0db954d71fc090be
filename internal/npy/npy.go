// Package npy reads and writes NumPy .npy files (format versions 1.0, 2.0 and
// 3.0 on read; 1.0, or 2.0 when the header needs it, on write) for the
// little-endian element types the tensor language can hold: bool, i8..i64,
// f16, f32, f64, c64 (two f32) and c128 (two f64), in C or Fortran order.
//
// Element bytes are kept as stored; callers convert them with the element
// type's own encoding (compiler/numeric for f16).
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// DType is an element type of a .npy file.
type DType int

// The supported element types.
const (
	Bool DType = iota
	Int8
	Int16
	Int32
	Int64
	Float16
	Float32
	Float64
	Complex64
	Complex128
)

var dtypeInfo = [...]struct {
	descr string // what Write stores; Read also accepts the '=' and, for bytes, '<' spellings
	size  int
}{
	Bool: {"|b1", 1}, Int8: {"|i1", 1}, Int16: {"<i2", 2}, Int32: {"<i4", 4}, Int64: {"<i8", 8},
	Float16: {"<f2", 2}, Float32: {"<f4", 4}, Float64: {"<f8", 8},
	Complex64: {"<c8", 8}, Complex128: {"<c16", 16},
}

// Size is the element size in bytes.
func (d DType) Size() int { return dtypeInfo[d].size }

// String is the NumPy type descriptor, e.g. "<f4".
func (d DType) String() string { return dtypeInfo[d].descr }

// Array is an n-dimensional array as stored in a .npy file.
type Array struct {
	DType   DType
	Shape   []int
	Fortran bool   // column-major (first index fastest) instead of row-major
	Data    []byte // little-endian elements in storage order
}

// Len is the number of elements.
func (a *Array) Len() int { return product(a.Shape) }

// Offset returns the position in storage order (in elements, not bytes) of the
// element with the multi-index idx.
func (a *Array) Offset(idx []int) int {
	off, stride := 0, 1
	for k := range idx {
		m := k
		if !a.Fortran {
			m = len(idx) - 1 - k
		}
		off += idx[m] * stride
		stride *= a.Shape[m]
	}
	return off
}

func product(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

var magic = []byte("\x93NUMPY")

// ReadFile reads the .npy file at path.
func ReadFile(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Read reads one array in .npy format from r.
func Read(r io.Reader) (*Array, error) {
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil || !bytes.Equal(pre[:6], magic) {
		return nil, errors.New("not a .npy file (missing \\x93NUMPY magic)")
	}
	var n int
	switch major := pre[6]; major {
	case 1:
		var l uint16
		if err := binary.Read(r, binary.LittleEndian, &l); err != nil {
			return nil, fmt.Errorf("truncated .npy header: %w", err)
		}
		n = int(l)
	case 2, 3:
		var l uint32
		if err := binary.Read(r, binary.LittleEndian, &l); err != nil {
			return nil, fmt.Errorf("truncated .npy header: %w", err)
		}
		n = int(l)
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d.%d", major, pre[7])
	}
	if n > 1<<24 {
		return nil, fmt.Errorf(".npy header of %d bytes is implausibly large", n)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated .npy header: %w", err)
	}
	a, err := parseHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	a.Data = make([]byte, a.Len()*a.DType.Size())
	if _, err := io.ReadFull(r, a.Data); err != nil {
		return nil, fmt.Errorf("data shorter than shape %v of %s needs (%d bytes)", a.Shape, a.DType, len(a.Data))
	}
	return a, nil
}

// WriteFile writes a to path in .npy format.
func WriteFile(path string, a *Array) error {
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Write writes a in .npy format (version 1.0 unless the header is too long).
func Write(w io.Writer, a *Array) error {
	if want := a.Len() * a.DType.Size(); len(a.Data) != want {
		return fmt.Errorf("npy: %d data bytes for shape %v of %s, want %d", len(a.Data), a.Shape, a.DType, want)
	}
	dims := make([]string, len(a.Shape))
	for i, s := range a.Shape {
		dims[i] = strconv.Itoa(s)
	}
	shape := strings.Join(dims, ", ")
	if len(a.Shape) == 1 {
		shape += ","
	}
	order := "False"
	if a.Fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", a.DType, order, shape)
	version, lenBytes := byte(1), 2
	if len(dict)+1+len(magic)+2+2 > 0xffff {
		version, lenBytes = 2, 4
	}
	// The header, magic included, is padded with spaces to a multiple of 64
	// bytes and ends in a newline, so the data that follows is aligned.
	pre := len(magic) + 2 + lenBytes
	pad := (64 - (pre+len(dict)+1)%64) % 64
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	var out bytes.Buffer
	out.Write(magic)
	out.Write([]byte{version, 0})
	if version == 1 {
		binary.Write(&out, binary.LittleEndian, uint16(len(hdr)))
	} else {
		binary.Write(&out, binary.LittleEndian, uint32(len(hdr)))
	}
	out.WriteString(hdr)
	out.Write(a.Data)
	_, err := w.Write(out.Bytes())
	return err
}
