package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A History is one shape's best median time across runs.
type History struct {
	Title string       // e.g. "gemm nn f16 64x64x32 — NVIDIA H200"
	Runs  []HistoryRun // oldest first
}

// A HistoryRun is one run's best median for the shape.
type HistoryRun struct {
	Label    string  // x tick label: a run id or date, e.g. "#12 11-20"
	MedianNs float64 // best configuration's median time
	// LoNs and HiNs bound the median's confidence interval; both zero
	// when the run recorded none (then no error bar is drawn).
	LoNs, HiNs float64
}

// maxTickLabels keeps run labels legible: with more runs only every k-th
// is labelled.
const maxTickLabels = 12

// Plot implements Chart: medians joined by a line, confidence intervals as
// error bars, one x position per run.
func (h *History) Plot() (*plot.Plot, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = h.Title
	p.X.Label.Text = "run"
	p.Y.Label.Text = "best median (ns)"
	p.X.Min, p.X.Max = -0.5, float64(len(h.Runs))-0.5
	p.X.Tick.Marker = h.runTicks()
	p.Y.Min, p.Y.Max = h.yRange()
	p.Add(plotter.NewGrid())

	medians, bars := h.series()
	line, points, err := plotter.NewLinePoints(medians)
	if err != nil {
		return nil, err
	}
	line.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	points.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(line, points)
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return nil, err
		}
		p.Add(eb)
		// Said under the axis rather than in a legend: with one series
		// a legend only adds a box that may hide the latest run.
		p.X.Label.Text += " (bars: confidence interval of the median)"
	}
	return p, nil
}

func (h *History) validate() error {
	if len(h.Runs) == 0 {
		return errors.New("history: no runs measured this shape")
	}
	for _, r := range h.Runs {
		if !(r.MedianNs > 0) || math.IsInf(r.MedianNs, 0) {
			return fmt.Errorf("history: run %q: median %g ns is not a positive time", r.Label, r.MedianNs)
		}
		if r.hasInterval() && !(r.LoNs <= r.MedianNs && r.MedianNs <= r.HiNs) {
			return fmt.Errorf("history: run %q: interval [%g, %g] ns does not contain the median %g ns", r.Label, r.LoNs, r.HiNs, r.MedianNs)
		}
	}
	return nil
}

func (r HistoryRun) hasInterval() bool { return r.LoNs != 0 || r.HiNs != 0 }

// errorBars are points with asymmetric y errors, for plotter.NewYErrorBars.
type errorBars struct {
	plotter.XYs
	plotter.YErrors
}

func (h *History) series() (plotter.XYs, errorBars) {
	medians := make(plotter.XYs, len(h.Runs))
	var bars errorBars
	for i, r := range h.Runs {
		medians[i] = plotter.XY{X: float64(i), Y: r.MedianNs}
		if r.hasInterval() {
			bars.XYs = append(bars.XYs, medians[i])
			bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{r.MedianNs - r.LoNs, r.HiNs - r.MedianNs})
		}
	}
	return medians, bars
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

// runTicks labels every run, or every k-th when there are many.
func (h *History) runTicks() plot.ConstantTicks {
	step := (len(h.Runs) + maxTickLabels - 1) / maxTickLabels
	ticks := make(plot.ConstantTicks, len(h.Runs))
	for i, r := range h.Runs {
		ticks[i] = plot.Tick{Value: float64(i)}
		if i%step == 0 {
			ticks[i].Label = r.Label
		}
	}
	return ticks
}
