// Package escapetest holds what the tests of every view of a run share
// to check that names from input are escaped: a log and a scenario whose
// names are hostile, and a check that finds what must not be shown raw.
package escapetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Log is a combined log whose query:k keys are what a client may
// send: a terminal escape with a NUL, a bidi override and a byte that is
// not UTF-8 (five requests, two of them at once); and markup, which a
// page and an SVG must show as text (one request).
var Log = combined(
	"192.0.2.1 00 "+hostileQuery, "192.0.2.1 00 "+hostileQuery, "192.0.2.1 00 "+hostileQuery,
	"192.0.2.2 01 %3c%2fsvg%3e%26amp", "192.0.2.1 02 "+hostileQuery, "192.0.2.1 03 "+hostileQuery)

// hostileQuery is ESC[31mRED NUL x U+202E evil 0xFF, URL-encoded.
const hostileQuery = "%1b%5b31mRED%00x%e2%80%aeevil%ff"

// combined writes a combined log line for each "IP SECOND KEY": a GET of
// /api?k=KEY at 12:00:SECOND.
func combined(requests ...string) string {
	var b strings.Builder
	for _, r := range requests {
		f := strings.Fields(r)
		fmt.Fprintf(&b, "%s - - [01/Mar/2026:12:00:%s +0000] \"GET /api?k=%s HTTP/1.1\" 200 12 \"-\" \"curl\"\n", f[0], f[1], f[2])
	}
	return b.String()
}

// Scenario plays Log, saved as access.log beside it,'s keys, beside a client and a limit
// whose YAML names hold an ESC and a bidi override (YAML's "\e" and
// "\u202E" escapes), in a scenario whose own name holds a clear-screen.
const Scenario = `name: "evil\e[2J"
duration: 5s
trace: {file: access.log, format: combined, key: "query:k"}
limit: {rate: 1/s, burst: 1, key: api-key}
clients:
  - name: "yaml\u202Eclient\e[1m"
    api_key: "api\e[1mkey\u202E"
    traffic: {pattern: constant, rate: 3/s}
expect:
  - {client: "*", rejected: {max: 0}}
`

// Write writes Scenario and its access.log in dir and returns the
// scenario's path.
func Write(t testing.TB, dir string) string {
	t.Helper()
	for name, text := range map[string]string{"access.log": Log, "s.yaml": Scenario} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.yaml")
}

// LogKey and YAMLName are the first key of Log and the client Scenario
// names, as escape.Text shows them.
const (
	LogKey   = `\x1b[31mRED\x00x\u202eevil\xff`
	YAMLName = `yaml\u202eclient\x1b[1m`
)

// Unsafe lists what in s must not reach a person's screen raw: a
// control character (but newline and tab), a bidi formatting character,
// a byte that is not UTF-8.
func Unsafe(s string) []string {
	var bad []string
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd"):
			bad = append(bad, fmt.Sprintf("byte %#x at %d", s[i], i))
		case r == '\n' || r == '\t':
		case unicode.IsControl(r) || r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			bad = append(bad, fmt.Sprintf("%U at %d", r, i))
		}
	}
	return bad
}
