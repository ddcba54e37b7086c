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
	note, errText             lipgloss.Style

	allowed, over, rejected      lipgloss.Style
	failedOpen, failedClosed     lipgloss.Style
	gaugeFull, gaugeLow, gaugeNo lipgloss.Style
	gaugeEmpty                   lipgloss.Style
	timePast, timeFault          lipgloss.Style
	help                         lipgloss.Style
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
	return styles{
		noColor: noColor,
		title:   s().Bold(true),
		section: s().Bold(true).Foreground(lipgloss.Color("75")),
		dim:     fg("243"),
		bold:    s().Bold(true),
		banner:  s().Bold(true).Foreground(lipgloss.Color("231")).Background(lipgloss.Color("160")),
		paused:  s().Bold(true).Foreground(lipgloss.Color("214")),
		done:    s().Bold(true).Foreground(lipgloss.Color("42")),
		note:    fg("81"),
		errText: s().Bold(true).Foreground(lipgloss.Color("203")),

		allowed:      fg("42"),
		over:         fg("208"),
		rejected:     fg("196"),
		failedOpen:   fg("226"),
		failedClosed: fg("201"),
		gaugeFull:    fg("42"),
		gaugeLow:     fg("214"),
		gaugeNo:      fg("196"),
		gaugeEmpty:   fg("238"),
		timePast:     fg("252"),
		timeFault:    fg("208"),
		help:         s().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("75")).Padding(0, 1),
	}
}

// Glyphs. Heights are the eighths of a cell; the shades say how much of a
// step was rejected when there is no colour to say it with.
var (
	heights = []rune(" ▁▂▃▄▅▆▇█")
	shades  = []rune("░▒▓")
)

const (
	glyphIdle         = '·' // a step in which the client sent nothing
	glyphOver         = '▲' // no colour: admitted 1.5× the limit's rate or more
	glyphFailedOpen   = 'o' // no colour: mostly admitted by the fail-open policy
	glyphFailedClosed = 'x' // no colour: mostly rejected by the fail-closed policy
	glyphGaugeFull    = '█'
	glyphGaugeEmpty   = '░'
)
