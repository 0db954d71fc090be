package chart

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"

	"tltune/internal/golden"
)

var preview = flag.String("preview", "", "also write PNG renderings of the golden charts into this directory, to look at")

// h200Roofline is a roofline shaped like a nightly run on an H200: batched
// GEMM f16 and f32 16…256, GEMV and GER 32…256. The numbers are made up but
// of the right size; GEMV and GER sit at nearly one intensity, so their
// labels must be spread out.
func h200Roofline() *Roofline {
	r := &Roofline{
		Device:    "NVIDIA H200",
		MemoryGBs: 4020,
		Roofs:     []Roof{{"f16 matrix", 660000}, {"f32", 61000}, {"f64", 31500}},
	}
	add := func(group string, sizes []int, intensity func(n int) float64, gflops []float64) {
		for i, n := range sizes {
			label := fmt.Sprintf("%d×%d", n, n)
			if strings.HasPrefix(group, "gemm") {
				label = fmt.Sprintf("%d×%d×%d", n, n, n)
			}
			r.Points = append(r.Points, Point{Label: label, Group: group, Intensity: intensity(n), GFLOPs: gflops[i]})
		}
	}
	sizes := []int{16, 32, 64, 128, 256}
	// Square GEMM reads A and B and writes C: 2n³ FLOP over 3n² elements.
	add("gemm f16", sizes, func(n int) float64 { return float64(n) / 3 }, []float64{9100, 21000, 58000, 142000, 305000})
	add("gemm f32", sizes, func(n int) float64 { return float64(n) / 6 }, []float64{6100, 12500, 23800, 37900, 44600})
	// GEMV reads A, x and writes y: 2n² FLOP over n²+2n elements of 4 bytes.
	add("gemv f32", sizes[1:], func(n int) float64 { return 2 * float64(n*n) / (4 * float64(n*n+2*n)) }, []float64{640, 1150, 1520, 1810})
	// GER reads and writes A and reads x, y: 2n² FLOP over 2n²+2n elements.
	add("ger f32", sizes[1:], func(n int) float64 { return 2 * float64(n*n) / (4 * float64(2*n*n+2*n)) }, []float64{480, 690, 805, 860})
	return r
}

// poclRoofline is the roofline of the issue that asked for warnings: a
// PoCL CPU whose FMA ceilings were measured too low, so GEMMs lie above
// the f32 roof, and a GER that beat the copy bandwidth from cache; two
// roofs of about equal rates, whose names must not overlap.
func poclRoofline() *Roofline {
	return &Roofline{
		Device:    "pthread-skylake-avx512-AMD EPYC",
		MemoryGBs: 19.7,
		Roofs:     []Roof{{"f32 FMA", 28.3}, {"f64 FMA", 29.1}},
		Points: []Point{
			{Label: "32×32×32", Group: "gemm f32", Intensity: 32.0 / 6, GFLOPs: 95.6, Roof: 28.3},
			{Label: "64×64×64", Group: "gemm f32", Intensity: 64.0 / 6, GFLOPs: 24.1, Roof: 28.3},
			{Label: "64×64", Group: "ger f32", Intensity: 0.25, GFLOPs: 5.12, Roof: 28.3},
			{Label: "128×128", Group: "gemv f32", Intensity: 0.49, GFLOPs: 6.3, Roof: 28.3},
		},
	}
}

// gemmHistory is a fortnight of nightly runs of one shape: re-timings,
// a slowdown after a driver update that a new search (a tune on day 10)
// answered with another configuration, and a skipped night.
func gemmHistory() *History {
	h := &History{Title: "gemm.nn f16/f32 64x64x32 — NVIDIA H200"}
	medians := []float64{4105, 4098, 4120, 4087, 4101, 4352, 4347, 4109, 4096, 4112, 4101}
	days := []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11}
	start := time.Date(2026, 11, 10, 2, 0, 0, 0, time.UTC)
	for i, m := range medians {
		run := HistoryRun{At: start.Add(time.Duration(days[i]) * 24 * time.Hour), MedianNs: m, LoNs: m * 0.992, HiNs: m * 1.009,
			Config: "sg32 wg64x2 t32x32 cm16x8x16 u2 b1", Retimed: i > 0}
		if i == 2 { // a run that kept no interval
			run.LoNs, run.HiNs = 0, 0
		}
		if i >= 7 {
			run.Config, run.Retimed = "sg32 wg64x4 t32x16 cm16x8x16 u2 b1", i > 7
		}
		h.Runs = append(h.Runs, run)
	}
	return h
}

