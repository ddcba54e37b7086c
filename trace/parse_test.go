package trace

import (
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestTimesAgainstTimeParse checks the hand-rolled parsers against
// time.Parse on random instants, zones and precisions.
func TestTimesAgainstTimeParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c timeCache
	zones := []*time.Location{time.UTC, time.FixedZone("", -7*3600), time.FixedZone("", 5*3600+45*60), time.FixedZone("", -(9*3600 + 30*60))}
	for range 20000 {
		sec := rng.Int64N(int64(300*365*24*3600)) - int64(100*365*24*3600) // 1870–2170
		ts := time.Unix(sec, rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))])
		for _, layout := range []string{time.RFC3339, time.RFC3339Nano, "2006-01-02T15:04:05.000Z07:00", "2006-01-02 15:04:05.999999Z07:00"} {
			s := ts.Format(layout)
			want, err := time.Parse(layout, s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.parseRFC3339([]byte(s))
			if err != nil || got != want.UnixNano() {
				t.Fatalf("parseRFC3339(%q) = %d, %v; want %d", s, got, err, want.UnixNano())
			}
		}
		for _, layout := range []string{"02/Jan/2006:15:04:05 -0700", "02/Jan/2006:15:04:05.000 -0700"} {
			s := ts.Format(layout)
			want, _ := time.Parse(layout, s)
			got, err := c.parseCLF([]byte(s))
			if err != nil || got != want.UnixNano() {
				t.Fatalf("parseCLF(%q) = %d, %v; want %d", s, got, err, want.UnixNano())
			}
		}
	}
}

// TestTimeCacheGet is the time cache's look-up, which compares keys of
// 16 bytes or more as overlapping words, against a comparison of the
// bytes: for each length a key may have, the key put, then the same key
// (found) and the key with each byte in turn changed (not found).
func TestTimeCacheGet(t *testing.T) {
	for n := 1; n <= 32; n++ {
		key := []byte("2026-03-01T12:00:00+01:00 abcdef"[:n])
		var c timeCache
		c.put(key, int64(n))
		if sec, ok := c.get(key); !ok || sec != int64(n) {
			t.Fatalf("get(%q) after put = %d, %v; want %d, true", key, sec, ok, n)
		}
		for at := range n {
			other := append([]byte(nil), key...)
			other[at] ^= 0x40
			if _, ok := c.get(other); ok {
				t.Fatalf("get(%q) after put(%q) found it", other, key)
			}
		}
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		unit time.Duration
		want int64
	}{
		{"1700000000", time.Second, 1700000000e9},
		{"1700000000.25", time.Second, 1700000000250000000},
		{"1700000000.123456789123", time.Second, 1700000000123456789},
		{"-1.5", time.Second, -1500000000},
		{"1700000000123", time.Millisecond, 1700000000123e6},
		{"1700000000123.5", time.Millisecond, 1700000000123500000},
		{"1700000000123456", time.Microsecond, 1700000000123456e3},
		{"1700000000123456789", time.Nanosecond, 1700000000123456789},
		{"1.7e9", time.Second, 1.7e18},
		{"0", time.Second, 0},
	}
	for _, tt := range tests {
		got, err := parseNumber([]byte(tt.in), tt.unit)
		if err != nil || got != tt.want {
			t.Errorf("parseNumber(%q, %v) = %d, %v; want %d", tt.in, tt.unit, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-", "1.", "1.2.3", "abc", "9223372037", "1e300", "NaN"} {
		if got, err := parseNumber([]byte(bad), time.Second); err == nil {
			t.Errorf("parseNumber(%q) = %d, want an error", bad, got)
		}
	}
}

// TestJSONAgainstEncodingJSON compares the extractor with encoding/json on
// random documents: the same value for each path, and the same verdict
// on whether the line is JSON at all (for valid UTF-8). The documents are
// damaged only by cutting them short, and the malformed ones below only
// where a path reads: the extractor skips, unchecked, the values no path
// reads (TestJSONSkippingAgainstChecking holds it to what it did when it
// checked them).
func TestJSONAgainstEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		doc := randomJSON(rng, 0)
		line := []byte(doc)
		if rng.IntN(10) == 0 && len(line) > 1 { // damage it
			line = line[:rng.IntN(len(line))]
		}
		checkJSON(t, line)
	}
	for _, s := range []string{
		`{"a":"\ud83d\ude00\ud800x\udc00"}`, `{"a":"\u00e9\"\\\/\b\f\n\r\t"}`,
		`{"a":{"b":{"c":"deep"}}}`, `{"a":1,"b":2,"a":3}`, `{"a.b":{"c":"dotted"}}`, `{"a.b.c":"flat"}`, `{"a":[{"b":1}],"b":-0.5e+3}`,
		`{}`, ` {"a" : null } `, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":"x` + "\x01" + `"}`, `{"a":1,}`, `{,}`, `{"a"}`,
	} {
		checkJSON(t, []byte(s))
	}
}

