package compare

import (
	"encoding/json"

	"tltune/internal/speak"
)

// The JSON form of a report (tltune regress --json; docs/json.md). An
// interval end that is unbounded (too few samples) is null: JSON has no
// infinity.

type jsonSummary struct {
	MedianNS float64  `json:"median_ns"`
	CILowNS  *float64 `json:"ci_low_ns"`
	CIHighNS *float64 `json:"ci_high_ns"`
	Samples  int      `json:"samples"`
}

type jsonResult struct {
	speak.NamedProblem
	Baseline   jsonSummary `json:"baseline"`
	Current    jsonSummary `json:"current"`
	Ratio      float64     `json:"ratio"`
	RatioLow   *float64    `json:"ratio_ci_low"`
	RatioHigh  *float64    `json:"ratio_ci_high"`
	P          float64     `json:"p"`
	NoiseFloor float64     `json:"noise_floor"`
	Verdict    string      `json:"verdict"`
	EnvChanges []EnvChange `json:"env_changes"`
	Warnings   []string    `json:"warnings"`
}

// JSONUnmatched is a problem measured in one run only, or without samples.
type JSONUnmatched struct {
	speak.NamedProblem
	MedianNS float64 `json:"median_ns"`
}

// JSONReport is the comparison as JSON documents give it; the caller adds
// the runs.
type JSONReport struct {
	Threshold   float64         `json:"threshold"`
	Alpha       float64         `json:"alpha"`
	Regressed   bool            `json:"regressed"`
	Results     []jsonResult    `json:"results"`
	New         []JSONUnmatched `json:"new"`
	Gone        []JSONUnmatched `json:"gone"`
	NotCompared []JSONUnmatched `json:"not_compared"`
}

// JSON is the report in its JSON form.
func (rep *Report) JSON() JSONReport {
	j := JSONReport{Threshold: rep.Options.Threshold, Alpha: rep.Options.Alpha, Regressed: rep.Regressed(),
		Results: []jsonResult{}, New: unmatchedJSON(rep.New), Gone: unmatchedJSON(rep.Gone), NotCompared: unmatchedJSON(rep.Unsampled)}
	for _, r := range rep.Results {
		j.Results = append(j.Results, jsonResult{
			NamedProblem: speak.Named(r.Problem), Baseline: summaryJSON(r.Baseline), Current: summaryJSON(r.Current),
			Ratio: r.Ratio, RatioLow: speak.Finite(r.RatioLo), RatioHigh: speak.Finite(r.RatioHi), P: r.P, NoiseFloor: r.NoiseFloor,
			Verdict: r.Verdict.String(), EnvChanges: nonNil(r.EnvChanges), Warnings: nonNil(r.Warnings),
		})
	}
	return j
}

func summaryJSON(s Summary) jsonSummary {
	return jsonSummary{MedianNS: s.Median, CILowNS: speak.Finite(s.Lo), CIHighNS: speak.Finite(s.Hi), Samples: s.N}
}

func unmatchedJSON(us []Unmatched) []JSONUnmatched {
	out := make([]JSONUnmatched, len(us))
	for i, u := range us {
		out[i] = JSONUnmatched{speak.Named(u.Problem), u.MedianNS}
	}
	return out
}

// nonNil makes an empty list [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalJSON writes an environment change as {"field", "old", "new"}.
func (c EnvChange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Field string `json:"field"`
		Old   string `json:"old"`
		New   string `json:"new"`
	}{c.Field, c.Old, c.New})
}
