package compare

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"tltune/internal/speak"
)

// The JUnit XML schema as CI systems (Jenkins, GitLab, GitHub test
// reporters) read it: one test case per shape, a failure element on a
// confirmed regression only, so a red test is exactly an exit status 1.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"` // the current median in seconds (the baseline's for a gone shape)
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitSkipped marks a shape that was not decided: noisy, or measured in
// one run only.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

// junitText is element text kept as CDATA, so its line breaks survive
// (chardata would escape them as &#xA;).
type junitText struct {
	Text string `xml:",cdata"`
}

const junitSuiteName = "tltune regress"

// WriteJUnit writes rep as JUnit XML for CI test reporters: one test case
// per problem, with the kernel's median as its time. A confirmed
// regression fails; a noisy shape, and a problem measured in one run only
// or without samples, is skipped with the reason, so a reporter shows it
// rather than a silent pass.
func WriteJUnit(w io.Writer, rep *Report) error {
	suite := junitSuite{
		Name: junitSuiteName,
		Properties: []junitProperty{
			{"threshold", fmt.Sprint(rep.Options.Threshold)},
			{"alpha", fmt.Sprint(rep.Options.Alpha)},
		},
	}
	for _, r := range rep.Results {
		suite.Cases = append(suite.Cases, junitCaseOf(r))
		if r.Verdict == Slower {
			suite.Failures++
		}
		if r.Verdict == Noisy {
			suite.Skipped++
		}
	}
	for _, u := range []struct {
		why  string
		list []Unmatched
	}{{"new: not measured in the baseline run", rep.New}, {"gone: not measured in the current run (dropped, or no configuration ran correctly)", rep.Gone},
		{"not compared: a run has no raw samples of it", rep.Unsampled}} {
		for _, p := range u.list {
			suite.Cases = append(suite.Cases, junitCase{ClassName: p.Problem.Op, Name: p.Problem.String(),
				Time: seconds(p.MedianNS), Skipped: &junitSkipped{Message: u.why}})
			suite.Skipped++
		}
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: junitSuiteName, Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", xml.Header, out)
	return err
}

func junitCaseOf(r Result) junitCase {
	c := junitCase{ClassName: r.Problem.Op, Name: r.Problem.String(), Time: seconds(r.Current.Median)}
	// A failing case carries the details in its failure, which is what
	// reporters show; a passing one in system-out.
	switch r.Verdict {
	case Noisy:
		c.Skipped = &junitSkipped{Message: fmt.Sprintf("noisy: ratio %.3f %s, p %s, noise %s: re-measure to decide",
			r.Ratio, formatInterval(r.RatioLo, r.RatioHi), formatP(r.P), speak.Percent(r.NoiseFloor))}
		fallthrough
	case Same, Faster:
		c.SystemOut = &junitText{describe(r)}
		return c
	}
	c.Failure = &junitFailure{
		Type:    "regression",
		Message: fmt.Sprintf("slower: ratio %.3f %s, p %s", r.Ratio, formatInterval(r.RatioLo, r.RatioHi), formatP(r.P)),
		Body:    describe(r),
	}
	return c
}

// seconds is a time in ns as JUnit's seconds.
func seconds(ns float64) string { return strconv.FormatFloat(ns/1e9, 'f', 9, 64) }

// describe is the full result of one shape as "name: value" lines, the
// table row in long form.
func describe(r Result) string {
	var b strings.Builder
	for i, cell := range row(r) {
		if cell != "" {
			fmt.Fprintf(&b, "%s: %s\n", header[i], cell)
		}
	}
	for _, c := range r.EnvChanges {
		fmt.Fprintf(&b, "%s changed: %q → %q\n", c.Field, c.Old, c.New)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}
