package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"tltune/internal/speak"
)

// A Roofline is the data of a roofline chart: measured kernels against the
// measured ceilings of one device.
type Roofline struct {
	Device    string  // named in the title, e.g. "NVIDIA H200"
	MemoryGBs float64 // measured copy bandwidth in GB/s: the slope of the memory roof
	Roofs     []Roof  // compute ceilings, any number (f32, f16, f64, matrix, ...)
	Points    []Point // one per shape: its best configuration
}

// A Roof is one measured compute ceiling.
type Roof struct {
	Name   string  // e.g. "f32", "f16 matrix"
	GFLOPs float64 // GFLOP/s
}

// A Point is one kernel: a shape's best configuration.
type Point struct {
	Label     string  // printed beside the point, e.g. "64x64x32"
	Group     string  // legend entry, one marker style per group, e.g. "gemm f16"
	Intensity float64 // arithmetic intensity in FLOP/byte
	GFLOPs    float64 // achieved GFLOP/s
	// Roof is the compute ceiling of the point's element type in GFLOP/s
	// (results.Ceilings.ComputeRoof); 0: the highest roof.
	Roof float64
}

// aboveRoof reports whether pt lies above what the roofline allows it:
// the memory roof at its intensity or its compute roof.
func (r *Roofline) aboveRoof(pt Point) bool {
	roof := pt.Roof
	if roof == 0 {
		for _, rf := range r.Roofs {
			roof = max(roof, rf.GFLOPs)
		}
	}
	attainable := r.MemoryGBs * pt.Intensity
	if roof > 0 {
		attainable = min(attainable, roof)
	}
	return pt.GFLOPs > attainable*(1+1e-9)
}

// markerRadius is the radius of a point's marker.
const markerRadius = vg.Length(3.5)

// Plot implements Chart: log–log axes, the memory roof, one horizontal
// roof per compute ceiling from its ridge point on, and the points.
//
// The axes are linear axes over log10 of the values, labelled in decades,
// rather than gonum's plot.LogScale: gonum places an axis title's glyph box
// at the linear midpoint of the range, which on a log axis lies near its
// end, and pads the data area by half the title's length there.
func (r *Roofline) Plot() (*plot.Plot, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = "Roofline"
	if r.Device != "" {
		p.Title.Text += " — " + r.Device
	}
	p.X.Label.Text = "arithmetic intensity (FLOP/byte)"
	p.Y.Label.Text = "performance (GFLOP/s)"
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	xmin, xmax, ymin, ymax := r.bounds()
	p.X.Min, p.X.Max = math.Log10(xmin), math.Log10(xmax)
	p.Y.Min, p.Y.Max = math.Log10(ymin), math.Log10(ymax)
	p.Add(plotter.NewGrid())
	// Above the memory roof at low intensity nothing can be measured
	// (short of a kernel served from cache beating the copy bandwidth),
	// so the top left corner of the data area is free for the legend.
	leg := newLegend()
	leg.Top, leg.Left = true, true
	if err := r.addRoofs(p, &leg); err != nil {
		return nil, err
	}
	if err := r.addPoints(p, &leg); err != nil {
		return nil, err
	}
	p.Add(legendPlotter{&leg})
	return p, nil
}

func (r *Roofline) validate() error {
	if !(r.MemoryGBs > 0) {
		return errors.New("roofline: no memory bandwidth: measure it with `tltune peak`")
	}
	for _, rf := range r.Roofs {
		if !(rf.GFLOPs > 0) {
			return fmt.Errorf("roofline: roof %q: %g GFLOP/s is not a positive rate", rf.Name, rf.GFLOPs)
		}
	}
	for _, pt := range r.Points {
		// A log axis has no place for zero; a zero rate means the
		// store lost a measurement, and hiding it would hide that.
		if !(pt.Intensity > 0 && pt.GFLOPs > 0) || math.IsInf(pt.Intensity+pt.GFLOPs, 0) {
			return fmt.Errorf("roofline: point %q: intensity %g FLOP/byte and %g GFLOP/s must be positive", pt.Label, pt.Intensity, pt.GFLOPs)
		}
	}
	return nil
}

// bounds are whole decades around the points and the ridge points, with
// room above the highest roof for the legend.
func (r *Roofline) bounds() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = math.Inf(1), r.MemoryGBs // the memory roof at 1 FLOP/byte
	for _, rf := range r.Roofs {
		ridge := rf.GFLOPs / r.MemoryGBs
		xmin, xmax = min(xmin, ridge), max(xmax, ridge)
		ymax = max(ymax, rf.GFLOPs)
	}
	for _, pt := range r.Points {
		xmin, xmax = min(xmin, pt.Intensity), max(xmax, pt.Intensity)
		ymin, ymax = min(ymin, pt.GFLOPs), max(ymax, pt.GFLOPs)
	}
	if math.IsInf(xmin, 1) { // neither roofs nor points
		xmin, xmax = 1, 1
	}
	ymin = min(ymin, r.MemoryGBs*xmin)
	return decadeBelow(xmin / 2), decadeAbove(xmax * 2), decadeBelow(ymin / 2), decadeAbove(ymax * 4)
}

func decadeBelow(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v))) }
func decadeAbove(v float64) float64 { return math.Pow(10, math.Ceil(math.Log10(v))) }

// Roofs are grey, told apart by dashes and by their names written on them,
// so the colours stay for the points.
var roofColor = color.Gray{Y: 0x50}

func roofStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: roofColor, Width: vg.Points(1.2), Dashes: plotutil.Dashes(i + 1)}
}

// at is the position of (x, y) on the log10 axes.
func at(x, y float64) plotter.XY {
	return plotter.XY{X: math.Log10(x), Y: math.Log10(y)}
}

// roofLines are the roofs as polylines on the log axes, the memory roof
// first, then one per compute roof. The memory roof runs from the left edge
// up to the highest compute roof (to the right edge if there is none); each
// compute roof from its ridge point, where it meets the memory roof, to the
// right edge.
func (r *Roofline) roofLines() []plotter.XYs {
	xmin, xmax, _, _ := r.bounds()
	peak := xmax * r.MemoryGBs
	if len(r.Roofs) > 0 {
		peak = 0
		for _, rf := range r.Roofs {
			peak = max(peak, rf.GFLOPs)
		}
	}
	lines := []plotter.XYs{{at(xmin, xmin*r.MemoryGBs), at(peak/r.MemoryGBs, peak)}}
	for _, rf := range r.Roofs {
		lines = append(lines, plotter.XYs{at(rf.GFLOPs/r.MemoryGBs, rf.GFLOPs), at(xmax, rf.GFLOPs)})
	}
	return lines
}

// addRoofs draws the roofs with their legend entries and names.
func (r *Roofline) addRoofs(p *plot.Plot, leg *plot.Legend) error {
	lines := r.roofLines()
	memory, err := plotter.NewLine(lines[0])
	if err != nil {
		return err
	}
	memory.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5)}
	p.Add(memory)
	leg.Add("memory "+speak.Rate(r.MemoryGBs, "B/s"), memory)
	names := &roofNames{style: text.Style{Font: font.From(plot.DefaultFont, 8), Color: roofColor, Handler: plot.DefaultTextHandler}}
	for i, rf := range r.Roofs {
		line := lines[i+1]
		roof, err := plotter.NewLine(line)
		if err != nil {
			return err
		}
		roof.LineStyle = roofStyle(i)
		p.Add(roof)
		leg.Add(rf.Name+" "+speak.Rate(rf.GFLOPs, "FLOP/s"), roof)
		names.ends = append(names.ends, line[len(line)-1])
		names.labels = append(names.labels, rf.Name)
	}
	p.Add(names)
	return nil
}

// addPoints draws one scatter per group (its own colour and marker, one
// legend entry) and then all labels at once, so labels avoid every point.
func (r *Roofline) addPoints(p *plot.Plot, leg *plot.Legend) error {
	groups := r.groups()
	byGroup := map[string]plotter.XYs{}
	for _, pt := range r.Points {
		byGroup[pt.Group] = append(byGroup[pt.Group], at(pt.Intensity, pt.GFLOPs))
	}
	for i, g := range groups {
		s, err := plotter.NewScatter(byGroup[g])
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: groupColor(i), Radius: markerRadius, Shape: plotutil.Shape(i)}
		p.Add(s)
		if g != "" {
			leg.Add(g, s)
		}
	}
	if err := r.addAboveRoof(p, leg); err != nil {
		return err
	}
	p.Add(r.pointLabels())
	return nil
}

// aboveRoofColor marks points above their roof.
var aboveRoofColor = color.RGBA{R: 0xd0, A: 0xff}

// addAboveRoof rings every point that lies above its roof and says so
// under the title: the ceilings were measured too low, or the kernel ran
// from cache, and no percentage of peak can be trusted until it is
// resolved.
func (r *Roofline) addAboveRoof(p *plot.Plot, leg *plot.Legend) error {
	var above plotter.XYs
	for _, pt := range r.Points {
		if r.aboveRoof(pt) {
			above = append(above, at(pt.Intensity, pt.GFLOPs))
		}
	}
	if len(above) == 0 {
		return nil
	}
	rings, err := plotter.NewScatter(above)
	if err != nil {
		return err
	}
	rings.GlyphStyle = draw.GlyphStyle{Color: aboveRoofColor, Radius: markerRadius + vg.Points(3), Shape: ring{vg.Points(1.5)}}
	p.Add(rings)
	leg.Add("above its roof", rings)
	p.Title.Text += fmt.Sprintf("\nwarning: %d point(s) above their roof — ceilings measured too low (tltune peak) or kernels run from cache", len(above))
	p.Title.TextStyle.Font.Size = vg.Points(11)
	return nil
}

// groups are the points' groups in order of first appearance.
func (r *Roofline) groups() []string {
	var groups []string
	for _, pt := range r.Points {
		if !slices.Contains(groups, pt.Group) {
			groups = append(groups, pt.Group)
		}
	}
	return groups
}

// pointLabels labels each point in its group's colour, so equal labels of
// different groups (64×64×64 in f16 and in f32) are told apart.
func (r *Roofline) pointLabels() *pointLabels {
	groups := r.groups()
	l := newPointLabels(markerRadius + vg.Points(3))
	l.avoid = r.roofLines()
	for _, pt := range r.Points {
		l.add(at(pt.Intensity, pt.GFLOPs), pt.Label, groupColor(slices.Index(groups, pt.Group)))
	}
	return l
}

// groupColor is the colour of the i-th group's markers and labels: dark
// enough for 8 pt text on white.
func groupColor(i int) color.Color {
	return plotutil.DarkColors[i%len(plotutil.DarkColors)]
}
