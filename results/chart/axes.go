package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logTicks marks an axis that carries log10 of its values: a labelled
// major tick per decade (0.01, 0.1, 1, 10, 100, 1000, then 10⁴, 10⁵, ...)
// and minor ticks at 2…9 times each decade, those at 2 and 5 labelled too
// on an axis of at most four decades. The ends of the axis are decades
// computed through log10 and back, so they are compared with a tolerance:
// without it the 0.1 of an axis from 0.1 fell off it.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	const eps = 1e-9
	labelMinor := max-min <= 4+eps
	var ticks []plot.Tick
	for e := math.Floor(min + eps); e <= max+eps; e++ {
		if e >= min-eps {
			ticks = append(ticks, plot.Tick{Value: e, Label: decadeLabel(int(e), 1)})
		}
		for m := 2; m < 10; m++ {
			v := e + math.Log10(float64(m))
			if v < min-eps || v > max+eps {
				continue
			}
			t := plot.Tick{Value: v}
			if labelMinor && (m == 2 || m == 5) {
				t.Label = decadeLabel(int(e), m)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// decadeLabel is m·10^e as a tick label: plain from 0.01 to 9000, else
// with a power of ten.
func decadeLabel(e, m int) string {
	if -2 <= e && e <= 3 {
		return strconv.FormatFloat(float64(m)*math.Pow10(e), 'f', -1, 64)
	}
	if m == 1 {
		return "10" + superscript(e)
	}
	return fmt.Sprintf("%d·10%s", m, superscript(e))
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	r := []rune(digits)
	var b strings.Builder
	if n < 0 {
		b.WriteRune('⁻')
		n = -n
	}
	for _, d := range fmt.Sprint(n) {
		b.WriteRune(r[d-'0'])
	}
	return b.String()
}

// ring is a circle's outline of the given width: it marks a point without
// hiding the point's own marker.
type ring struct{ width vg.Length }

func (r ring) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: r.width})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// newLegend is a legend in a smaller type than gonum's 12 pt default, which
// crowds a chart of this size.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(plot.DefaultFont, 9)
	l.ThumbnailWidth = vg.Points(24)
	l.Padding = vg.Points(2.5) // markers of 3.5 pt radius would touch at the font's spacing
	l.XOffs, l.YOffs = vg.Points(6), -vg.Points(4)
	return l
}

// legendPlotter draws a legend as a plotter, that is inside the data area.
// Plot.Legend is placed against the whole plot area, which on a padded log
// axis puts it above the data area, over the title.
type legendPlotter struct{ *plot.Legend }

func (l legendPlotter) Plot(c draw.Canvas, _ *plot.Plot) { l.Draw(c) }

// niceTicks labels a linear axis every 1, 2, 2.5 or 5 times a power of
// ten, so that it carries 5 to 11 labels, with a minor tick between
// labels: gonum's default gives as few as three on a narrow range.
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 4, 64)}}
	}
	step := niceStep((max - min) / 10)
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(math.Round(v/step)*step, 'f', decimals(step), 64)})
		if half := v + step/2; half <= max {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// niceStep is the smallest of 1, 2, 2.5 and 5 times a power of ten that is
// at least x.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// decimals is how many decimals the labels of a step need.
func decimals(step float64) int {
	for d := 0; d < 10; d++ {
		if s := step * math.Pow10(d); math.Abs(s-math.Round(s)) < 1e-9 {
			return d
		}
	}
	return 10
}

// timeTicks labels an axis of Unix seconds at round times in UTC: every
// 1, 3, 6 or 12 hours over less than two days, else every 1, 2, 7, 14 or
// 28 days (dates alone), so that it carries at most 6 labels, which fit
// the chart's width.
type timeTicks struct{}

var timeSteps = []time.Duration{time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour}

func (timeTicks) Ticks(min, max float64) []plot.Tick {
	span := time.Duration((max - min) * float64(time.Second))
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= 6 && (s >= 24*time.Hour || span < 48*time.Hour) {
			step = s
			break
		}
	}
	format := "01-02 15:04"
	if step >= 24*time.Hour {
		format = "2006-01-02"
	}
	secs := step.Seconds()
	var ticks []plot.Tick
	for v := math.Ceil(min/secs) * secs; v <= max; v += secs {
		ticks = append(ticks, plot.Tick{Value: v, Label: time.Unix(int64(v), 0).UTC().Format(format)})
	}
	return ticks
}
