package plots

import (
	"strings"
	"testing"
)

// Focus gives the named clients a panel each, in its order, and adds up
// every other client, however few, into "others"; with every client
// named, there is no "others".
func TestFocusFoldsTheRest(t *testing.T) {
	r := mustRun(t, runaway())
	d, err := newTimelineData(r, "client")
	if err != nil {
		t.Fatal(err)
	}
	d.focus = []string{"scheduler", "bastion-3"}
	d.arrange(d.signatures())
	var names []string
	for _, p := range d.panels {
		names = append(names, p.name)
	}
	if got := strings.Join(names, ", "); got != "scheduler, bastion-3, others: 15 clients" {
		t.Fatalf("panels %s", got)
	}
	var sent int64
	for _, p := range d.panels {
		sent += p.total.Sent
	}
	var want int64
	for _, c := range r.Clients {
		want += c.Sent
	}
	if sent != want {
		t.Errorf("the panels add up to %d sent, the run sent %d", sent, want)
	}
	d.focus = nil
	for _, c := range r.Clients {
		d.focus = append(d.focus, c.Name)
	}
	d.arrange(d.signatures())
	if n := len(d.panels); n != maxPanels || d.panels[n-1].folded != true {
		t.Errorf("17 named, at most 11 kept: %d panels, the last folded %v", n, d.panels[n-1].folded)
	}
}
