// Package speak owns how tltune speaks of results, so that commands cannot
// drift apart: the one spelling of a problem (Problem.String) and its JSON
// form (NamedProblem), the one duration format, rates, percentages and
// sizes, the plain-text tables, the JSON writer, the exit statuses every
// command returns, and the legend of the configuration abbreviations.
//
// It is a leaf: it imports nothing of tltune, so the compiler (which names
// problems in its explanations), the results store, the charts and the
// command line all use it.
package speak

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Duration is the one spelling of a time, from kernel medians to the wall
// time of a sweep: four significant digits (trailing zeros kept, so that
// columns line up) in the largest unit that keeps the number at least 1,
// with a space before the unit: "944.2 ns", "4.100 µs", "52.03 ms",
// "12.34 s"; a minute or more as "4 min 05 s" and an hour or more as
// "1 h 02 min". A negative, NaN or infinite time prints as "-".
func Duration(ns float64) string {
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0:
		return "-"
	case ns >= float64(time.Hour):
		d := time.Duration(ns).Round(time.Minute)
		return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
	case roundedFourDigits(ns/1e9) >= 60:
		d := time.Duration(ns).Round(time.Second)
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	for _, u := range []struct {
		scale float64
		name  string
	}{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}} {
		if v := ns / u.scale; roundedFourDigits(v) >= 1 {
			return fourDigits(v) + " " + u.name
		}
	}
	return fourDigits(ns) + " ns"
}

// Elapsed is Duration of a time.Duration.
func Elapsed(d time.Duration) string { return Duration(float64(d)) }

// roundedFourDigits is v as fourDigits will print it, so that 999.96 ns
// becomes "1.000 µs" rather than "1000 ns".
func roundedFourDigits(v float64) float64 {
	if v <= 0 {
		return v
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(v)))
	return math.Round(v*scale) / scale
}

// fourDigits prints v with four significant digits, keeping trailing
// zeros (unlike %.4g).
func fourDigits(v float64) string {
	switch r := roundedFourDigits(v); {
	case r < 10:
		return fmt.Sprintf("%.3f", v)
	case r < 100:
		return fmt.Sprintf("%.2f", v)
	case r < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// Rate is the one spelling of a rate given in giga-units per second, with
// an SI prefix and three significant digits: Rate(95.6, "FLOP/s") =
// "95.6 GFLOP/s", Rate(3350, "B/s") = "3.35 TB/s", Rate(0.27, "B/s") =
// "270 MB/s".
func Rate(giga float64, unit string) string {
	switch {
	case math.IsNaN(giga) || math.IsInf(giga, 0) || giga < 0:
		return "-"
	case giga >= 1e3:
		return fmt.Sprintf("%.3g T%s", giga/1e3, unit)
	case giga >= 1 || giga == 0:
		return fmt.Sprintf("%.3g G%s", giga, unit)
	}
	return fmt.Sprintf("%.3g M%s", giga*1e3, unit)
}

// Number is a rate, size or other measured quantity in a table column
// whose header names the unit: one decimal, as "95.6".
func Number(v float64) string { return fmt.Sprintf("%.1f", v) }

// Percent prints a fraction as a percentage with one decimal: "4.0%".
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// Bytes prints a size in the largest binary unit that keeps it whole
// enough to read: "80 GiB", "48 KiB", "1.5 MiB", "-" when zero (unknown).
func Bytes(n uint64) string {
	if n == 0 {
		return "-"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == math.Trunc(f) {
		return fmt.Sprintf("%d %s", int64(f), units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// WriteJSON writes v as indented JSON, the form of every --json output;
// "<" and ">" (memref<f32x8>) stay as they are.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Counts formats counts as "a 3, b 1" in order (names missing from order
// follow in order of the map's sorted keys), skipping zeros; "none" when
// all are zero.
func Counts(counts map[string]int, order []string) string {
	seen := map[string]bool{}
	var parts []string
	add := func(k string) {
		if n := counts[k]; n > 0 && !seen[k] {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
		seen[k] = true
	}
	for _, k := range order {
		add(k)
	}
	for _, k := range sortedKeys(counts) {
		add(k)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Finite is v for a JSON document: nil (null) when v is infinite or NaN,
// which JSON cannot hold.
func Finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
