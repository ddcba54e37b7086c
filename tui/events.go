package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// event is one log line: the run's, or the player's own (a restart, a
// combination that cannot be played).
type event struct {
	sim.LogEntry
	mine bool
}

// events merges the run's log with the player's notes by virtual time,
// the run's first at the same instant. Side by side, the second run's
// entries that the first has not (at the same instant, in the same
// words) are merged in too, marked "B:".
func (m Model) events() []event {
	log := m.snap.Log
	if m.vs != nil {
		log = mergeVersus(log, m.vs.snap.Log)
	}
	out := make([]event, 0, len(log)+len(m.notes))
	i, j := 0, 0
	for i < len(log) || j < len(m.notes) {
		if j == len(m.notes) || (i < len(log) && log[i].TS <= m.notes[j].TS) {
			out = append(out, event{LogEntry: log[i]})
			i++
		} else {
			out = append(out, event{LogEntry: m.notes[j], mine: true})
			j++
		}
	}
	return fold(out)
}

// mergeVersus is a's log with b's own entries, "B: " before each, in
// order of time, a's first at the same instant.
func mergeVersus(a, b []sim.LogEntry) []sim.LogEntry {
	seen := map[sim.LogEntry]bool{}
	for _, e := range a {
		seen[e] = true
	}
	out := make([]sim.LogEntry, 0, len(a)+len(b))
	i := 0
	for _, e := range b {
		if seen[e] {
			continue
		}
		for i < len(a) && a[i].TS <= e.TS {
			out = append(out, a[i])
			i++
		}
		out = append(out, sim.LogEntry{TS: e.TS, Text: "B: " + e.Text})
	}
	return append(out, a[i:]...)
}

// fold makes one entry of each run of the simulator's "first rejection"
// entries with nothing else between them: when eight bastions hit the
// limit at once, one line says so, and the faults and failovers around it
// stay in view.
func fold(evs []event) []event {
	out := make([]event, 0, len(evs))
	for i := 0; i < len(evs); {
		if _, ok := firstRejected(evs[i]); !ok {
			out = append(out, evs[i])
			i++
			continue
		}
		var names []string
		j := i
		for ; j < len(evs); j++ {
			name, ok := firstRejected(evs[j])
			if !ok {
				break
			}
			names = append(names, name)
		}
		e := evs[i]
		if len(names) > 1 {
			shown := names[:min(len(names), 3)]
			list := strings.Join(shown, ", ")
			if len(names) > len(shown) {
				list += ", …"
			}
			e.Text = fmt.Sprintf("first rejection: %d clients (%s)", len(names), list)
		}
		out = append(out, e)
		i = j
	}
	return out
}

// firstRejected is the client a run's "NAME: first rejection" entry names.
func firstRejected(e event) (string, bool) {
	if e.mine {
		return "", false
	}
	return strings.CutSuffix(e.Text, ": first rejection")
}

// logLines are the log's title and as many of its newest entries as fit,
// the newest at the bottom, each wrapped under its time.
func (m Model) logLines(l layout) []string {
	evs := m.events()
	if l.bottomRows <= 0 {
		return nil
	}
	var body []string
	shown := 0
	for i := len(evs) - 1; i >= 0; i-- {
		entry := m.logEntry(evs[i], l.width)
		if len(body)+len(entry) > l.bottomRows {
			if len(body) == 0 {
				body = entry[:l.bottomRows] // one entry taller than the pane: its start
				shown++
			}
			break
		}
		body = append(entry, body...)
		shown++
	}
	detail := "newest at the bottom"
	if m.verdict != nil {
		detail += " · e: the verdict"
	}
	if hidden := len(evs) - shown; hidden > 0 {
		detail = fmt.Sprintf("%d earlier not shown · ", hidden) + detail
	}
	return append([]string{m.title("EVENTS", detail, l.width)}, body...)
}

// logEntry is one entry's lines: the virtual time, then the text wrapped
// to the width; the player's own entries are marked ».
func (m Model) logEntry(e event, w int) []string {
	const indent = 10                                              // "  12.34s  "
	text, style := escape.Text(e.Text), m.st.dim.UnsetForeground() // it names clients
	if e.mine {
		text, style = "» "+text, m.st.note
	}
	wrapped := strings.Split(ansi.Wrap(text, max(w-indent, 10), ""), "\n")
	lines := make([]string, len(wrapped))
	for i, part := range wrapped {
		lead := strings.Repeat(" ", indent)
		if i == 0 {
			lead = m.st.dim.Render(fmt.Sprintf("%7.2fs", e.TS)) + "  "
		}
		lines[i] = trunc(lead+style.Render(part), w)
	}
	return lines
}
