package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels is a plot.Plotter that writes one label beside each point,
// choosing for each the first of eight positions around the point where it
// stays inside the data area and overlaps neither an earlier label nor any
// point. plotter.Labels puts every label at the same offset, so shapes close
// in intensity and performance (16x16 f16 and f32, say) would print over
// each other. The choice is made at draw time, in canvas units, so it is
// exact for the output size.
type pointLabels struct {
	xys    plotter.XYs
	labels []string
	colors []color.Color
	style  text.Style
	gap    vg.Length // distance from the point's centre to the label
}

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

// layout places the labels in order, each avoiding the points and the
// labels placed before it.
func (l *pointLabels) layout(c draw.Canvas, p *plot.Plot) []placedLabel {
	trX, trY := p.Transforms(&c)
	centers := make([]vg.Point, len(l.xys))
	var taken []vg.Rectangle // the points, then the placed labels
	for i, xy := range l.xys {
		centers[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		r := vg.Point{X: l.gap / 2, Y: l.gap / 2}
		taken = append(taken, vg.Rectangle{Min: centers[i].Sub(r), Max: centers[i].Add(r)})
	}
	out := make([]placedLabel, len(l.labels))
	for i, label := range l.labels {
		out[i] = l.place(c, centers[i], label, taken)
		out[i].style.Color = l.colors[i]
		taken = append(taken, out[i].box)
	}
	return out
}

// place returns the first free placement of label around center, or the
// one overlapping least when none is free.
func (l *pointLabels) place(c draw.Canvas, center vg.Point, label string, taken []vg.Rectangle) placedLabel {
	var best placedLabel
	bestOverlap := vg.Length(math.Inf(1))
	for _, pl := range placements {
		sty := l.style
		sty.XAlign, sty.YAlign = pl.x, pl.y
		at := center.Add(vg.Point{X: vg.Length(pl.dx) * l.gap, Y: vg.Length(pl.dy) * l.gap})
		box := sty.Rectangle(label).Add(at)
		overlap := overlapArea(box, taken) + outsideArea(box, c.Rectangle)
		if overlap < bestOverlap {
			best, bestOverlap = placedLabel{label, sty, at, box}, overlap
		}
		if overlap == 0 {
			break
		}
	}
	return best
}

func overlapArea(box vg.Rectangle, others []vg.Rectangle) vg.Length {
	var sum vg.Length
	for _, o := range others {
		sum += area(intersect(box, o))
	}
	return sum
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
