package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// keyMap is every key the player answers to. The footer and the help
// overlay are drawn from the same bindings, so they cannot disagree.
type keyMap struct {
	Pause, Faster, Slower, Step  key.Binding
	Restart, Algorithm, Topology key.Binding
	Up, Down, PageUp, PageDown   key.Binding
	Home, End, Help, Close, Quit key.Binding
	ByKey, Events                key.Binding
	footer, footerShort          []footerItem
	// helpRows are the overlay's rows: bindings that share a description
	// share a row.
	helpRows [][]key.Binding
}

// footerItem is one key hint in the footer.
type footerItem struct{ key, desc string }

func newKeyMap() keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	k := keyMap{
		Pause:     b([]string{" "}, "space", "pause / resume"),
		Faster:    b([]string{"+", "="}, "+ -", "speed: 0.1× … 50×, max"),
		Slower:    b([]string{"-", "_"}, "", "slower"),
		Step:      b([]string{"right", "l"}, "→ l", "one step on (pauses)"),
		Restart:   b([]string{"r"}, "r", "restart from t=0"),
		Algorithm: b([]string{"a"}, "a", "next algorithm, restart"),
		Topology:  b([]string{"t"}, "t", "next topology, restart"),
		Up:        b([]string{"up", "k"}, "↑↓ k j", "select; STORE follows"),
		Down:      b([]string{"down", "j"}, "", "select the next row"),
		PageUp:    b([]string{"pgup"}, "pgup pgdn", "a page of rows"),
		PageDown:  b([]string{"pgdown"}, "", "a page of rows down"),
		Home:      b([]string{"home"}, "home end", "first, last row"),
		End:       b([]string{"end"}, "", "last row"),
		ByKey:     b([]string{"tab"}, "tab", "rows per client / per key"),
		Events:    b([]string{"e"}, "e", "verdict / events, at end"),
		Help:      b([]string{"?"}, "? esc", "this help; esc closes it"),
		Close:     b([]string{"esc"}, "", "close the help"),
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
	k.footer = []footerItem{{"space", "pause"}, {"+/-", "speed"}, {"→", "step"}, {"↑↓", "select"}, {"tab", "per key"},
		{"r", "restart"}, {"a", "algorithm"}, {"t", "topology"}, {"?", "help"}, {"q", "quit"}}
	k.footerShort = []footerItem{{"spc", "pause"}, {"+-", "speed"}, {"→", "step"}, {"↑↓", "select"}, {"tab", "keys"},
		{"r", "restart"}, {"a", "alg"}, {"t", "topo"}, {"?", "help"}, {"q", "quit"}}
	k.helpRows = [][]key.Binding{{k.Pause}, {k.Faster, k.Slower}, {k.Step}, {k.Up, k.Down}, {k.PageUp, k.PageDown},
		{k.Home, k.End}, {k.ByKey}, {k.Events}, {k.Restart}, {k.Algorithm}, {k.Topology}, {k.Help, k.Close}, {k.Quit}}
	return k
}

// footerLine lists the keys in width cells: every hint if they fit, else
// the short forms, else as many short hints as fit with help and quit kept.
func (m Model) footerLine(w int) string {
	render := func(items []footerItem) string {
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = m.st.bold.Render(it.key) + " " + m.st.dim.Render(it.desc)
		}
		return strings.Join(parts, "  ")
	}
	if line := render(m.keys.footer); lipgloss.Width(line) <= w {
		return line
	}
	short := m.keys.footerShort
	for n := len(short); n > 2; n-- {
		items := append(append([]footerItem(nil), short[:n-2]...), short[len(short)-2:]...)
		if line := render(items); lipgloss.Width(line) <= w {
			return line
		}
	}
	return render(short[len(short)-2:])
}

// helpBox is the help overlay: the keys, then how to read the screen.
func (m Model) helpBox() string {
	var b strings.Builder
	b.WriteString(m.st.section.Render("keys") + "\n")
	var cells []string
	for _, row := range m.keys.helpRows {
		var keys []string
		for _, k := range row {
			if h := k.Help(); h.Key != "" {
				keys = append(keys, h.Key)
			}
		}
		cells = append(cells, m.st.bold.Render(padRight(strings.Join(keys, " "), 10))+" "+row[0].Help().Desc)
	}
	half := (len(cells) + 1) / 2
	left := strings.Join(cells[:half], "\n")
	right := strings.Join(cells[half:], "\n")
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, left, "   ", right) + "\n\n")
	b.WriteString(m.st.section.Render("reading the screen") + "\n")
	adm := m.st.allowed.Render("▂▄▆█")
	over := m.st.over.Render(string(glyphOver))
	fo := m.st.failedOpen.Render(string(glyphFailedOpen))
	rej := m.st.rejected.Render(string(shades))
	fc := m.st.failedClosed.Render(string(glyphFailedClosed))
	lines := []string{
		"strips   a cell per step from t=0, more steps a cell as the run grows",
		"admitted " + adm + " the limit's rate fills a cell   " + over + " over what the limit allows",
		"         " + fo + " failed open: admitted while the store was unreachable",
		"rejected " + rej + "  share of the cell's requests rejected   " + fc + " failed closed",
		"over     a bucket: past burst + rate × time; a window: past its limit",
		"admit/s  last step's admissions a second × the limit; done: peak1s × exact",
		"exact    what one exact limiter would have admitted on the same arrivals",
		"gauges   what each copy of the limiter state would still admit now",
	}
	b.WriteString(strings.Join(lines, "\n"))
	return m.st.help.Render(b.String())
}
