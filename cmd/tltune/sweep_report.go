package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/tuner"
)

// What a sweep did with a shape.
const (
	actionTuned      = "tuned"
	actionRemeasured = "remeasured"
	actionSkipped    = "skipped"
)

// sweepReport is the result of a sweep, as printed and as --json.
type sweepReport struct {
	Run      int64        `json:"run"`
	Database string       `json:"database"`
	Device   string       `json:"device"`
	Devices  []string     `json:"devices,omitempty"` // the ids of the devices, when the sweep had several
	Wall     float64      `json:"wall_seconds"`      // from the first shape begun to the last finished
	Driver   string       `json:"driver"`
	Suite    string       `json:"suite"`
	Shard    string       `json:"shard,omitempty"` // I/N when the sweep ran one share of the suite
	Mode     string       `json:"mode"`            // "retune" or "remeasure"
	CopyGBs  float64      `json:"copy_ceiling_gbs,omitempty"`
	Shapes   []sweepShape `json:"shapes"`
	// Every shape's evaluations and time.
	throughput
}

// sweepShape is what became of one shape of the suite.
type sweepShape struct {
	speak.NamedProblem

	Action  string         `json:"action"` // tuned, remeasured or skipped
	Best    *rankedConfig  `json:"best,omitempty"`
	Stored  *storedBest    `json:"stored,omitempty"` // remeasured: what the store held
	Counts  map[string]int `json:"outcomes,omitempty"`
	Stop    string         `json:"stop,omitempty"`
	Why     string         `json:"why,omitempty"`    // why there is no best
	Seconds float64        `json:"seconds"`          // spent on the shape
	Device  string         `json:"device,omitempty"` // the device that swept it, when the sweep had several
}

// storedBest is the stored best configuration a --remeasure timed again.
type storedBest struct {
	Run      int64         `json:"run"`
	MedianNs float64       `json:"median_ns"`
	Params   tuning.Params `json:"params"`
}

func newSweepShape(spec kernels.Spec) sweepShape {
	return sweepShape{NamedProblem: speak.Named(spec.Problem())}
}

// failed reports whether the shape was evaluated and nothing ran
// correctly: for a stored best, it no longer does.
func (s *sweepShape) failed() bool { return s.Action != actionSkipped && s.Best == nil }

func (s *sweep) newReport() *sweepReport {
	mode := "retune"
	if s.flags.remeasure {
		mode = "remeasure"
	}
	r := s.lead()
	return &sweepReport{Run: r.stored.ID, Database: r.store.Path(), Device: r.info.Name, Driver: r.info.Driver,
		Devices: s.deviceIDs(), Suite: s.suite.Name, Shard: s.flags.shard, Mode: mode, CopyGBs: r.ceilings.CopyGBS}
}

// writeLine prints the one-line summary of the shape.
func (s *sweepShape) writeLine(w io.Writer) {
	if s.Best == nil {
		where := ""
		if s.Device != "" {
			where = " (on " + s.Device + ")"
		}
		fmt.Fprintf(w, "%s: %s%s\n", s.Name, s.problem(), where)
		return
	}
	b := s.Best
	fmt.Fprintf(w, "%s: %s, %s, %s, %s%s [%s]\n", s.Name, b.Params.For(s.Op), speak.Duration(b.Timing.MedianNS),
		speak.Rate(b.Timing.GFLOPS, "FLOP/s"), speak.Rate(b.Timing.GBS, "B/s"), s.storedNote(), s.outcomes())
	if b.AboveRoof != "" {
		fmt.Fprintln(w, b.AboveRoof)
	}
}

// problem says why the shape has no best; a stored best that failed says
// which configuration it was.
func (s *sweepShape) problem() string {
	switch {
	case s.Stored != nil:
		return fmt.Sprintf("the stored best %s (run %d) failed: %s", s.Stored.Params.For(s.Op), s.Stored.Run, s.Why)
	case s.Action == actionTuned && s.evaluated() == 0:
		return "nothing to evaluate; " + s.Why
	case s.Action == actionTuned:
		return "no configuration ran correctly; " + s.Why
	}
	return s.Why
}

// evaluated counts the shape's configurations that were built and run.
func (s *sweepShape) evaluated() int {
	n := 0
	for kind, count := range s.Counts {
		if kind != string(tuner.Pruned) {
			n += count
		}
	}
	return n
}

func (s *sweepShape) storedNote() string {
	if s.Stored == nil {
		return ""
	}
	return fmt.Sprintf(" (stored %s in run %d)", speak.Duration(s.Stored.MedianNs), s.Stored.Run)
}

// outcomes counts the evaluations in the taxonomy's order, says why a
// search stopped, and how long the shape took.
func (s *sweepShape) outcomes() string {
	line := outcomeLine(s.Counts)
	if s.Action == actionTuned {
		line += "; stopped: " + s.Stop
	}
	return line + "; " + s.took()
}

