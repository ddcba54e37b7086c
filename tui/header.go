package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// headerLines are the frame's first n lines: what is playing, the clock
// with the run's timeline and its faults, then the faults in force.
func (m Model) headerLines(w, n int) []string {
	lines := []string{m.runLine(w), m.clockLine(w)}
	banners := m.banners()
	switch {
	case len(banners) == 0:
		lines = append(lines, trunc(m.st.dim.Render(m.quietLine()), w))
	case len(banners) > n-2:
		// More faults than lines: the last line carries the rest.
		lines = append(lines, m.bannerLine(banners[:n-3], w)...)
		lines = append(lines, m.bannerLine([]string{strings.Join(banners[n-3:], " · ")}, w)...)
	default:
		lines = append(lines, m.bannerLine(banners, w)...)
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines[:n]
}

// runLine names the run: scenario, algorithm, topology and store, servers,
// seed; then what fits of the balancer and the round trip.
func (m Model) runLine(w int) string {
	sc := m.sc
	items := []string{
		m.st.title.Render(trunc(escape.Text(sc.Name), 24)),
	}
	if m.vs != nil {
		items = append(items, m.st.bold.Render("A")+" "+m.vs.labels[0]+m.st.dim.Render(" vs ")+m.st.bold.Render("B")+" "+m.vs.labels[1])
	}
	items = append(items,
		m.st.bold.Render(sc.Limit.Algorithm),
		m.st.bold.Render(string(sc.Topology.Kind))+" on "+storeName(sc),
		fmt.Sprintf("%d %s", sc.Servers, words.Plural(sc.Servers, "server", "servers")),
		fmt.Sprintf("seed %d", sc.Seed),
		string(sc.Balancer),
	)
	if sc.Topology.Kind != sim.Local {
		items = append(items, "rtt "+sc.Topology.RTT.String())
	}
	sep := m.st.dim.Render(" · ")
	line := items[0]
	for _, it := range items[1:] {
		if lipgloss.Width(line+sep+it) > w {
			break
		}
		line += sep + it
	}
	return trunc(line, w)
}

// clockLine is the virtual clock, the run's timeline with the faults on
// it, the speed and whether it plays.
func (m Model) clockLine(w int) string {
	clock := fmt.Sprintf("t=%.1fs / %ss", m.now.Seconds(), strconv.FormatFloat(m.sc.Duration.Seconds(), 'f', -1, 64))
	speed := m.st.bold.Render(speedLabel(m.speed))
	var state string
	switch {
	case m.err != nil:
		state = m.st.errText.Render("■ stopped — r restart, q quit")
	case m.done:
		state = m.st.done.Render("■ done — r restart, q quit")
	case m.paused:
		state = m.st.paused.Render("❚❚ PAUSED")
	default:
		state = "▶ playing"
	}
	right := speed + "  " + state
	barW := w - lipgloss.Width(clock) - lipgloss.Width(right) - 4
	if barW < 10 {
		return trunc(clock+"  "+right, w)
	}
	return clock + "  " + m.timeline(barW) + "  " + right
}

// timeline is the run from 0 to its duration in w cells: played, to come,
// and the cells in which a fault is scheduled.
func (m Model) timeline(w int) string {
	now := m.now
	var b strings.Builder
	for i := range w {
		from := time.Duration(float64(m.sc.Duration) * float64(i) / float64(w))
		to := time.Duration(float64(m.sc.Duration) * float64(i+1) / float64(w))
		fault := false
		for _, f := range m.sc.Faults {
			if f.Start < to && f.End > from {
				fault = true
			}
		}
		played := to <= now || (now >= m.sc.Duration)
		switch {
		case fault && played:
			b.WriteString(m.st.timeFault.Render("▬"))
		case fault:
			b.WriteString(m.st.timeFault.Render("╌"))
		case played:
			b.WriteString(m.st.timePast.Render("━"))
		default:
			b.WriteString(m.st.dim.Render("─"))
		}
	}
	return b.String()
}

// quietLine is the banner line when no fault is in force.
func (m Model) quietLine() string {
	now := m.now
	var nextFault *sim.Fault
	for i, f := range m.sc.Faults {
		if f.Start > now && (nextFault == nil || f.Start < nextFault.Start) {
			nextFault = &m.sc.Faults[i]
		}
	}
	switch {
	case len(m.sc.Faults) == 0:
		return "no faults in this scenario"
	case nextFault != nil:
		return fmt.Sprintf("no fault in force · next: %s at %s", nextFault.Kind, secs(nextFault.Start))
	default:
		return "no fault in force · the faults are over"
	}
}

func (m Model) bannerLine(texts []string, w int) []string {
	var lines []string
	for _, t := range texts {
		lines = append(lines, m.st.banner.Render(" "+trunc(t, w-2)+" "))
	}
	return lines
}

// banners describe the faults in force, as the snapshot says, in words
// from the scenario: which servers reach which copy, what the policy does.
// Side by side, a fault the second run takes otherwise (another policy,
// another topology) says what it does there too.
func (m Model) banners() []string {
	var out []string
	for _, a := range m.snap.Active {
		for _, f := range m.sc.Faults {
			if string(f.Kind) == a.Kind && f.Start.Seconds() == a.StartS && f.End.Seconds() == a.EndS {
				text := f.Banner(m.sc, m.now)
				if m.vs != nil {
					if b := f.Banner(m.vs.sc, m.now); b != text {
						text = "A " + text + "  ·  B " + b
					}
				}
				// A region's outage names the region, which came from
				// the file.
				out = append(out, escape.Text(text))
				break
			}
		}
	}
	return out
}

// secs is a virtual instant as the header writes it: 12s, 1.5s.
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
