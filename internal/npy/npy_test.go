package npy

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// numpyHeader is what numpy.save writes for a float32 2×3 C-order array: the
// dict padded with spaces so that magic+header is 64 bytes, then a newline.
const numpyHeader = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"

func TestWriteMatchesNumPy(t *testing.T) {
	a := &Array{DType: Float32, Shape: []int{2, 3}, Data: make([]byte, 24)}
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	want := numpyHeader + strings.Repeat(" ", 128-len(numpyHeader)-1) + "\n"
	if got := out[:128]; got != want {
		t.Fatalf("header\n%q\nwant\n%q", got, want)
	}
	if len(out) != 128+24 {
		t.Fatalf("file is %d bytes, want %d", len(out), 128+24)
	}
}

func TestRoundTripEveryDType(t *testing.T) {
	for d := Bool; d <= Complex128; d++ {
		for _, fortran := range []bool{false, true} {
			for _, shape := range [][]int{{}, {5}, {2, 3}, {2, 1, 4}, {0, 3}} {
				a := &Array{DType: d, Shape: shape, Fortran: fortran}
				a.Data = make([]byte, a.Len()*d.Size())
				for i := range a.Data {
					a.Data[i] = byte(i*7 + 1)
				}
				var buf bytes.Buffer
				if err := Write(&buf, a); err != nil {
					t.Fatal(err)
				}
				if buf.Len()%64 != len(a.Data)%64 {
					t.Errorf("%s %v: data not 64-byte aligned", d, shape)
				}
				b, err := Read(&buf)
				if err != nil {
					t.Fatalf("%s %v fortran=%v: %v", d, shape, fortran, err)
				}
				if b.DType != d || b.Fortran != fortran || !equalInts(b.Shape, shape) || !bytes.Equal(b.Data, a.Data) {
					t.Errorf("%s %v fortran=%v: read back %s %v fortran=%v", d, shape, fortran, b.DType, b.Shape, b.Fortran)
				}
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A version 2.0 header (4-byte length), double quotes, no trailing comma and
// the one-byte '<i1' spelling must all be accepted.
func TestReadVersion2(t *testing.T) {
	dict := `{"descr": "<i1", "shape": (3,), "fortran_order": True}`
	var buf bytes.Buffer
	buf.Write(magic)
	buf.Write([]byte{2, 0})
	binary.Write(&buf, binary.LittleEndian, uint32(len(dict)+1))
	buf.WriteString(dict + "\n")
	buf.Write([]byte{1, 0xff, 3})
	a, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != Int8 || !a.Fortran || !equalInts(a.Shape, []int{3}) || a.Data[1] != 0xff {
		t.Fatalf("got %+v", a)
	}
}

func TestOffset(t *testing.T) {
	c := &Array{Shape: []int{2, 3, 4}}
	f := &Array{Shape: []int{2, 3, 4}, Fortran: true}
	if got := c.Offset([]int{1, 2, 3}); got != 1*12+2*4+3 {
		t.Errorf("C offset %d", got)
	}
	if got := f.Offset([]int{1, 2, 3}); got != 1+2*2+3*6 {
		t.Errorf("Fortran offset %d", got)
	}
}

func TestReadErrors(t *testing.T) {
	hdr := func(dict string) string {
		return string(magic) + "\x01\x00" + string([]byte{byte(len(dict)), 0}) + dict
	}
	for _, c := range []struct{ in, want string }{
		{"hello", "not a .npy file"},
		{string(magic) + "\x04\x00", "unsupported .npy format version 4.0"},
		{hdr("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"), "big-endian"},
		{hdr("{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }"), "not supported"},
		{hdr("{'descr': '<f4', 'shape': (2,), }"), "fortran_order"},
		{hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,x), }"), "bad .npy header"},
		{hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") + "\x00\x00", "data shorter"},
		{string(magic) + "\x01\x00\x50\x00{'descr'", "truncated"},
	} {
		_, err := Read(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%q) = %v, want error containing %q", c.in, err, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(numpyHeader + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Read(bytes.NewReader(b)) // must not panic
	})
}
