package compare

import (
	"fmt"
	"io"
	"math"
	"strings"

	"tltune/internal/speak"
)

// The columns of the table and Markdown renderers, one per field of row.
var header = []string{"shape", "baseline", "current", "ratio", "ratio CI", "p", "noise", "verdict", "env"}

// numeric marks the columns that are right-aligned.
var numeric = []bool{false, true, true, true, true, true, true, false, false}

// row formats one result as the cells of header.
func row(r Result) []string {
	return []string{
		r.Problem.String(),
		formatSummary(r.Baseline),
		formatSummary(r.Current),
		fmt.Sprintf("%.3f", r.Ratio),
		formatInterval(r.RatioLo, r.RatioHi),
		formatP(r.P),
		speak.Percent(r.NoiseFloor),
		r.Verdict.String(),
		envFieldNames(r.EnvChanges),
	}
}

// WriteTable writes rep as a plain-text table for a terminal, followed by
// the notes (summary, environment changes, warnings).
func WriteTable(w io.Writer, rep *Report) error {
	t := speak.Table{Header: header, Right: numeric}
	for _, r := range rep.Results {
		t.Append(row(r)...)
	}
	if err := t.Write(w); err != nil {
		return err
	}
	for _, n := range notes(rep) {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown writes rep as a GitHub-flavoured Markdown table with the
// notes as a list, e.g. for a CI job summary or a pull-request comment.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for _, right := range numeric {
		if right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range rep.Results {
		b.WriteString("| " + strings.Join(row(r), " | ") + " |\n")
	}
	b.WriteString("\n")
	for _, n := range notes(rep) {
		b.WriteString("- " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// notes are the lines printed under the table: the summary with the
// decision, each distinct environment change, and benchmath's warnings.
func notes(rep *Report) []string {
	out := []string{summaryLine(rep)}
	for _, u := range []struct {
		what string
		list []Unmatched
	}{{"new (only in the current run)", rep.New}, {"gone (only in the baseline)", rep.Gone}, {"not compared (no raw samples)", rep.Unsampled}} {
		if len(u.list) > 0 {
			names := make([]string, len(u.list))
			for i, p := range u.list {
				names[i] = p.Problem.String()
			}
			out = append(out, u.what+": "+strings.Join(names, ", "))
		}
	}
	out = append(out, envNotes(rep.Results)...)
	for _, r := range rep.Results {
		for _, w := range r.Warnings {
			out = append(out, fmt.Sprintf("%s: %s", r.Problem, w))
		}
	}
	return out
}

func summaryLine(rep *Report) string {
	var counts [len(verdictNames)]int
	for _, r := range rep.Results {
		counts[r.Verdict]++
	}
	decision := "no confirmed regression"
	if rep.Regressed() {
		decision = "REGRESSION CONFIRMED"
	}
	return fmt.Sprintf("%s: %d shapes, %d slower, %d faster, %d same, %d noisy (threshold %s, alpha %g, ratio = current/baseline median)",
		decision, len(rep.Results), counts[Slower], counts[Faster], counts[Same], counts[Noisy],
		speak.Percent(rep.Options.Threshold), rep.Options.Alpha)
}

// envNotes lists each distinct environment change once, in order of first
// appearance, with the number of shapes it affects.
func envNotes(results []Result) []string {
	var order []EnvChange
	count := map[EnvChange]int{}
	for _, r := range results {
		for _, c := range r.EnvChanges {
			if count[c] == 0 {
				order = append(order, c)
			}
			count[c]++
		}
	}
	out := make([]string, len(order))
	for i, c := range order {
		out[i] = fmt.Sprintf("%s changed: %q → %q (%d of %d shapes)", c.Field, c.Old, c.New, count[c], len(results))
	}
	return out
}

func envFieldNames(cs []EnvChange) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Field
	}
	return strings.Join(names, ",")
}

// formatSummary prints a median and the larger relative distance to its
// interval's ends, e.g. "20.01 µs ±0.6%".
func formatSummary(s Summary) string {
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		return speak.Duration(s.Median) + " ±∞"
	}
	spread := max(s.Hi/s.Median-1, 1-s.Lo/s.Median)
	return speak.Duration(s.Median) + " ±" + speak.Percent(spread)
}

func formatInterval(lo, hi float64) string {
	if math.IsInf(hi, 0) {
		return "[0, ∞)"
	}
	return fmt.Sprintf("[%.3f, %.3f]", lo, hi)
}

// formatP prints a p-value; values below 0.001 are not meaningful to more
// digits at the sample sizes of a benchmark.
func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