func checkJSON(t *testing.T, line []byte) {
	t.Helper()
	paths := []string{"a", "a.b", "a.b.c", "b", "x"}
	e := newJSONExtractor(paths)
	err := e.extract(line)
	var v map[string]any
	jerr := json.Unmarshal(line, &v)
	if !utf8.Valid(line) {
		return
	}
	if (err == nil) != (jerr == nil) {
		t.Fatalf("%s: extractor says %v, encoding/json %v", line, err, jerr)
	}
	if err != nil {
		return
	}
	for s, p := range paths {
		want, ok := lookup(v, p)
		got := e.vals[s]
		switch w := want.(type) {
		case nil:
			if ok && got.kind != jsonNull || !ok && got.kind != jsonNone {
				t.Errorf("%s: %s is %v, want %v (present %v)", line, p, got.kind, want, ok)
			}
		case string:
			if got.kind != jsonString || string(got.b) != w {
				t.Errorf("%s: %s = %v %q, want %q", line, p, got.kind, got.b, w)
			}
		case float64:
			var f float64
			if got.kind != jsonNumber || json.Unmarshal(got.b, &f) != nil || f != w {
				t.Errorf("%s: %s = %v %q, want %v", line, p, got.kind, got.b, w)
			}
		case bool:
			if got.kind != jsonBool || string(got.b) != map[bool]string{true: "true", false: "false"}[w] {
				t.Errorf("%s: %s = %v %q, want %v", line, p, got.kind, got.b, w)
			}
		default:
			if got.kind != jsonNested {
				t.Errorf("%s: %s = %v, want an object or array", line, p, got.kind)
			}
		}
	}
}

// lookup finds a dotted path as the extractor documents it: at each level
// the key may be any prefix of the path's rest that ends at a dot (the
// last such field of the object wins, as later fields overwrite).
func lookup(v any, path string) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if x, ok := m[path]; ok {
		return x, true
	}
	for i := strings.LastIndexByte(path, '.'); i > 0; i = strings.LastIndexByte(path[:i], '.') {
		if sub, ok := m[path[:i]]; ok {
			if x, ok := lookup(sub, path[i+1:]); ok {
				return x, true
			}
		}
	}
	return nil, false
}

// randomJSON makes an object whose keys are distinct, and never both "a"
// and "a.b": where a path matches twice, the extractor keeps the last
// match and encoding/json the last field of the name, which differ when
// the field is an object (see jsonExtractor).
func randomJSON(rng *rand.Rand, depth int) string {
	keys := []string{"a", "b", "c", "a.b", `\u0078`}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var b strings.Builder
	b.WriteByte('{')
	used := map[string]bool{}
	for i := range rng.IntN(4) {
		k := keys[i]
		if (k == "a" && used["a.b"]) || (k == "a.b" && used["a"]) {
			continue
		}
		used[k] = true
		if len(used) > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + k + `":`)
		b.WriteString(randomValue(rng, depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func randomValue(rng *rand.Rand, depth int) string {
	switch n := rng.IntN(9); {
	case n == 0 && depth < 4:
		return randomJSON(rng, depth)
	case n == 1 && depth < 4:
		return "[" + randomValue(rng, depth+1) + "," + randomValue(rng, depth+1) + "]"
	case n == 2:
		return []string{"true", "false", "null"}[rng.IntN(3)]
	case n == 3:
		return []string{"0", "-1.5", "1e3", "12345678901234567890", "-0.0E-2"}[rng.IntN(5)]
	default:
		return []string{`"plain"`, `""`, `"esc\"aped\\"`, `"\u00e9\ud83d\ude00"`, `"tab\tnl\n"`, `"\ud800"`, `"é"`}[rng.IntN(7)]
	}
}

// TestStopMask checks the 8-bytes-at-once test against the table, on
// words made of bytes near the edges it tests: a word has a stop byte if
// and only if its mask is not zero, and the lowest bit set is the first.
func TestStopMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	edges := []byte{0, 1, 0x1f, 0x20, 0x21, '"' - 1, '"', '"' + 1, '\\' - 1, '\\', '\\' + 1, 0x7f, 0x80, 0x9f, 0xa0, 0xdc, 0xff, 'a'}
	for range 200000 {
		var w [8]byte
		first := 8
		for i := range w {
			if rng.IntN(3) == 0 {
				w[i] = edges[rng.IntN(len(edges))]
			} else {
				w[i] = byte(rng.IntN(256))
			}
			if strStop[w[i]] && first == 8 {
				first = i
			}
		}
		x := uint64(0)
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(w[i])
		}
		if got := bits.TrailingZeros64(stopMask(x)) / 8; got != first {
			t.Fatalf("stopMask(% x): first stop at %d, want %d", w, got, first)
		}
	}
}
