package chart

import (
	"cmp"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels is a plot.Plotter that writes one label beside each point,
// choosing for each the first of eight positions around the point where it
// stays inside the data area, overlaps neither an earlier label nor any
// point, and crosses none of the avoided lines (the roofs). When no
// position is free it takes the cheapest: crossing a line costs less than
// hiding text. plotter.Labels puts every label at the same offset, so
// shapes close in intensity and performance (GEMV and GER of one size)
// would print over each other. The choice is made at draw time, in canvas
// units, so it is exact for the output size.
type pointLabels struct {
	xys    plotter.XYs
	labels []string
	colors []color.Color
	avoid  []plotter.XYs // polylines, in data coordinates
	style  text.Style
	gap    vg.Length // distance from the point's centre to the label
}

// Costs of a placement, in the units of overlap area (pt²): crossing a
// line costs about a tenth of a label's area, and sitting nearer to another
// point than to one's own (so the reader would pair it wrongly) twice that.
const (
	lineCrossingCost  = 20
	misattributedCost = 40
)

func newPointLabels(gap vg.Length) *pointLabels {
	return &pointLabels{
		style: text.Style{Font: font.From(plot.DefaultFont, 8), Handler: plot.DefaultTextHandler},
		gap:   gap,
	}
}

func (l *pointLabels) add(xy plotter.XY, label string, c color.Color) {
	l.xys = append(l.xys, xy)
	l.labels = append(l.labels, label)
	l.colors = append(l.colors, c)
}

// A placement anchors the label at the point plus (dx, dy)·gap with the
// given alignment; in order of preference.
type placement struct {
	dx, dy float64
	x      text.XAlignment
	y      text.YAlignment
}

var placements = []placement{
	{1, 0, text.XLeft, text.YCenter},     // right
	{-1, 0, text.XRight, text.YCenter},   // left
	{0, 1, text.XCenter, text.YBottom},   // above
	{0, -1, text.XCenter, text.YTop},     // below
	{0.7, 0.7, text.XLeft, text.YBottom}, // upper right
	{0.7, -0.7, text.XLeft, text.YTop},   // lower right
	{-0.7, 0.7, text.XRight, text.YBottom},
	{-0.7, -0.7, text.XRight, text.YTop},
}

// A placedLabel is a label with its chosen style, anchor and box.
type placedLabel struct {
	text  string
	style text.Style
	at    vg.Point
	box   vg.Rectangle
}

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	for _, pl := range l.layout(c, p) {
		c.FillText(pl.style, pl.at, pl.text)
	}
}

// obstacles are what a label must keep clear of, in canvas units.
type obstacles struct {
	bounds   vg.Rectangle   // the data area
	centers  []vg.Point     // the points
	boxes    []vg.Rectangle // the points' markers, then the labels placed so far
	segments [][2]vg.Point  // the avoided lines
}

// cost is the badness of box as the label of point own.
func (o *obstacles) cost(box vg.Rectangle, own int) vg.Length {
	cost := outsideArea(box, o.bounds)
	d := distance(o.centers[own], box)
	for i, c := range o.centers {
		if i != own && distance(c, box) < d {
			cost += misattributedCost
			break
		}
	}
	for _, b := range o.boxes {
		cost += area(intersect(box, b))
	}
	for _, s := range o.segments {
		if crosses(s, box) {
			cost += lineCrossingCost
		}
	}
	return cost
}

// layout places the labels in order, each avoiding the points, the lines
// and the labels placed before it.
func (l *pointLabels) layout(c draw.Canvas, p *plot.Plot) []placedLabel {
	trX, trY := p.Transforms(&c)
	toCanvas := func(xy plotter.XY) vg.Point { return vg.Point{X: trX(xy.X), Y: trY(xy.Y)} }
	obs := obstacles{bounds: c.Rectangle}
	for _, xy := range l.xys {
		c := toCanvas(xy)
		r := vg.Point{X: l.gap / 2, Y: l.gap / 2}
		obs.centers = append(obs.centers, c)
		obs.boxes = append(obs.boxes, vg.Rectangle{Min: c.Sub(r), Max: c.Add(r)})
	}
	for _, line := range l.avoid {
		for i := 1; i < len(line); i++ {
			obs.segments = append(obs.segments, [2]vg.Point{toCanvas(line[i-1]), toCanvas(line[i])})
		}
	}
	out := make([]placedLabel, len(l.labels))
	for i, label := range l.labels {
		out[i] = l.place(i, label, &obs)
		out[i].style.Color = l.colors[i]
		obs.boxes = append(obs.boxes, out[i].box)
	}
	return out
}

