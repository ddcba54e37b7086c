package trace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// TestJSONSeenMatch is a remembered name (expect, then match, which may
// not tell, and matchBytes, which quickName asks then) against what it
// stands for: the line has, from i on, the name as
// remembered, its quotes and its colon. Names of every length around the
// two words compared (8, 16), and lines that differ from them in either
// word, in the bytes past them, in length, or end near them.
func TestJSONSeenMatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]byte(`ab.-_x"`))
		word := func(label string) string {
			b := rapid.SliceOfN(alphabet, 0, 22).Draw(t, label)
			return strings.ReplaceAll(string(b), `"`, "q") // a remembered key is plain
		}
		key := word("key")
		colonNext := rapid.Bool().Draw(t, "colon next?")
		var n jsonNode
		n.expect([]byte(key), colonNext, nil, 0)
		s := &n.seen[0]

		name := `"` + key + `":`
		line := name
		switch rapid.IntRange(0, 3).Draw(t, "line") {
		case 0: // another key
			line = `"` + word("other") + `":`
		case 1: // one byte of the name changed
			b := []byte(name)
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.SampledFrom([]byte(`ab":x `)).Draw(t, "byte")
			line = string(b)
		case 2: // cut short
			line = name[:rapid.IntRange(0, len(name)).Draw(t, "cut")]
		}
		prefix := strings.Repeat(",", rapid.IntRange(0, 9).Draw(t, "prefix"))
		line = prefix + line + strings.Repeat(`1`, rapid.IntRange(0, 20).Draw(t, "after"))
		b, i := []byte(line), len(prefix)

		want := -1
		if colonNext && strings.HasPrefix(line[i:], name) {
			want = i + len(name)
		}
		// match may not tell (-1): matchBytes does, as quickName asks it.
		if got := s.match(b, i); got != want && got != -1 {
			t.Fatalf("key %q (colon next %v) in %q at %d: match %d, want %d", key, colonNext, line, i, got, want)
		}
		if want >= 0 && len(name) <= 16 && len(line)-i >= 16 {
			if got := s.match(b, i); got != want {
				t.Fatalf("key %q in %q at %d: match %d, want %d (two words tell)", key, line, i, got, want)
			}
		}
		if got := s.matchBytes(b, i); got != want {
			t.Fatalf("key %q (colon next %v) in %q at %d: matchBytes %d, want %d", key, colonNext, line, i, got, want)
		}
	})
}

// TestInternerRecent is the interner, with its recent strings in front,
// against what it must give: a string equal to the bytes, whatever came
// before (more strings than slots, so that they collide, and more than
// max, so that the map forgets), and the same string again for bytes it
// has just given.
func TestInternerRecent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := newInterner(rapid.IntRange(1, 50).Draw(t, "max"))
		many := rapid.IntRange(1, 3*recentSize).Draw(t, "distinct")
		for range rapid.IntRange(1, 2000).Draw(t, "gets") {
			s := fmt.Sprintf("%s-%d", strings.Repeat("k", rapid.IntRange(0, 12).Draw(t, "len")), rapid.IntRange(0, many).Draw(t, "which"))
			got := in.get([]byte(s))
			if got != s {
				t.Fatalf("get(%q) = %q", s, got)
			}
			if again := in.get([]byte(s)); unsafe.StringData(again) != unsafe.StringData(got) {
				t.Fatalf("get(%q) twice: two strings", s)
			}
		}
	})
}

// TestKeyerRecentAddrs is an address key looked up through the recent
// strings and the map behind them against the same key worked out afresh:
// a slot another address took, or one the map forgot, gives no wrong key.
func TestKeyerRecentAddrs(t *testing.T) {
	newKeyer := func() *keyer {
		return &keyer{kind: keyAddr, v6bits: 64, maxLen: DefaultMaxKey, keys: newInterner(64), addrs: make(map[string]recentSlot)}
	}
	rapid.Check(t, func(t *rapid.T) {
		k := newKeyer()
		afresh := newKeyer()
		for range rapid.IntRange(1, 1000).Draw(t, "lines") {
			n := rapid.IntRange(0, 2*recentSize).Draw(t, "client")
			v := rapid.SampledFrom([]string{
				fmt.Sprintf("10.%d.%d.%d", n>>8&255, n&255, n%7),
				fmt.Sprintf("10.%d.%d.%d:%d", n>>8&255, n&255, n%7, 40000+n),
				fmt.Sprintf("2001:db8:%x::%x", n, n),
				fmt.Sprintf("host-%d.example", n),
			}).Draw(t, "addr")
			got, err := k.key([]byte(v))
			clear(afresh.addrs)
			afresh.recent = recentStrings{}
			want, werr := afresh.key([]byte(v))
			if got != want || (err == nil) != (werr == nil) {
				t.Fatalf("key(%q) = %q, %v; afresh %q, %v", v, got, err, want, werr)
			}
		}
	})
}

