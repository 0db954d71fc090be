package speak

import (
	"math"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		ns   float64
		want string
	}{
		{0, "0.000 ns"},
		{850, "850.0 ns"},
		{999.96, "1.000 µs"}, // rounds into the next unit, never "1000 ns"
		{4100, "4.100 µs"},
		{52012.5, "52.01 µs"},
		{1.5e6, "1.500 ms"},
		{2.25e9, "2.250 s"},
		{59.9996e9, "1 min 00 s"},
		{83.4e9, "1 min 23 s"},
		{3725e9, "1 h 02 min"},
		{-1, "-"},
		{math.NaN(), "-"},
	} {
		if got := Duration(tt.ns); got != tt.want {
			t.Errorf("Duration(%g) = %q, want %q", tt.ns, got, tt.want)
		}
	}
	if got := Elapsed(1500 * time.Millisecond); got != "1.500 s" {
		t.Errorf("Elapsed(1.5s) = %q", got)
	}
}

func TestRate(t *testing.T) {
	for _, tt := range []struct {
		giga float64
		unit string
		want string
	}{
		{95.6, "FLOP/s", "95.6 GFLOP/s"},
		{3350, "B/s", "3.35 TB/s"},
		{0.27, "B/s", "270 MB/s"},
		{646000, "FLOP/s", "646 TFLOP/s"},
	} {
		if got := Rate(tt.giga, tt.unit); got != tt.want {
			t.Errorf("Rate(%g, %q) = %q, want %q", tt.giga, tt.unit, got, tt.want)
		}
	}
}

func TestBytesAndCounts(t *testing.T) {
	if got := Bytes(48 << 10); got != "48 KiB" {
		t.Errorf("Bytes(48 KiB) = %q", got)
	}
	if got := Bytes(3 << 19); got != "1.5 MiB" {
		t.Errorf("Bytes(1.5 MiB) = %q", got)
	}
	if got := Counts(map[string]int{"b": 1, "a": 2, "ok": 3, "z": 0}, []string{"ok"}); got != "ok 3, a 2, b 1" {
		t.Errorf("Counts = %q", got)
	}
	if got := Counts(nil, nil); got != "none" {
		t.Errorf("Counts(nil) = %q", got)
	}
}
