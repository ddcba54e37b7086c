// Package escape writes strings that came from input (a log's keys, a
// scenario's client and limit names, and the sentences made of them) so
// that none can do harm where it is shown, and two distinct ones never
// look the same. A key is bytes a client chose: it may hold terminal
// escapes (ESC[31m), NUL, bidi overrides that reorder what is shown
// (U+202E, Trojan Source, CVE-2021-42574), and bytes that are not UTF-8.
//
// Text is for people: terminals, the TUI, the text in plots and in the
// HTML report (which html/template or the SVG writer then XML-escapes as
// usual); Source for a whole file shown as it is. Data is for JSON and CSV, which carry control characters safely
// in their own escapes. Text and Data are not idempotent (a backslash is doubled
// each time): escape a string once, where it is shown.
package escape

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Data is s as JSON and CSV write it: each byte that is not UTF-8 as \xNN
// and a backslash as \\, the rest as it is. Distinct strings stay
// distinct ("\xffa" and "\xfea" were both "\ufffda" in JSON), and a
// string of valid UTF-8 without a backslash, as nearly every key is, is
// unchanged.
func Data(s string) string { return escape(s, false, true) }

// Text is s as it is shown to people: as Data, and control characters
// (ESC, NUL, DEL, C1, and newline and tab too: a name is one line) and
// bidi formatting characters (U+202E and its kin) as \xNN (ASCII) or
// \uNNNN (the rest), so that none of them reaches a terminal, a plot or a
// page.
func Text(s string) string { return escape(s, true, true) }

// Source is a file's text (a scenario's YAML) as it is shown whole: its
// lines (LF or CRLF) and tabs kept, and its backslashes, which are its own (a YAML
// "\e" stays "\e"); any other control character, a bidi formatting
// character or a byte that is not UTF-8 as Text writes it, so that the
// listing shows the bytes in the file and not what they would make of
// the text around them.
func Source(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		body, nl := strings.CutSuffix(line, "\n")
		body, cr := strings.CutSuffix(body, "\r")
		for i, field := range strings.Split(body, "\t") {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(escape(field, true, false))
		}
		if cr {
			b.WriteByte('\r')
		}
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// escape writes s as Data (text false) or Text (text true), a backslash
// doubled when double is set.
func escape(s string, text, double bool) string {
	clean := true
	for i, r := range s {
		if (double && r == '\\') || (r == utf8.RuneError && isBadByte(s, i)) || (text && unsafeInText(r)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case double && r == '\\':
			b.WriteString(`\\`)
		case text && unsafeInText(r) && r < utf8.RuneSelf:
			// An ASCII control is one byte, so \xNN says both. A C1
			// control (U+0080–U+009F) is two bytes: as \xNN it would look
			// like the lone byte NN, which is not UTF-8.
			fmt.Fprintf(&b, `\x%02x`, r)
		case text && unsafeInText(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isBadByte reports whether s[i] starts no valid UTF-8 sequence (a
// U+FFFD written out is valid, and kept).
func isBadByte(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size <= 1
}

// unsafeInText reports whether r must not reach a terminal as it is: a
// control character, or one of Unicode's bidi formatting characters,
// which reorder the text around them (Trojan Source, CVE-2021-42574).
func unsafeInText(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, // ALM, LRM, RLM
		r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return false
}
