// Package chart draws the charts of tltune: a roofline of measured kernels
// against measured ceilings, and the history of one shape across runs.
//
// Inputs are plain structs (Roofline, History) that the command line fills
// from the results store; this package never reads the store. Charts are
// drawn with gonum.org/v1/plot and written as SVG, PNG or PDF, chosen by the
// file extension.
package chart

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A Chart builds a gonum plot from its data. Roofline and History are
// Charts.
type Chart interface {
	Plot() (*plot.Plot, error)
}

// Page size of every chart: wide enough for a legend beside labelled
// points, and the proportions of a slide.
const (
	width  = 20 * vg.Centimeter
	height = 13 * vg.Centimeter
	pngDPI = 150 // the default 96 makes 10 pt labels blurry
	margin = 3 * vg.Millimeter
)

// Save draws c into the file at path; the extension (.svg, .png, .pdf)
// picks the format.
func Save(path string, c Chart) (err error) {
	format, err := FormatOf(path)
	if err != nil {
		return err // before creating the file
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return Write(f, format, c)
}

// FormatOf returns the format that the extension of path names: "svg",
// "png" or "pdf", in any case. Callers check a path with it before doing
// the work of a chart.
func FormatOf(path string) (string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if _, err := newCanvas(format); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return format, nil
}

// Write draws c in format ("svg", "png" or "pdf") to w.
func Write(w io.Writer, format string, c Chart) error {
	canvas, err := newCanvas(format)
	if err != nil {
		return err
	}
	p, err := c.Plot()
	if err != nil {
		return err
	}
	p.Draw(page(canvas))
	_, err = canvas.WriteTo(w)
	return err
}

// page is the area of canvas a chart is drawn in: gonum draws the title
// flush with the top edge, so keep a margin all round.
func page(canvas vg.CanvasSizer) draw.Canvas {
	return draw.Crop(draw.New(canvas), margin, -margin, margin, -margin)
}

func newCanvas(format string) (vg.CanvasWriterTo, error) {
	switch format {
	case "svg":
		return vgsvg.New(width, height), nil
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}, nil
	case "pdf":
		return vgpdf.New(width, height), nil
	}
	return nil, fmt.Errorf("chart format %q not supported: name the file .svg, .png or .pdf", format)
}
