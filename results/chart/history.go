package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A History is one shape's best median time across runs.
type History struct {
	Title string       // e.g. "gemm.nn f16/f32 64x64x32 — NVIDIA H200"
	Runs  []HistoryRun // oldest first
}

// A HistoryRun is one run's best median for the shape.
type HistoryRun struct {
	At       time.Time // when the run began: the x axis is time
	MedianNs float64   // best configuration's median time
	// LoNs and HiNs bound the median's confidence interval; both zero
	// when the run recorded none (then no error bar is drawn).
	LoNs, HiNs float64
	// Config is the best configuration, as reports write it; a change from
	// the run before is marked on the chart.
	Config string
	// Retimed says the run re-timed stored configurations (sweep
	// --remeasure) rather than searching: the two kinds are told apart by
	// their markers, since only a search can find a faster configuration.
	Retimed bool
}

// Plot implements Chart: medians joined by a line over the time the runs
// began, confidence intervals as error bars, a filled marker for a run
// that searched and a hollow one for a run that re-timed, and a dashed
// vertical line where the best configuration changed. Times are in the
// unit that suits them (ns, µs, ms, s).
func (h *History) Plot() (*plot.Plot, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	unit, scale := timeUnit(h.largest())
	p := plot.New()
	p.Title.Text = h.Title
	p.X.Label.Text = "run start (UTC)"
	p.Y.Label.Text = "best median (" + unit + ")"
	p.X.Tick.Marker = timeTicks{}
	lo, hi := h.yRange()
	lo, hi = lo/scale, hi/scale
	// The top third is the legend's and the changed configurations'
	// names: the data never runs under them.
	top := hi + (hi-lo)/2
	p.Y.Tick.Marker = niceTicks{}
	p.Add(plotter.NewGrid())
	leg := newLegend()
	leg.Top, leg.Left = true, true
	if err := h.addChanges(p, &leg, lo, top); err != nil {
		return nil, err
	}
	if err := h.addSeries(p, &leg, scale); err != nil {
		return nil, err
	}
	p.Add(legendPlotter{&leg})
	p.X.Min, p.X.Max = h.xRange() // after the plotters, which widen the axes to their data
	p.Y.Min, p.Y.Max = lo, top
	return p, nil
}

func (h *History) validate() error {
	if len(h.Runs) == 0 {
		return errors.New("history: no runs measured this shape")
	}
	for i, r := range h.Runs {
		if !(r.MedianNs > 0) || math.IsInf(r.MedianNs, 0) {
			return fmt.Errorf("history: run %d: median %g ns is not a positive time", i+1, r.MedianNs)
		}
		if r.hasInterval() && !(r.LoNs <= r.MedianNs && r.MedianNs <= r.HiNs) {
			return fmt.Errorf("history: run %d: interval [%g, %g] ns does not contain the median %g ns", i+1, r.LoNs, r.HiNs, r.MedianNs)
		}
		if i > 0 && r.At.Before(h.Runs[i-1].At) {
			return fmt.Errorf("history: run %d began before the run listed before it", i+1)
		}
	}
	return nil
}

func (r HistoryRun) hasInterval() bool { return r.LoNs != 0 || r.HiNs != 0 }

func (r HistoryRun) x() float64 { return float64(r.At.Unix()) }

// largest is the largest time drawn, which picks the unit.
func (h *History) largest() float64 {
	m := 0.0
	for _, r := range h.Runs {
		m = max(m, r.MedianNs, r.HiNs)
	}
	return m
}

// timeUnit is the unit of speak.Duration for times up to ns, and its size
// in ns.
func timeUnit(ns float64) (string, float64) {
	switch {
	case ns >= 1e9:
		return "s", 1e9
	case ns >= 1e6:
		return "ms", 1e6
	case ns >= 1e3:
		return "µs", 1e3
	}
	return "ns", 1
}

