package replay

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A log's keys are bytes a client chose: they may hold terminal escapes,
// bidi overrides that reorder what is shown, and bytes that are not
// UTF-8. Outputs write them so that no key can do harm, and two distinct
// keys never look the same.

// DataKey is key as JSON and CSV write it: each byte that is not UTF-8 as
// \xNN and a backslash as \\, the rest as it is. Distinct keys stay
// distinct ("\xffa" and "\xfea" were both "\ufffda" in JSON), and a key
// of valid UTF-8 without a backslash, as nearly every key is, is
// unchanged.
func DataKey(key string) string { return escapeKey(key, false) }

// TextKey is key as the table writes it to a terminal: as DataKey, and
// control characters (ESC, NUL, DEL, C1) and bidi formatting characters
// (U+202E and its kin) as \xNN or \uNNNN, so that none of them reaches the
// terminal.
func TextKey(key string) string { return escapeKey(key, true) }

func escapeKey(key string, text bool) string {
	clean := true
	for i, r := range key {
		if r == '\\' || (r == utf8.RuneError && isBadByte(key, i)) || (text && unsafeInText(r)) {
			clean = false
			break
		}
	}
	if clean {
		return key
	}
	var b strings.Builder
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, key[i])
		case r == '\\':
			b.WriteString(`\\`)
		case text && unsafeInText(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case text && unsafeInText(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(key[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isBadByte reports whether key[i] starts no valid UTF-8 sequence (a
// U+FFFD written out is valid, and kept).
func isBadByte(key string, i int) bool {
	_, size := utf8.DecodeRuneInString(key[i:])
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
