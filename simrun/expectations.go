package simrun

// A scenario file's expect: lines in a run's result: evaluated on the
// run alone where they can be (FillExpectations), and summarized under
// the table (WriteExpectations), as sim, vs, report and live print them.

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// FillExpectations evaluates the file's expect: lines that need no other
// run (no with:) on r, records them in r.Expectations, and returns how many
// failed and were skipped. A malformed expectation is bad input: the
// error is scenarios.Evaluate's.
func FillExpectations(file *scenarios.File, r *sim.Result) (failed, skipped int, err error) {
	label := Label(file)
	for i := range file.Expect {
		e := &file.Expect[i]
		if len(e.With) > 0 {
			skipped++
			continue
		}
		outs, err := scenarios.Evaluate(label, e, r)
		if err != nil {
			return 0, 0, err
		}
		for _, o := range outs {
			r.Expectations = append(r.Expectations, sim.ExpectationResult{Text: o.Claim(), OK: o.OK, Got: o.Got, Found: o.GotText})
			if !o.OK {
				failed++
			}
		}
	}
	return failed, skipped, nil
}

// OtherRuns says that n expectations were not checked because their with:
// asks for other runs: "1 more needs other runs (with: …)".
func OtherRuns(n int) string {
	if n == 1 {
		return "1 more needs other runs (with: …)"
	}
	return fmt.Sprintf("%d more need other runs (with: …)", n)
}

// WriteExpectations is the table's summary of r.Expectations, the file's
// expect: lines: a count, and each that failed as check prints it (file and
// line, the claim, what was got), wrapped at 80 columns.
func WriteExpectations(w io.Writer, file *scenarios.File, r *sim.Result, skipped int) {
	if len(r.Expectations) == 0 && skipped == 0 {
		return
	}
	ok := 0
	for _, e := range r.Expectations {
		if e.OK {
			ok++
		}
	}
	label := Label(file)
	summary := fmt.Sprintf("expect: %d of %d hold", ok, len(r.Expectations))
	if skipped > 0 {
		check := "ratelim check " + ShellWord(label)
		if file.Path == "stdin" {
			check = "ratelim check FILE"
		}
		summary += "; " + OtherRuns(skipped) + ":"
		// The command whole, on a line of its own if the line is full.
		if utf8.RuneCountInString(summary)+1+utf8.RuneCountInString(check) <= 80 {
			summary += " " + check
		} else {
			summary += "\n  " + check
		}
	}
	fmt.Fprintf(w, "\n%s\n", summary)
	// The failures again, with their lines: r.Expectations keeps the
	// claims alone, for the result's readers.
	for i := range file.Expect {
		e := &file.Expect[i]
		if len(e.With) > 0 {
			continue
		}
		outs, err := scenarios.Evaluate(label, e, r)
		if err != nil {
			continue // FillExpectations refused it before the table
		}
		for _, o := range outs {
			if o.OK {
				continue
			}
			const prefix, indent = "  FAIL ", "       "
			for j, line := range report.Wrap(escape.Text(fmt.Sprintf("%s:%d: %s", label, e.Line, o.String())), 80-len(prefix)) {
				if j == 0 {
					fmt.Fprintln(w, prefix+line)
				} else {
					fmt.Fprintln(w, indent+line)
				}
			}
		}
	}
}

// ShellWord is s as a POSIX shell reads it back: as is when it is plain,
// else single-quoted; the commands a run's output suggests are written
// with it, here and in cmd/ratelim.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