// place returns the first free placement of the label of point i, or the
// cheapest when none is free.
func (l *pointLabels) place(i int, label string, obs *obstacles) placedLabel {
	var best placedLabel
	bestCost := vg.Length(math.Inf(1))
	for _, pl := range placements {
		c := l.candidate(obs.centers[i], label, pl)
		cost := obs.cost(c.box, i)
		if cost < bestCost {
			best, bestCost = c, cost
		}
		if cost == 0 {
			break
		}
	}
	return best
}

// candidate is label placed by pl around center.
func (l *pointLabels) candidate(center vg.Point, label string, pl placement) placedLabel {
	sty := l.style
	sty.XAlign, sty.YAlign = pl.x, pl.y
	at := center.Add(vg.Point{X: vg.Length(pl.dx) * l.gap, Y: vg.Length(pl.dy) * l.gap})
	return placedLabel{label, sty, at, sty.Rectangle(label).Add(at)}
}

// outsideArea is the part of box that lies outside bounds.
func outsideArea(box, bounds vg.Rectangle) vg.Length {
	return area(box) - area(intersect(box, bounds))
}

func intersect(a, b vg.Rectangle) vg.Rectangle {
	return vg.Rectangle{
		Min: vg.Point{X: max(a.Min.X, b.Min.X), Y: max(a.Min.Y, b.Min.Y)},
		Max: vg.Point{X: min(a.Max.X, b.Max.X), Y: min(a.Max.Y, b.Max.Y)},
	}
}

// area is the area of r, zero when r is empty.
func area(r vg.Rectangle) vg.Length {
	return max(0, r.Max.X-r.Min.X) * max(0, r.Max.Y-r.Min.Y)
}

// distance is the distance from p to the nearest point of box.
func distance(p vg.Point, box vg.Rectangle) vg.Length {
	dx := max(box.Min.X-p.X, 0, p.X-box.Max.X)
	dy := max(box.Min.Y-p.Y, 0, p.Y-box.Max.Y)
	return vg.Length(math.Hypot(float64(dx), float64(dy)))
}

// crosses reports whether segment s passes through box, by clipping the
// segment's parameter range to the box's slabs (Liang–Barsky).
func crosses(s [2]vg.Point, box vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	clip := func(from, delta, lo, hi vg.Length) bool {
		if delta == 0 {
			return lo <= from && from <= hi
		}
		a, b := float64((lo-from)/delta), float64((hi-from)/delta)
		t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
		return t0 <= t1
	}
	d := s[1].Sub(s[0])
	return clip(s[0].X, d.X, box.Min.X, box.Max.X) && clip(s[0].Y, d.Y, box.Min.Y, box.Max.Y)
}

// roofNames writes each compute roof's name on it at the right edge, so the
// reader need not match dashes against the legend: above the line, or
// below it where the name above would overlap one already written (roofs
// of nearly equal rates, such as f32 and f16 FMA on a device that computes
// half in f32), or further left. Names are placed from the highest roof
// down, at draw time, in canvas units.
type roofNames struct {
	ends   plotter.XYs // the right end of each roof, in data coordinates
	labels []string
	style  text.Style
}

// Plot implements plot.Plotter.
func (r *roofNames) Plot(c draw.Canvas, p *plot.Plot) {
	for _, pl := range r.layout(c, p) {
		c.FillText(pl.style, pl.at, pl.text)
	}
}

func (r *roofNames) layout(c draw.Canvas, p *plot.Plot) []placedLabel {
	trX, trY := p.Transforms(&c)
	order := make([]int, len(r.ends))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.ends[b].Y, r.ends[a].Y) })
	gap := vg.Points(3)
	var placed []placedLabel
	for _, i := range order {
		end := vg.Point{X: trX(r.ends[i].X), Y: trY(r.ends[i].Y)}
		width := r.style.Width(r.labels[i])
		best, bestCost := placedLabel{}, vg.Length(math.Inf(1))
		for shift := range len(r.ends) + 1 {
			for _, above := range []bool{true, false} {
				sty := r.style
				sty.XAlign, sty.YAlign = text.XRight, text.YBottom
				at := end.Add(vg.Point{X: -gap - vg.Length(shift)*(width+2*gap), Y: gap})
				if !above {
					sty.YAlign = text.YTop
					at.Y = end.Y - gap
				}
				box := sty.Rectangle(r.labels[i]).Add(at)
				cost := outsideArea(box, c.Rectangle)
				for _, q := range placed {
					cost += area(intersect(box, q.box))
				}
				if cost < bestCost {
					best, bestCost = placedLabel{r.labels[i], sty, at, box}, cost
				}
			}
			if bestCost == 0 {
				break
			}
		}
		placed = append(placed, best)
	}
	return placed
}