// TestBlank is blank against what it stands for: bytes.TrimSpace leaves
// nothing of the line.
func TestBlank(t *testing.T) {
	for _, line := range []string{"", " ", "\t \r", "\u00a0", " \u0085 ", "\u3000", "x", " x", "\u00a0x", "\x7f", "{}", "\xff", "\xc2"} {
		if got, want := blank([]byte(line)), len(bytes.TrimSpace([]byte(line))) == 0; got != want {
			t.Errorf("blank(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestQuickKeptStrings is the quick path against the careful one on kept
// strings (the path, the key) whose escape, quote or control character
// falls at each place about the words the quick path scans them by, after
// a line that has taught it the names: the same request, or the same
// refusal.
func TestQuickKeptStrings(t *testing.T) {
	k, err := ParseKey(JSONL, jsonTestKey)
	if err != nil {
		t.Fatal(err)
	}
	shapes := []func(path, key string) string{
		func(path, key string) string {
			return `{"time":"2026-03-01T12:00:00Z","request":{"method":"GET","path":"` + path + `","headers":{"x-api-key":"` + key + `"}},"status":200}`
		},
		func(path, key string) string { // the path in the line's last word
			return `{"time":"2026-03-01T12:00:00Z","status":200,"request":{"headers":{"x-api-key":"` + key + `"},"method":"GET","path":"` + path + `"}}`
		},
	}
	var values []string
	for n := range 20 {
		for _, odd := range []string{``, `\"`, `\\`, `\/`, `\u00e9`, "\t", `\`, `"`} {
			values = append(values, strings.Repeat("a", n)+odd+"/b")
		}
	}
	for _, line := range shapes {
		for _, path := range values {
			for _, key := range []string{"k-1", path} {
				j, err := newJSONLParser(jsonTestFields, k)
				if err != nil {
					t.Fatal(err)
				}
				var p parsed
				if err := j.parse([]byte(line("/a", "k")), &p); err != nil {
					t.Fatal(err)
				}
				l := []byte(line(path, key))
				p = parsed{}
				quick := jsonOutcome(&p, j.parse(l, &p))
				p = parsed{}
				err = j.ex.carefully(l)
				if err == nil {
					err = j.fill(&p, &j.ex.vals)
				}
				if careful := jsonOutcome(&p, err); quick != careful {
					t.Errorf("%s\nquick path: %s\ncareful:    %s", l, quick, careful)
				}
			}
		}
	}
}

// TestQuickSeparators is the quick path against the careful one on a
// line whose names it has learnt from the line before, with one byte of
// white space or punctuation put in at, or in place of, each byte in
// turn: the quick path reads the white space and separators about a
// member itself (skipping white space after a comma only where a name
// did not match), and must accept and refuse the lines the careful path
// does, with the same values and messages.
func TestQuickSeparators(t *testing.T) {
	k, err := ParseKey(JSONL, jsonTestKey)
	if err != nil {
		t.Fatal(err)
	}
	const good = `{"time":"2026-03-01T12:00:00.5Z","level":"info","request":{"method":"GET","path":"/a?p=1","headers":{"x-api-key":"key-0042","user-agent":"curl/8.5.0"}},"status":200,"bytes":1234,"ms":1.5,"ok":true}`
	j, err := newJSONLParser(jsonTestFields, k)
	if err != nil {
		t.Fatal(err)
	}
	for at := range len(good) + 1 {
		for _, c := range " \t\n,:]}{\"" {
			for _, line := range []string{good[:at] + string(c) + good[at:], good[:at] + string(c) + good[min(at+1, len(good)):]} {
				var p parsed
				if err := j.parse([]byte(good), &p); err != nil { // the names learnt
					t.Fatal(err)
				}
				p = parsed{}
				quick := jsonOutcome(&p, j.parse([]byte(line), &p))
				p = parsed{}
				err := j.ex.carefully([]byte(line))
				if err == nil {
					err = j.fill(&p, &j.ex.vals)
				}
				if careful := jsonOutcome(&p, err); quick != careful {
					t.Fatalf("%s\nquick path: %s\ncareful:    %s", line, quick, careful)
				}
			}
		}
	}
}

// TestReorderQueuePopDue is the reorder queue against a sorted list:
// requests pushed mostly in order, some earlier than the latest (the
// heap's), popped up to limits that rise as the reader's do; popDue must
// give, in arrival then line order, exactly the requests at or before
// the limit, with At set from the arrival.
func TestReorderQueuePopDue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q reorderQueue
		var model []pending // sorted by before
		latest, line := int64(0), 0
		for range rapid.IntRange(1, 300).Draw(t, "steps") {
			if rapid.IntRange(0, 3).Draw(t, "push?") > 0 {
				line++
				at := latest + rapid.Int64Range(-5, 3).Draw(t, "step")
				latest = max(latest, at)
				p := pending{at: at, rec: Record{Line: line}}
				q.push(&p)
				k := len(model)
				for k > 0 && p.before(&model[k-1]) {
					k--
				}
				model = append(model[:k], append([]pending{p}, model[k:]...)...)
				continue
			}
			limit := latest - rapid.Int64Range(0, 4).Draw(t, "behind")
			var rec Record
			for q.popDue(limit, &rec) {
				if len(model) == 0 || model[0].at > limit {
					t.Fatalf("popped line %d at %v past limit %d; model has %v", rec.Line, rec.At, limit, model)
				}
				if want := model[0]; rec.Line != want.rec.Line || rec.At.UnixNano() != want.at {
					t.Fatalf("popped line %d at %d, want line %d at %d", rec.Line, rec.At.UnixNano(), want.rec.Line, want.at)
				}
				model = model[1:]
			}
			if len(model) > 0 && model[0].at <= limit {
				t.Fatalf("nothing popped at limit %d; line %d at %d is due", limit, model[0].rec.Line, model[0].at)
			}
		}
	})
}

// TestReaderMethod is the method's string against its bytes: the usual
// methods (written out in method), others of their lengths and cases,
// and any other.
func TestReaderMethod(t *testing.T) {
	r := &Reader{strs: newInterner(16)}
	for _, m := range []string{"GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "GEX", "POSX", "HEAX", "PUX", "DELETX", "PATCX", "OPTIONX", "", "-", "M-SEARCH", "PROPFIND", "CONNECT", "TRACE"} {
		if got := r.method([]byte(m)); got != m {
			t.Errorf("method(%q) = %q", m, got)
		}
	}
}