// took is the time spent on the shape, and where when the sweep had
// several devices.
func (s *sweepShape) took() string {
	if s.Device == "" {
		return speak.Duration(s.Seconds * 1e9)
	}
	return speak.Duration(s.Seconds*1e9) + " on " + s.Device
}

func (r *sweepReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return speak.WriteJSON(w, r)
	}
	suite := r.Suite
	if r.Shard != "" {
		suite += " shard " + r.Shard
	}
	devices := ""
	if len(r.Devices) > 0 {
		devices = ", devices " + strings.Join(r.Devices, ", ")
	}
	fmt.Fprintf(w, "\n%s, %s on %s (driver %s%s):\n", suite, r.Mode, r.Device, r.Driver, devices)
	if err := r.writeTable(w); err != nil {
		return err
	}
	total := 0.0
	for _, s := range r.Shapes {
		total += s.Seconds
	}
	if r.TimeSplit != nil {
		r.throughput.write(w)
	}
	took := speak.Duration(total * 1e9)
	if len(r.Devices) > 0 {
		took = fmt.Sprintf("%s on %d devices (%s of device time)", speak.Duration(r.Wall*1e9), len(r.Devices), took)
	}
	_, err := fmt.Fprintf(w, "%d shape(s) in %s, stored as run %d in %s ('tltune regress --baseline TAG|RUN' compares it)\n",
		len(r.Shapes), took, r.Run, r.Database)
	return err
}

// writeTable prints a row per shape; the stored median is shown where
// the sweep re-measured.
func (r *sweepReport) writeTable(w io.Writer) error {
	const storedColumn = 4
	header := []string{"shape", "action", "best configuration", "median", "stored", "GFLOP/s", "GB/s", "time"}
	right := speak.Columns("lllrrrrr")
	drop := func(row []string) []string { return row }
	if r.Mode != "remeasure" {
		drop = func(row []string) []string { return slices.Delete(row, storedColumn, storedColumn+1) }
		right = slices.Delete(right, storedColumn, storedColumn+1)
	}
	t := speak.Table{Header: drop(header), Right: right}
	for _, s := range r.Shapes {
		t.Append(drop(s.row())...)
	}
	if err := t.Write(w); err != nil {
		return err
	}
	for _, s := range r.Shapes {
		if s.Best != nil && s.Best.AboveRoof != "" {
			fmt.Fprintln(w, s.Best.AboveRoof)
		}
	}
	r.writePrecisionNotes(w)
	return nil
}

// writePrecisionNotes says once, under the table, what each relaxed
// precision of the shapes (named with it) means.
func (r *sweepReport) writePrecisionNotes(w io.Writer) {
	var said []string
	for _, s := range r.Shapes {
		if note := speak.PrecisionNote(s.Precision); note != "" && !slices.Contains(said, s.Precision) {
			said = append(said, s.Precision)
			fmt.Fprintln(w, note)
		}
	}
}

// row is the shape's row of the final table.
func (s *sweepShape) row() []string {
	row := []string{s.Name, s.Action, "-", "-", "-", "-", "-", s.took()}
	if s.failed() {
		row[2] = "none correct"
	}
	if s.Stored != nil {
		row[4] = speak.Duration(s.Stored.MedianNs)
	}
	if b := s.Best; b != nil {
		row[2], row[3], row[5], row[6] = b.Params.For(s.Op), speak.Duration(b.Timing.MedianNS), speak.Number(b.Timing.GFLOPS), speak.Number(b.Timing.GBS)
	}
	return row
}

// measuredAny reports whether the sweep evaluated a shape, or had none to
// evaluate.
func (r *sweepReport) measuredAny() bool {
	for _, s := range r.Shapes {
		if s.Action != actionSkipped {
			return true
		}
	}
	return len(r.Shapes) == 0
}

// verdict is the exit status: 1 when a shape had no correct configuration,
// above all when a stored best now computes a wrong result.
func (r *sweepReport) verdict(c *context) int {
	var failed []string
	for _, s := range r.Shapes {
		if s.failed() {
			failed = append(failed, s.Name)
		}
	}
	switch {
	case len(failed) > 0 && r.Mode == "remeasure":
		fmt.Fprintf(c.stderr, "tltune sweep: %d shape(s) no longer run their stored best correctly: %s\n", len(failed), strings.Join(failed, "; "))
		return exitRuntime
	case len(failed) > 0:
		fmt.Fprintf(c.stderr, "tltune sweep: %d shape(s) have no correct configuration: %s\n", len(failed), strings.Join(failed, "; "))
		return exitRuntime
	}
	return exitOK
}
