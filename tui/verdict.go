package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// verdict is what a finished run teaches: the one-line lesson, the
// findings behind it, and the scenario's expectations checked on it. It
// is taken once, from the run's Result, when the run reaches its end.
type verdict struct {
	result   *sim.Result // the finished run's
	headline string
	findings []sim.Finding
	expect   []sim.ExpectationResult
	// noExpect says why the expectations were not checked, when they were
	// not: the viewer changed the algorithm or topology, and the file's
	// claims hold for the scenario as written.
	noExpect string
}

// newVerdict reads r; expect, if the scenario came with expectations and
// is playing as written, checks them. The headline is the first finding
// (sim.Headline), so the findings listed under it are the others.
func newVerdict(r *sim.Result, expect func(*sim.Result) []sim.ExpectationResult, pristine bool) *verdict {
	v := &verdict{result: r, headline: sim.Headline(r), findings: r.Findings}
	switch {
	case v.headline == "":
		v.headline = sim.Headline(r)
	case len(v.findings) > 0 && v.findings[0].Text == v.headline:
		v.findings = v.findings[1:]
	}
	switch {
	case expect == nil:
	case pristine:
		v.expect = expect(r)
	default:
		v.noExpect = "expectations not checked: they are for the scenario as written, not as changed with a or t"
	}
	return v
}

// verdictBody is the verdict's lines wrapped to w: the headline, each
// finding, then the expectations, failed ones first.
func (m Model) verdictBody(w int) []string {
	v := m.verdict
	if v == nil {
		return nil
	}
	var out []string
	add := func(lead, text string, style func(...string) string) {
		wrapped := strings.Split(ansi.Wrap(text, max(w-len([]rune(lead)), 10), ""), "\n")
		for i, part := range wrapped {
			l := lead
			if i > 0 {
				l = strings.Repeat(" ", len([]rune(lead)))
			}
			out = append(out, trunc(l+style(part), w))
		}
	}
	// The verdict names clients and keys: input, shown escaped.
	add("  ", escape.Text(v.headline), m.st.bold.Render)
	for _, f := range v.findings {
		add("  • ", escape.Text(f.Text), m.st.dim.UnsetForeground().Render)
	}
	if len(v.expect) > 0 {
		ok := 0
		for _, e := range v.expect {
			if e.OK {
				ok++
			}
		}
		style := m.st.done.Render
		if ok < len(v.expect) {
			style = m.st.errText.Render
		}
		add("  ", fmt.Sprintf("expect: %d of %d hold", ok, len(v.expect)), style)
		for _, want := range []bool{false, true} {
			for _, e := range v.expect {
				if e.OK != want {
					continue
				}
				mark := m.st.errText.Render("✗")
				if e.OK {
					mark = m.st.done.Render("✓")
				}
				add("    "+mark+" ", escape.Text(e.Text)+" (got "+e.GotText()+")", m.st.dim.UnsetForeground().Render)
			}
		}
	}
	if v.noExpect != "" {
		add("  ", v.noExpect, m.st.dim.Render)
	}
	return out
}

// verdictLines are the verdict's title and what fits of its body: side
// by side, each run's under its label.
func (m Model) verdictLines(l layout) []string {
	body := m.verdictBody(l.width)
	if m.vs != nil {
		b := m.other()
		body = append(append([]string{m.st.bold.Render("A  " + m.vs.labels[0])}, body...), m.st.bold.Render("B  "+m.vs.labels[1]))
		body = append(body, b.verdictBody(l.width)...)
	}
	detail := "what this run shows · e: the events"
	if len(body) > l.bottomRows {
		detail = fmt.Sprintf("%d more lines on a taller terminal · ", len(body)-l.bottomRows) + detail
	}
	return append([]string{m.title("VERDICT", detail, l.width)}, body[:min(len(body), l.bottomRows)]...)
}
