package report

import (
	"slices"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// shown is r as the page shows it: every string that came from input
// (the scenario's name, clients' names and keys, which a trace takes from
// an access log, and the findings, expectations and events that name
// them) escaped by escape.Text, so that no control or bidi character
// reaches the page; html/template then escapes the markup as usual. The
// figures are r's; r itself is not changed.
func shown(r *sim.Result) *sim.Result {
	s := *r
	s.Scenario = escape.Text(r.Scenario)
	s.Clients = slices.Clone(r.Clients)
	for i := range s.Clients {
		s.Clients[i].Name = escape.Text(s.Clients[i].Name)
		s.Clients[i].Key = escape.Text(s.Clients[i].Key)
	}
	s.Keys = slices.Clone(r.Keys)
	for i := range s.Keys {
		s.Keys[i].Key = escape.Text(s.Keys[i].Key)
	}
	// Findings made from r, as the page would make them, before their
	// names are escaped: made from s they would be escaped twice.
	findings := r.Findings
	if len(findings) == 0 {
		findings = sim.Findings(r)
	}
	s.Findings = slices.Clone(findings)
	for i := range s.Findings {
		f := &s.Findings[i]
		f.Text, f.Client, f.Key = escape.Text(f.Text), escape.Text(f.Client), escape.Text(f.Key)
	}
	s.Expectations = slices.Clone(r.Expectations)
	for i := range s.Expectations {
		e := &s.Expectations[i]
		e.Text, e.Found = escape.Text(e.Text), escape.Text(e.Found)
	}
	s.Events = slices.Clone(r.Events)
	for i := range s.Events {
		s.Events[i].Text = escape.Text(s.Events[i].Text)
	}
	s.Faults = slices.Clone(r.Faults)
	for i := range s.Faults {
		s.Faults[i].Detail = escape.Text(s.Faults[i].Detail)
	}
	return &s
}
