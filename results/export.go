package results

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"tltune/internal/speak"
)

// ExportFormats are the formats Export writes.
var ExportFormats = []string{"csv", "json"}

// Export writes the measurements of a run with the given outcomes (none:
// every outcome), raw samples included, as "csv" (one row per measurement,
// header first) or "json" (the run, its environment, its measurements and
// the counts of the configurations pruning rejected).
func (s *Store) Export(ctx context.Context, w io.Writer, runID int64, format string, outcomes []Outcome) error {
	if format != "csv" && format != "json" {
		return fmt.Errorf("export format %q: want one of %s", format, strings.Join(ExportFormats, ", "))
	}
	run, err := s.Run(ctx, runID)
	if err != nil {
		return err
	}
	ms, err := s.Measurements(ctx, runID)
	if err != nil {
		return err
	}
	if len(outcomes) > 0 {
		ms = slices.DeleteFunc(ms, func(m Measurement) bool { return !slices.Contains(outcomes, m.Outcome) })
	}
	if format == "csv" {
		return writeCSV(w, ms)
	}
	pruned, err := s.PrunedCounts(ctx, runID)
	if err != nil {
		return err
	}
	return writeJSON(w, run, ms, pruned)
}

// OutcomeNames lists every outcome, comma-separated.
func OutcomeNames() string {
	names := make([]string, len(Outcomes))
	for i, o := range Outcomes {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}

// ParseOutcomes reads a comma-separated list of outcomes, e.g. "ok" or
// "wrong_result,timeout".
func ParseOutcomes(list string) ([]Outcome, error) {
	var out []Outcome
	for _, name := range strings.Split(list, ",") {
		o := Outcome(strings.TrimSpace(name))
		if !slices.Contains(Outcomes, o) {
			return nil, fmt.Errorf("outcome %q: want one of %s", name, OutcomeNames())
		}
		out = append(out, o)
	}
	return out, nil
}

var csvHeader = []string{
	"run", "measurement", "op", "trans", "dtype", "acc", "m", "n", "k", "alpha", "beta", "atomic", "layout", "precision",
	"subgroup_size", "wg_x", "wg_y", "tile_m", "tile_n", "cm", "cn", "ck", "unroll", "batch_per_group", "stage_local",
	"vector_width", "stages", "local_pad", "local_swizzle", "local_epilogue", "split", "source_hash", "outcome", "message",
	"median_ns", "min_ns", "max_ns", "iqr_ns", "ci_low_ns", "ci_high_ns",
	"gflops", "gbs", "raced", "retimed", "verify_error", "seed", "measured_at", "samples", "samples_ns",
}

// writeCSV writes one row per measurement. Absent values (no timing, not
// verified) are empty cells; samples_ns holds the raw samples separated by
// spaces so that the file keeps one row per measurement.
func writeCSV(w io.Writer, ms []Measurement) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, m := range ms {
		c, p := m.Config, m.Config.Params
		timed := m.MedianNS > 0
		samples := make([]string, len(m.SamplesNS))
		for i, v := range m.SamplesNS {
			samples[i] = formatFloat(v)
		}
		cw.Write([]string{
			itoa(m.RunID), itoa(m.ID), c.Op, c.Trans, c.Dtype, c.Acc, itoa(c.M), itoa(c.N), itoa(c.K),
			c.Alpha, c.Beta, strconv.FormatBool(c.Atomic), c.Layout, speak.PrecisionName(c.Precision),
			itoa(p.SubgroupSize), itoa(p.WorkGroupSize[0]), itoa(p.WorkGroupSize[1]), itoa(p.Tile[0]), itoa(p.Tile[1]),
			itoa(p.Coopmatrix[0]), itoa(p.Coopmatrix[1]), itoa(p.Coopmatrix[2]), itoa(p.Unroll), itoa(p.BatchPerGroup),
			strconv.FormatBool(p.StageLocal), itoa(p.VectorWidth), itoa(p.Stages), itoa(p.LocalPad),
			strconv.FormatBool(p.LocalSwizzle), strconv.FormatBool(p.LocalEpilogue), itoa(max(p.Split, 1)), c.SourceHash, string(m.Outcome), m.Message,
			cell(timed, m.MedianNS), cell(timed, m.MinNS), cell(timed, m.MaxNS), cell(timed, m.IQRNS),
			cell(timed, m.CILowNS), cell(timed, m.CIHighNS), cell(timed, m.GFLOPS), cell(timed, m.GBS),
			strconv.FormatBool(m.Raced), strconv.FormatBool(m.Retimed), cell(m.Verified, m.VerifyError), itoa(m.Seed), formatTime(m.MeasuredAt),
			itoa(len(m.SamplesNS)), strings.Join(samples, " "),
		})
	}
	cw.Flush()
	return cw.Error()
}