// xRange spans the runs with a twentieth of the span on each side (an hour
// each side for a single run).
func (h *History) xRange() (lo, hi float64) {
	lo, hi = h.Runs[0].x(), h.Runs[len(h.Runs)-1].x()
	margin := (hi - lo) / 20
	if margin == 0 {
		margin = 3600
	}
	return lo - margin, hi + margin
}

// yRange spans the medians and intervals with a tenth of the span as
// margin, so a change of a few percent fills the chart instead of sitting
// on a line far above zero.
func (h *History) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range h.Runs {
		lo, hi = min(lo, r.MedianNs), max(hi, r.MedianNs)
		if r.hasInterval() {
			lo, hi = min(lo, r.LoNs), max(hi, r.HiNs)
		}
	}
	margin := (hi - lo) / 10
	if margin == 0 {
		margin = hi / 20
	}
	return max(0, lo-margin), hi + margin
}

// errorBars are points with asymmetric y errors, for plotter.NewYErrorBars.
type errorBars struct {
	plotter.XYs
	plotter.YErrors
}

// addSeries draws the line through the medians, the markers of each kind
// of run and the error bars, with their legend entries.
func (h *History) addSeries(p *plot.Plot, leg *plot.Legend, scale float64) error {
	medians := make(plotter.XYs, len(h.Runs))
	var tuned, retimed plotter.XYs
	var bars errorBars
	for i, r := range h.Runs {
		medians[i] = plotter.XY{X: r.x(), Y: r.MedianNs / scale}
		if r.Retimed {
			retimed = append(retimed, medians[i])
		} else {
			tuned = append(tuned, medians[i])
		}
		if r.hasInterval() {
			bars.XYs = append(bars.XYs, medians[i])
			bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{(r.MedianNs - r.LoNs) / scale, (r.HiNs - r.MedianNs) / scale})
		}
	}
	line, err := plotter.NewLine(medians)
	if err != nil {
		return err
	}
	line.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	p.Add(line)
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return err
		}
		p.Add(eb)
		p.X.Label.Text += "; bars: 95% confidence interval of the median"
	}
	for _, kind := range []struct {
		xys   plotter.XYs
		name  string
		shape draw.GlyphDrawer
	}{{tuned, "run that searched (tune)", draw.CircleGlyph{}}, {retimed, "run that re-timed the stored best", ring{vg.Points(1.5)}}} {
		if len(kind.xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(kind.xys)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: kind.shape}
		p.Add(s)
		leg.Add(kind.name, s)
	}
	return nil
}

// changeColor draws the marks of a changed configuration.
var changeColor = color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}

// addChanges draws a dashed vertical line at each run whose best
// configuration differs from the run before's, and names the new one
// at the top: a step in the times there may be the configuration's, not
// the device's or the driver's.
func (h *History) addChanges(p *plot.Plot, leg *plot.Legend, bottom, top float64) error {
	var labels plotter.XYLabels
	first := true
	for i := 1; i < len(h.Runs); i++ {
		r := h.Runs[i]
		if r.Config == "" || r.Config == h.Runs[i-1].Config {
			continue
		}
		mark, err := plotter.NewLine(plotter.XYs{{X: r.x(), Y: bottom}, {X: r.x(), Y: top}})
		if err != nil {
			return err
		}
		mark.LineStyle = draw.LineStyle{Color: changeColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(mark)
		if first {
			leg.Add("best configuration changed", mark)
			first = false
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: r.x(), Y: top})
		labels.Labels = append(labels.Labels, " "+r.Config+" ") // clear of the line on either side
	}
	if len(labels.XYs) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	// A name right of its line, or left of it in the right half of the
	// chart, where it would run off the edge.
	xlo, xhi := h.xRange()
	for i, xy := range labels.XYs {
		l.TextStyle[i].Font.Size = vg.Points(7)
		l.TextStyle[i].Color = changeColor
		l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XLeft, draw.YTop
		if xy.X > (xlo+xhi)/2 {
			l.TextStyle[i].XAlign = draw.XRight
		}
	}
	l.Offset = vg.Point{Y: -vg.Points(3)}
	p.Add(l)
	return nil
}
