package tui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// styles are the looks of the screen's parts, all from one renderer so that
// a colourless renderer (NO_COLOR, or an output that is not a terminal)
// turns every one of them into plain text.
type styles struct {
	noColor bool

	title, section, dim, bold lipgloss.Style
	banner, paused, done      lipgloss.Style
	note, errText, selected   lipgloss.Style

	allowed, over, rejected      lipgloss.Style
	failedOpen, failedClosed     lipgloss.Style
	gaugeFull, gaugeLow, gaugeNo lipgloss.Style
	gaugeEmpty                   lipgloss.Style
	timePast, timeFault          lipgloss.Style
	help                         lipgloss.Style

	// cells are the strips' glyphs, each rendered in its style once: a
	// frame draws thousands of them (40 rows of two 60-cell strips), and
	// a style's Render of one glyph always writes the same.
	cells sparkCells
}

// sparkCells are the strips' glyphs rendered: idle in dim, failedOpen,
// failedClosed and over in their own styles, levels (heights) in allowed,
// shades in rejected.
type sparkCells struct {
	idle, failedOpen, failedClosed, over string
	levels                               [9]string
	shades                               [3]string
}

func newSparkCells(st styles) sparkCells {
	c := sparkCells{
		idle:         st.dim.Render(string(glyphIdle)),
		failedOpen:   st.failedOpen.Render(string(glyphFailedOpen)),
		failedClosed: st.failedClosed.Render(string(glyphFailedClosed)),
		over:         st.over.Render(string(glyphOver)),
	}
	for i, h := range heights {
		c.levels[i] = st.allowed.Render(string(h))
	}
	for i, sh := range shades {
		c.shades[i] = st.rejected.Render(string(sh))
	}
	return c
}

// newStyles builds the styles on r. With noColor the renderer is made
// colourless, so that no escape sequence is ever written, and the glyphs
// the screen draws change to ones that tell the same story in plain text.
func newStyles(r *lipgloss.Renderer, noColor bool) styles {
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	s := func() lipgloss.Style { return r.NewStyle() }
	fg := func(c string) lipgloss.Style { return s().Foreground(lipgloss.Color(c)) }
	// The palette is Okabe and Ito's, told apart with every common colour
	// vision deficiency: blue admitted, vermillion over the limit, orange
	// rejected, yellow failed open, reddish purple failed closed. Each of
	// those also has a glyph of its own, so colour is never the only
	// thing that says which it is.
	const (
		blue       = "#0072B2"
		skyBlue    = "#56B4E9"
		green      = "#009E73"
		yellow     = "#F0E442"
		orange     = "#E69F00"
		vermillion = "#D55E00"
		purple     = "#CC79A7"
	)
	st := styles{
		noColor:  noColor,
		title:    s().Bold(true),
		section:  s().Bold(true).Foreground(lipgloss.Color(skyBlue)),
		dim:      fg("243"),
		bold:     s().Bold(true),
		selected: s().Bold(true).Foreground(lipgloss.Color(skyBlue)),
		banner:   s().Bold(true).Foreground(lipgloss.Color("231")).Background(lipgloss.Color(vermillion)),
		paused:   s().Bold(true).Foreground(lipgloss.Color(orange)),
		done:     s().Bold(true).Foreground(lipgloss.Color(green)),
		note:     fg(skyBlue),
		errText:  s().Bold(true).Foreground(lipgloss.Color(vermillion)),

		allowed:      fg(blue),
		over:         s().Bold(true).Foreground(lipgloss.Color(vermillion)),
		rejected:     fg(orange),
		failedOpen:   fg(yellow),
		failedClosed: fg(purple),
		gaugeFull:    fg(blue),
		gaugeLow:     fg(orange),
		gaugeNo:      fg(vermillion),
		gaugeEmpty:   fg("238"),
		timePast:     fg("252"),
		timeFault:    fg(vermillion),
		help:         s().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color(skyBlue)).Padding(0, 1),
	}
	st.cells = newSparkCells(st)
	return st
}

// Glyphs. Heights are the eighths of a cell; the shades say how much of a
// step was rejected when there is no colour to say it with.
var (
	heights = []rune(" ▁▂▃▄▅▆▇█")
	shades  = []rune("░▒▓")
)

const (
	glyphIdle         = '·' // a step in which the client sent nothing
	glyphOver         = '▲' // admitted more than the limit allows
	glyphFailedOpen   = 'o' // mostly admitted by the fail-open policy
	glyphFailedClosed = 'x' // mostly rejected by the fail-closed policy
	glyphGaugeFull    = '█'
	glyphGaugeEmpty   = '░'
)