func itoa[T int | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func cell(present bool, v float64) string {
	if !present {
		return ""
	}
	return formatFloat(v)
}

// The JSON export: a versioned document, one measurement per line.
const exportFormat = "tltune-run-export"

// A RunJSON is how every JSON document describes a run.
type RunJSON struct {
	ID          int64       `json:"id"`
	UUID        string      `json:"uuid,omitempty"`
	StartedAt   string      `json:"started_at"`
	FinishedAt  string      `json:"finished_at,omitempty"` // absent while running or when killed
	CommandLine string      `json:"command_line"`
	Tag         string      `json:"tag"`
	Op          string      `json:"op"`
	Status      RunStatus   `json:"status"`
	Env         Environment `json:"environment"`
}

// JSON is r as JSON documents describe it.
func (r Run) JSON() RunJSON {
	return RunJSON{ID: r.ID, UUID: r.UUID, StartedAt: formatTime(r.StartedAt), FinishedAt: optionalTime(r),
		CommandLine: r.CommandLine, Tag: r.Tag, Op: r.Op, Status: r.Status, Env: r.Env}
}

type jsonMeasurement struct {
	ID int64 `json:"id"`
	speak.NamedProblem
	Params      any       `json:"params"`
	SourceHash  string    `json:"source_hash"`
	Outcome     Outcome   `json:"outcome"`
	Message     string    `json:"message,omitempty"`
	Timing      *Timing   `json:"timing,omitempty"` // absent when nothing was timed
	Raced       bool      `json:"raced"`            // the timing stopped early: partial samples
	Retimed     bool      `json:"retimed"`          // the timing is the run's final re-timing
	Verified    bool      `json:"verified"`
	VerifyError *float64  `json:"verify_error,omitempty"` // absent when not verified or NaN
	Seed        int64     `json:"seed"`
	MeasuredAt  string    `json:"measured_at"`
	SamplesNS   []float64 `json:"samples_ns"`
}

// A Timing is how every JSON document gives the timing of one
// configuration: the median of its repeats with the median's confidence
// interval, the extremes and IQR, in ns, and the rates of one launch.
type Timing struct {
	MedianNS float64 `json:"median_ns"`
	MinNS    float64 `json:"min_ns"`
	MaxNS    float64 `json:"max_ns"`
	IQRNS    float64 `json:"iqr_ns"`
	CILowNS  float64 `json:"ci_low_ns"`
	CIHighNS float64 `json:"ci_high_ns"`
	GFLOPS   float64 `json:"gflops"`
	GBS      float64 `json:"gbs"`
}

// Timing is m's timing, nil when nothing was timed.
func (m Measurement) Timing() *Timing {
	if !(m.MedianNS > 0) {
		return nil
	}
	return &Timing{m.MedianNS, m.MinNS, m.MaxNS, m.IQRNS, m.CILowNS, m.CIHighNS, m.GFLOPS, m.GBS}
}

// prunedJSON is a pruning rule's count for one problem.
type prunedJSON struct {
	speak.NamedProblem
	Rule    string `json:"rule"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}

func writeJSON(w io.Writer, run Run, ms []Measurement, pruned []PrunedCount) error {
	head, err := json.Marshal(run.JSON())
	if err != nil {
		return err
	}
	lines := make([]string, len(ms))
	for i, m := range ms {
		line, err := json.Marshal(toJSON(m))
		if err != nil {
			return fmt.Errorf("measurement %d: %v", m.ID, err)
		}
		lines[i] = string(line)
	}
	body := ""
	if len(lines) > 0 {
		body = "\n    " + strings.Join(lines, ",\n    ") + "\n  "
	}
	counts := make([]prunedJSON, len(pruned))
	for i, p := range pruned {
		counts[i] = prunedJSON{speak.Named(p.Problem), p.Rule, p.Count, p.Example}
	}
	tail, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "{\n  \"format\": %q,\n  \"version\": 2,\n  \"run\": %s,\n  \"measurements\": [%s],\n  \"pruned\": %s\n}\n",
		exportFormat, head, body, tail)
	return err
}

func optionalTime(r Run) string {
	if r.FinishedAt.IsZero() {
		return ""
	}
	return formatTime(r.FinishedAt)
}

func toJSON(m Measurement) jsonMeasurement {
	c := m.Config
	j := jsonMeasurement{
		ID: m.ID, NamedProblem: speak.Named(c.Problem), Params: c.Params, SourceHash: c.SourceHash, Outcome: m.Outcome, Message: m.Message,
		Raced: m.Raced, Retimed: m.Retimed, Verified: m.Verified, Seed: m.Seed, MeasuredAt: formatTime(m.MeasuredAt), SamplesNS: m.SamplesNS,
	}
	if j.SamplesNS == nil {
		j.SamplesNS = []float64{}
	}
	j.Timing = m.Timing()
	if m.Verified && !math.IsNaN(m.VerifyError) {
		v := m.VerifyError
		j.VerifyError = &v
	}
	return j
}
