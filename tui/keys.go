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
		Up:        b([]string{"up", "k"}, "↑↓ k j", "scroll the clients"),
		Down:      b([]string{"down", "j"}, "", "scroll the clients down"),
		PageUp:    b([]string{"pgup"}, "pgup pgdn", "a page of clients"),
		PageDown:  b([]string{"pgdown"}, "", "a page of clients down"),
		Home:      b([]string{"home"}, "home end", "first, last client"),
		End:       b([]string{"end"}, "", "last client"),
		Help:      b([]string{"?"}, "? esc", "this help; esc closes it"),
		Close:     b([]string{"esc"}, "", "close the help"),
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
	k.footer = []footerItem{{"space", "pause"}, {"+/-", "speed"}, {"→", "step"}, {"r", "restart"},
		{"a", "algorithm"}, {"t", "topology"}, {"↑↓", "scroll"}, {"?", "help"}, {"q", "quit"}}
	k.footerShort = []footerItem{{"spc", "pause"}, {"+-", "speed"}, {"→", "step"}, {"r", "restart"},
		{"a", "alg"}, {"t", "topo"}, {"↑↓", "scroll"}, {"?", "help"}, {"q", "quit"}}
	k.helpRows = [][]key.Binding{{k.Pause}, {k.Faster, k.Slower}, {k.Step}, {k.Up, k.Down}, {k.PageUp, k.PageDown},
		{k.Home, k.End}, {k.Restart}, {k.Algorithm}, {k.Topology}, {k.Help, k.Close}, {k.Quit}}
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
	over := m.st.over.Render("█")
	fo := m.st.failedOpen.Render("▆")
	rej := m.st.rejected.Render("▂▄█")
	fc := m.st.failedClosed.Render("█")
	overText, foText, rejText, fcText := "orange", "yellow", "red: share of the step's requests rejected", "magenta"
	if m.st.noColor {
		over, fo, fc = string(glyphOver), string(glyphFailedOpen), string(glyphFailedClosed)
		rej = string(shades)
		overText, foText, fcText = "", "", ""
		rejText = "share of the step's requests rejected (░ under ⅓, ▓ over ⅔)"
	}
	lines := []string{
		"one cell per step, the newest on the right; · nothing sent",
		"admitted " + adm + "  a full cell is the limit's rate per step",
		"         " + over + " " + join(overText, "1.5× the limit's rate or more"),
		"         " + fo + " " + join(foText, "mostly failed open: admitted, store unreachable"),
		"rejected " + rej + " " + rejText,
		"         " + fc + " " + join(fcText, "mostly failed closed"),
		"admit/s  the last whole step's admissions per second, × the limit",
		"gauges   what each copy of the limiter state would still admit now",
	}
	b.WriteString(strings.Join(lines, "\n"))
	return m.st.help.Render(b.String())
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ": " + b
}
