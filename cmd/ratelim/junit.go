package main

// The JUnit XML a check writes with --junit, as CI systems read it.

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// The JUnit XML schema that CI systems read: a testsuite per scenario, a
// testcase per checked expectation, a failure element for each that
// failed, an error element for each file or run that could not be checked,
// a skipped element for each a live check could not observe.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr,omitempty"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr,omitempty"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

// junitSkipped is a case a live check did not check, and why.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// writeJUnit writes a suite per entry, its cases lines[i].
func writeJUnit(w io.Writer, entries []checkEntry, lines [][]checkLine) error {
	doc := junitSuites{}
	for i, e := range entries {
		s := junitSuite{Name: e.label}
		class := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(e.label), ".yaml"), ".yml")
		seen := map[string]int{}
		for _, l := range lines[i] {
			// The case is named by its claim, not its line or what it
			// got, so that a CI system tracks one case across runs whose
			// figures change and edits that move lines.
			name := l.name
			if seen[l.name]++; seen[l.name] > 1 {
				name = fmt.Sprintf("%s #%d", l.name, seen[l.name])
			}
			c := junitCase{Name: name, Classname: class}
			switch {
			case l.Error != "":
				c.Error = &junitFailure{Message: l.Error, Body: l.Error}
				s.Errors++
			case l.Skipped != "":
				c.Skipped = &junitSkipped{Message: l.Skipped}
				s.Skipped++
			case !l.OK:
				got := l.outcome.GotText
				if got == "" {
					got = strconv.FormatFloat(l.Got, 'g', -1, 64)
				}
				c.Failure = &junitFailure{Message: "got " + got, Body: fmt.Sprintf("%s:%d: %s", l.File, l.Line, l.Text)}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
