package chart

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logTicks marks an axis that carries log10 of its values: a labelled
// major tick per decade (0.1, 1, 10, 100, 1000, then 10⁴, 10⁵, ...) and
// minor ticks at 2…9 times each decade.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(min); e <= max; e++ {
		if e >= min {
			ticks = append(ticks, plot.Tick{Value: e, Label: decadeLabel(math.Pow(10, e))})
		}
		for m := 2.0; m < 10; m++ {
			if v := e + math.Log10(m); min <= v && v <= max {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

func decadeLabel(v float64) string {
	e := int(math.Round(math.Log10(v)))
	if -1 <= e && e <= 3 {
		return fmt.Sprint(math.Pow10(e))
	}
	return "10" + superscript(e)
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

// newLegend is a legend in a smaller type than gonum's 12 pt default, which
// crowds a chart of this size.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(plot.DefaultFont, 9)
	l.ThumbnailWidth = vg.Points(24)
	l.XOffs, l.YOffs = vg.Points(6), -vg.Points(4)
	return l
}

// legendPlotter draws a legend as a plotter, that is inside the data area.
// Plot.Legend is placed against the whole plot area, which on a padded log
// axis puts it above the data area, over the title.
type legendPlotter struct{ *plot.Legend }

func (l legendPlotter) Plot(c draw.Canvas, _ *plot.Plot) { l.Draw(c) }