func renderSVG(t *testing.T, c Chart) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, "svg", c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden compares the SVG of each chart byte for byte with testdata:
// gonum's SVG writer is deterministic (fixed precision, no timestamps,
// fonts referenced by name), so any moved point, roof or label fails.
func TestGolden(t *testing.T) {
	charts := []struct {
		name  string
		chart Chart
	}{
		{"roofline", h200Roofline()},
		{"roofline-above", poclRoofline()},
		{"history", gemmHistory()},
	}
	for _, c := range charts {
		t.Run(c.name, func(t *testing.T) {
			checkGolden(t, c.name, c.chart)
			if *preview != "" {
				if err := Save(filepath.Join(*preview, c.name+".png"), c.chart); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkGolden compares the SVG of c with testdata/NAME.svg. On a mismatch
// it keeps the new rendering, SVG and PNG, in a temporary directory: a
// text diff of two SVGs says little, a look at the picture says all.
func checkGolden(t *testing.T, name string, c Chart) {
	t.Helper()
	path := filepath.Join("testdata", name+".svg")
	got := renderSVG(t, c)
	if again := renderSVG(t, c); !bytes.Equal(got, again) {
		t.Fatal("two renderings of the same chart differ: the golden test would be flaky")
	}
	if golden.Update() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err == nil && bytes.Equal(got, want) {
		return
	}
	kept := keep(t, name, got, c)
	if err != nil {
		t.Fatalf("%v; the rendering is in %s: look at it, then run go test -update", err, kept)
	}
	t.Errorf("%s does not match the rendering in %s (and its .png): look at it, then run go test -update", path, kept)
}

// keep writes a rendering that failed its golden check, as SVG and PNG,
// into a new temporary directory and returns the SVG's path.
func keep(t *testing.T, name string, svg []byte, c Chart) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tltune-chart-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".svg")
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Save(filepath.Join(dir, name+".png"), c); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGoldenCatchesMovedPoint shows the golden comparison can fail: moving
// one point by 5 % or renaming a roof changes the SVG.
func TestGoldenCatchesMovedPoint(t *testing.T) {
	base := renderSVG(t, h200Roofline())
	moved := h200Roofline()
	moved.Points[7].GFLOPs *= 1.05
	if bytes.Equal(base, renderSVG(t, moved)) {
		t.Error("moving a point left the SVG unchanged")
	}
	renamed := h200Roofline()
	renamed.Roofs[1].Name = "fp32"
	if bytes.Equal(base, renderSVG(t, renamed)) {
		t.Error("renaming a roof left the SVG unchanged")
	}
}

// layoutOf lays out r's point labels on the data area of a page, as Write
// draws them, and returns them with the transform to canvas units.
func layoutOf(t *testing.T, r *Roofline) ([]placedLabel, *pointLabels, func(plotter.XY) vg.Point) {
	t.Helper()
	p, err := r.Plot()
	if err != nil {
		t.Fatal(err)
	}
	labels := r.pointLabels()
	dc := p.DataCanvas(page(vgsvg.New(width, height)))
	trX, trY := p.Transforms(&dc)
	toCanvas := func(xy plotter.XY) vg.Point { return vg.Point{X: trX(xy.X), Y: trY(xy.Y)} }
	placed := labels.layout(dc, p)
	for _, pl := range placed {
		if outsideArea(pl.box, dc.Rectangle) > 0 {
			t.Errorf("label %q leaves the data area", pl.text)
		}
	}
	return placed, labels, toCanvas
}

// TestLabelsDoNotOverlap: on the crowded H200 roofline (GEMV and GER at
// nearly one intensity) no two labels overlap.
func TestLabelsDoNotOverlap(t *testing.T) {
	placed, _, _ := layoutOf(t, h200Roofline())
	for i, a := range placed {
		for _, b := range placed[:i] {
			if ar := area(intersect(a.box, b.box)); ar > 0 {
				t.Errorf("labels %q and %q overlap (%.1f pt²)", a.text, b.text, ar)
			}
		}
	}
}

// TestLabelAvoidsRoof: a point just under a compute roof would have its
// first-choice label (to the right) cut by the roof; a free place below
// exists and must be taken.
func TestLabelAvoidsRoof(t *testing.T) {
	r := &Roofline{MemoryGBs: 10, Roofs: []Roof{{"f32", 100}}, Points: []Point{{Label: "64×64×64", Intensity: 50, GFLOPs: 97}}}
	placed, labels, toCanvas := layoutOf(t, r)
	roof := labels.avoid[1]
	seg := [2]vg.Point{toCanvas(roof[0]), toCanvas(roof[1])}
	first := labels.candidate(toCanvas(labels.xys[0]), placed[0].text, placements[0])
	if !crosses(seg, first.box) {
		t.Fatalf("setup: the first-choice placement does not cross the roof; move the point nearer")
	}
	if crosses(seg, placed[0].box) {
		t.Errorf("label crosses the roof though a free placement exists")
	}
}

func TestCrosses(t *testing.T) {
	box := vg.Rectangle{Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: 10, Y: 5}}
	for _, tt := range []struct {
		a, b vg.Point
		want bool
	}{
		{vg.Point{X: -5, Y: 2}, vg.Point{X: 15, Y: 2}, true},   // through, horizontal
		{vg.Point{X: -5, Y: -5}, vg.Point{X: 15, Y: 10}, true}, // through, diagonal
		{vg.Point{X: 2, Y: 1}, vg.Point{X: 3, Y: 2}, true},     // inside
		{vg.Point{X: -5, Y: 6}, vg.Point{X: 15, Y: 6}, false},  // above
		{vg.Point{X: -5, Y: 0}, vg.Point{X: 0, Y: 10}, false},  // passes the corner's outside...
		{vg.Point{X: 11, Y: -5}, vg.Point{X: 11, Y: 10}, false},
	} {
		if got := crosses([2]vg.Point{tt.a, tt.b}, box); got != tt.want {
			t.Errorf("crosses(%v–%v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestFormats(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"svg", "png", "pdf"} {
		path := filepath.Join(dir, "roofline."+ext)
		if err := Save(path, h200Roofline()); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"svg": "<?xml", "png": "\x89PNG", "pdf": "%PDF"}[ext]; !bytes.HasPrefix(data, []byte(want)) {
			t.Errorf("%s does not start with %q", path, want)
		}
	}
	img, err := png.Decode(mustOpen(t, filepath.Join(dir, "roofline.png")))
	if err != nil {
		t.Fatal(err)
	}
	// 20 cm × 13 cm at 150 dpi.
	if b := img.Bounds(); b.Dx() != 1181 || b.Dy() != 768 {
		t.Errorf("PNG is %d×%d pixels, want 1181×768", b.Dx(), b.Dy())
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		path  string
		chart Chart
		want  string
	}{
		{"unknown format", "chart.jpg", h200Roofline(),
			`chart.jpg: chart format "jpg" not supported: name the file .svg, .png or .pdf`},
		{"no bandwidth", "r.svg", &Roofline{Device: "X"},
			"roofline: no memory bandwidth: measure it with `tltune peak`"},
		{"zero point", "r.svg", &Roofline{MemoryGBs: 100, Points: []Point{{Label: "64×64", Intensity: 0.5}}},
			`roofline: point "64×64": intensity 0.5 FLOP/byte and 0 GFLOP/s must be positive`},
		{"bad roof", "r.svg", &Roofline{MemoryGBs: 100, Roofs: []Roof{{"f16", -1}}},
			`roofline: roof "f16": -1 GFLOP/s is not a positive rate`},
		{"empty history", "h.svg", &History{},
			"history: no runs measured this shape"},
		{"interval misses median", "h.svg", &History{Runs: []HistoryRun{{MedianNs: 10, LoNs: 11, HiNs: 12}}},
			`history: run 1: interval [11, 12] ns does not contain the median 10 ns`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.path)
			err := Save(path, tt.chart)
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("error %v, want suffix %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "chart.jpg")); !os.IsNotExist(err) {
		t.Errorf("an unsupported format still created the file")
	}
}

func TestRooflineWithoutComputeRoofs(t *testing.T) {
	r := &Roofline{MemoryGBs: 50, Points: []Point{{Label: "a", Intensity: 0.25, GFLOPs: 10}}}
	if _, err := r.Plot(); err != nil {
		t.Fatal(err)
	}
	xmin, xmax, ymin, ymax := r.bounds()
	if xmin != 0.1 || xmax != 1 || ymin != 1 || ymax != 1000 {
		t.Errorf("bounds %g…%g × %g…%g, want decades 0.1…1 × 1…1000", xmin, xmax, ymin, ymax)
	}
}

// TestHistoryAxes: times in the unit that suits them, 5 to 11 labels on
// the y axis, dates on the x axis.
func TestHistoryAxes(t *testing.T) {
	if u, scale := timeUnit(4352 * 1.009); u != "µs" || scale != 1e3 {
		t.Errorf("unit of 4.4 µs: %s %g", u, scale)
	}
	labels := func(ticks []plot.Tick) (out []string) {
		for _, tk := range ticks {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got := labels(niceTicks{}.Ticks(4.04, 4.43)); len(got) < 5 || len(got) > 11 || got[0] != "4.05" {
		t.Errorf("y labels %v", got)
	}
	day := float64(time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC).Unix())
	if got := labels(timeTicks{}.Ticks(day, day+11*86400)); len(got) < 3 || len(got) > 9 || !strings.HasPrefix(got[0], "2026-11-1") {
		t.Errorf("x labels over 11 days %v", got)
	}
	if got := labels(timeTicks{}.Ticks(day, day+5*3600)); got[0] != "11-10 00:00" {
		t.Errorf("x labels over 5 hours %v", got)
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]string{"out/Roofline.SVG": "svg", "h.png": "png", "a.b.pdf": "pdf"} {
		if got, err := FormatOf(path); got != want || err != nil {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := FormatOf("roofline"); err == nil {
		t.Error("FormatOf accepted a path without an extension")
	}
}
