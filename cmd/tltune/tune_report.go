package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
	"tltune/results"
	"tltune/tuner"
)

// progress draws a bar on stderr while tuning, only when stderr is a
// terminal: logs and pipes get nothing.
type progress struct {
	bar   *progressbar.ProgressBar
	label string        // the shape, e.g. "[3/30] gemm.nn f32 64x64x64"
	eta   func() string // a sweep's remaining time; nil for one shape
}

// newProgress shows the bar at once, before the inputs are prepared, so a
// terminal never sits blank; label names the shape (and its place in a
// sweep), eta the sweep's remaining time.
func newProgress(w io.Writer, quiet bool, budget int, label string, eta func() string) *progress {
	f, ok := w.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	max := budget
	if max == 0 {
		max = -1 // unknown until the tuner says: a spinner
	}
	p := &progress{label: label, eta: eta}
	p.bar = progressbar.NewOptions(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(p.description("preparing the inputs")),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
	return p
}

// description is the bar's text: the shape, what is going on, and the
// sweep's ETA.
func (p *progress) description(state string) string {
	d := p.label + ": " + state
	if p.eta != nil {
		d += "; " + p.eta()
	}
	return d
}

func (p *progress) update(s tuner.Progress) {
	if p.bar == nil {
		return
	}
	if s.Planned > 0 && p.bar.GetMax() != s.Planned {
		p.bar.ChangeMax(s.Planned)
	}
	state := "tuning"
	if s.Best != nil {
		state = "best " + speak.Duration(s.Best.Median())
	}
	p.bar.Describe(p.description(state))
	p.bar.Set(s.Done)
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

// tuneReport is the result of one tuning run, as printed and as --json.
type tuneReport struct {
	Run      int64  `json:"run"`
	Database string `json:"database"`
	Device   string `json:"device"`
	Driver   string `json:"driver"`
	speak.NamedProblem
	Batch      int            `json:"batch"`         // entries per timed launch
	BufferSets int            `json:"buffer_sets"`   // rotated over between launches
	BatchLimit string         `json:"batch_limited"` // what kept the plan from its goals; "" where nothing did
	Stop       string         `json:"stop"`
	Candidates int            `json:"candidates"`
	Counts     map[string]int `json:"outcomes"`
	Raced      int            `json:"raced"`   // ok configurations whose timing stopped early (partial samples)
	Retimed    int            `json:"retimed"` // the fastest, timed again in full at the end
	PrunedBy   map[string]int `json:"pruned_by_rule"`
	CopyGBs    float64        `json:"copy_ceiling_gbs,omitempty"`
	Top        []rankedConfig `json:"top"`
	throughput
}

// rankedConfig is one of the fastest correct configurations: its
// timing as every JSON document gives one (results.Timing).
type rankedConfig struct {
	Params    tuning.Params  `json:"params"`
	Config    string         `json:"config"` // params in the compact form reports print (tltune help gemm explains it)
	Timing    results.Timing `json:"timing"`
	Samples   int            `json:"samples"`
	Raced     bool           `json:"raced"`                       // the timing stopped early, clearly slower than the best: partial samples
	Retimed   bool           `json:"retimed"`                     // timed again in full at the end of the search
	BWPercent float64        `json:"bandwidth_percent,omitempty"` // of the measured copy ceiling
	VerifyErr float64        `json:"verify_error"`
	AboveRoof string         `json:"above_roof,omitempty"` // the warning when the rates exceed the device's ceilings
}

func (j *shapeJob) report(c *context, rep *tuner.Report) error {
	run, plan := j.run, j.plan
	r := tuneReport{
		Run: run.stored.ID, Database: run.store.Path(), Device: run.info.Name, Driver: run.info.Driver,
		NamedProblem: speak.Named(j.recipe.Spec().Problem()), Batch: plan.Batch, BufferSets: plan.Sets, BatchLimit: plan.Limited, Stop: string(rep.Stop),
		Candidates: rep.Candidates, Counts: outcomeCounts(rep), Raced: rep.Raced, Retimed: rep.Retimed,
		PrunedBy: rep.PrunedByRule, CopyGBs: run.ceilings.CopyGBS,
	}
	for _, o := range rep.Top(run.flags.top) {
		r.Top = append(r.Top, j.ranked(o))
	}
	r.add(rep, j.builds)
	r.PTX = run.copts.PTX
	if run.flags.asJSON {
		return speak.WriteJSON(c.stdout, r)
	}
	return r.write(c.stdout)
}

// outcomeCounts are the report's counts by outcome name.
func outcomeCounts(rep *tuner.Report) map[string]int {
	counts := map[string]int{}
	for k, n := range rep.Counts {
		counts[string(k)] = n
	}
	return counts
}

// ranked is an OK outcome with its rates for one timed launch.
func (j *shapeJob) ranked(o tuner.Outcome) rankedConfig {
	batch, s := j.plan.Batch, o.Result.Summary
	flops, bytes := float64(j.recipe.FLOPs(batch)), float64(j.recipe.Bytes(batch))
	t := results.Timing{MedianNS: s.Median, MinNS: s.Min, MaxNS: s.Max, IQRNS: s.IQR,
		CILowNS: finiteOr(s.Lo, s.Min), CIHighNS: finiteOr(s.Hi, s.Max), GFLOPS: flops / s.Median, GBS: bytes / s.Median}
	rc := rankedConfig{Params: o.Params, Config: o.Params.String(), Timing: t, Samples: s.N, Raced: o.Raced(), Retimed: o.Retimed, VerifyErr: o.Verify.RelErr}
	if copyGBs := j.run.ceilings.CopyGBS; copyGBs > 0 {
		rc.BWPercent = 100 * t.GBS / copyGBs
	}
	rc.AboveRoof = j.run.ceilings.AboveRoof(j.recipe.Spec().Problem(), t.GFLOPS, t.GBS)
	return rc
}

func (r *tuneReport) write(w io.Writer) error {
	fmt.Fprintf(w, "%s on %s (driver %s): %d entries per timed launch, %d buffer set(s)\n", r.Name, r.Device, r.Driver, r.Batch, r.BufferSets)
	if r.BatchLimit != "" {
		fmt.Fprintf(w, "timed launches short of their goals: %s\n", r.BatchLimit)
	}
	if note := speak.PrecisionNote(r.Precision); note != "" {
		fmt.Fprintln(w, note)
	}
	fmt.Fprintln(w)
	if len(r.Top) > 0 {
		if err := r.writeTop(w); err != nil {
			return err
		}
	}
	for i, rc := range r.Top {
		if rc.AboveRoof != "" {
			fmt.Fprintf(w, "#%d %s\n", i+1, rc.AboveRoof)
		}
	}
	fmt.Fprintf(w, "\noutcomes: %s (stopped: %s)\n", outcomeLine(r.Counts), r.Stop)
	if r.Raced > 0 || r.Retimed > 0 {
		fmt.Fprintf(w, "racing: %d stopped early, clearly slower than the best (partial samples); %d of the fastest re-timed in full\n", r.Raced, r.Retimed)
	}
	if len(r.PrunedBy) > 0 {
		fmt.Fprintf(w, "pruned by rule: %s\n", speak.Counts(r.PrunedBy, nil))
	}
	r.throughput.write(w)
	if r.CopyGBs == 0 {
		fmt.Fprintf(w, "no bandwidth ceiling stored for this device: run 'tltune peak --device %q' for %% of peak\n", r.Device)
	}
	_, err := fmt.Fprintf(w, "stored as run %d in %s ('tltune table' exports the best configuration)\n", r.Run, r.Database)
	return err
}

func (r *tuneReport) writeTop(w io.Writer) error {
	t := speak.Table{Header: []string{"#", "configuration", "median", "95% CI", "GFLOP/s", "GB/s", "% copy BW", "rel. error"},
		Right: speak.Columns("rlrrrrrr")}
	for i, rc := range r.Top {
		bw := "-"
		if rc.BWPercent > 0 {
			bw = speak.Number(rc.BWPercent)
		}
		config := rc.Params.For(r.Op)
		if rc.Raced {
			config += " (raced)"
		}
		t.Append(fmt.Sprint(i+1), config, speak.Duration(rc.Timing.MedianNS),
			speak.Duration(rc.Timing.CILowNS)+" – "+speak.Duration(rc.Timing.CIHighNS),
			speak.Number(rc.Timing.GFLOPS), speak.Number(rc.Timing.GBS), bw, fmt.Sprintf("%.2g", rc.VerifyErr))
	}
	return t.Write(w)
}

// outcomeLine lists outcome counts in the taxonomy's order.
func outcomeLine(counts map[string]int) string {
	order := make([]string, len(tuner.Kinds))
	for i, k := range tuner.Kinds {
		order[i] = string(k)
	}
	return speak.Counts(counts, order)
}
