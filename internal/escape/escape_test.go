package escape

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, text, data string }{
		{"plain", "plain", "plain"},
		{"café", "café", "café"},
		{"\x1b[31mred", `\x1b[31mred`, "\x1b[31mred"},
		{"nul\x00byte", `nul\x00byte`, "nul\x00byte"},
		{"\u202eevil", `\u202eevil`, "\u202eevil"},
		{"\xffa", `\xffa`, `\xffa`},
		{`\xffa`, `\\xffa`, `\\xffa`},
		{"c1\u009b", `c1\u009b`, "c1\u009b"},
		{"lone\x9b", `lone\x9b`, `lone\x9b`},
		{"two\nlines\t", `two\x0alines\x09`, "two\nlines\t"},
		{"\u2066isolate\u2069", `\u2066isolate\u2069`, "\u2066isolate\u2069"},
		{"\ufffd kept", "\ufffd kept", "\ufffd kept"},
	} {
		if got := Text(tt.in); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := Data(tt.in); got != tt.data {
			t.Errorf("Data(%q) = %q, want %q", tt.in, got, tt.data)
		}
	}
}

func TestSource(t *testing.T) {
	in := "name: \"evil\\e[2J\"\r\n\tkey: \u202eabc\x1b[1m\xff\rx\nend"
	want := "name: \"evil\\e[2J\"\r\n\tkey: \\u202eabc\\x1b[1m\\xff\\x0dx\nend"
	if got := Source(in); got != want {
		t.Errorf("Source(%q) =\n%q, want\n%q", in, got, want)
	}
}

// Text of any bytes is valid UTF-8 with no control or bidi character,
// and it can be read back: two distinct strings never look the same.
func TestTextIsSafeAndDistinct(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := string(rapid.SliceOf(rapid.SampledFrom([]byte("a\\x\x00\x1b\x7f\xff\xe2\x80\xae\xc2\x9b\n"))).Draw(t, "bytes"))
		got := Text(in)
		if !utf8.ValidString(got) {
			t.Fatalf("Text(%q) = %q is not UTF-8", in, got)
		}
		for _, r := range got {
			if unsafeInText(r) {
				t.Fatalf("Text(%q) = %q holds %U", in, got, r)
			}
		}
		if back := unescape(t, got); back != in {
			t.Fatalf("Text(%q) = %q reads back as %q", in, got, back)
		}
	})
}

// unescape reads Text's output back: \\, \xNN (a byte) and \uNNNN (a
// rune).
func unescape(t *rapid.T, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if strings.HasPrefix(s[i:], `\\`) {
			b.WriteByte('\\')
			i++
			continue
		}
		digits := map[string]int{`\x`: 2, `\u`: 4}[s[i:min(i+2, len(s))]]
		if digits == 0 || i+2+digits > len(s) {
			t.Fatalf("a lone backslash in %q", s)
		}
		n, err := strconv.ParseUint(s[i+2:i+2+digits], 16, 32)
		if err != nil {
			t.Fatalf("bad escape in %q: %v", s, err)
		}
		if digits == 2 {
			b.WriteByte(byte(n))
		} else {
			b.WriteRune(rune(n))
		}
		i += 1 + digits
	}
	return b.String()
}
