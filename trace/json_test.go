package trace

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// benchJSONLine is a line of the JSON-lines log BenchmarkReader reads, and
// benchJSONPaths the fields its "jsonl" case looks for.
const benchJSONLine = `{"time":"2026-03-01T12:00:00.042Z","level":"info","msg":"request","client":"10.3.121.2","request":{"method":"GET","path":"/api/items/42?page=2","headers":{"x-api-key":"key-0889","user-agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0 Safari/537.36"}},"status":200,"bytes":142,"duration_ms":31.377}`

var benchJSONPaths = []string{"time", "request.method", "request.path", "status", "request.headers.x-api-key"}

// BenchmarkJSONExtract is one line's extraction alone, by the extractor
// that skips what no path reads and by the one that checks every byte:
//
//	go test -run '^$' -bench JSONExtract ./trace
func BenchmarkJSONExtract(b *testing.B) {
	line := []byte(benchJSONLine)
	e, c := newJSONExtractor(benchJSONPaths), newCheckingExtractor(benchJSONPaths)
	for _, bc := range []struct {
		name    string
		extract func([]byte) error
	}{{"skipping", e.extract}, {"careful", e.carefully}, {"checking", c.extract}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for range b.N {
				if err := bc.extract(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The JSON lines the property tests read: objects with the fields a
// JSONL parser of jsonTestFields and jsonTestKey looks for (time, status,
// request.method, request.path, request.headers.x-api-key, also written
// with escapes and as flat dotted keys), and fields no path reads (junk:
// any JSON), with white space here and there.
var (
	jsonTestFields = Fields{Method: "request.method", Path: "request.path"}
	jsonTestKey    = "request.headers.x-api-key"
)

// jsonMember is a member of a generated object: its key and value as
// written, and whether no path reads it (so the extractor skips its
// value).
type jsonMember struct {
	key, val string
	junk     bool
}

// genJSONLine draws a line as members of its top level, its request
// object and that object's headers.
func genJSONLine(t *rapid.T) (top, request, headers []jsonMember) {
	times := []string{`"2026-03-01T12:00:00Z"`, `"2026-03-01T12:00:00.25+01:00"`, `1772366400`, `1772366400.5`, `"1772366400"`, `"\u0032026-03-01T12:00:00Z"`, `null`}
	statuses := []string{`200`, `429`, `"503"`, `null`, `"-"`}
	strs := []string{`"GET"`, `"POST"`, `"/api/items?page=2"`, `"/x\/y"`, `"k-1"`, `"k\"2\\"`, `"\u00e9\ud83d\ude00"`, `""`, `"-"`, `"http://h.example/p?q=1"`}
	member := func(key string, vals []string) jsonMember {
		return jsonMember{key: key, val: rapid.SampledFrom(vals).Draw(t, key)}
	}
	junk := func(label string) []jsonMember {
		var ms []jsonMember
		for i := range rapid.IntRange(0, 3).Draw(t, label+"-junk") {
			// Some alike to a key read: as long, the same first 8 bytes.
			key := rapid.SampledFrom([]string{"level", "msg", "bytes", "tim", "times", `re\u0071`, "status.code", "request.methods", "request.math", "x-api-kex", "tame"}).Draw(t, label+"-junk-key")
			ms = append(ms, jsonMember{key: key, val: genJSONValue(t, 0, fmt.Sprint(label, i)), junk: true})
		}
		return ms
	}
	if rapid.Bool().Draw(t, "time?") {
		top = append(top, member(rapid.SampledFrom([]string{"time", `\u0074ime`, `ti\u006De`}).Draw(t, "time-key"), times))
	}
	if rapid.Bool().Draw(t, "status?") {
		top = append(top, member("status", statuses))
	}
	if rapid.IntRange(0, 4).Draw(t, "flat?") == 0 { // found as a dotted key
		top = append(top, member(rapid.SampledFrom([]string{"request.method", "request.path", "request.headers.x-api-key"}).Draw(t, "flat-key"), strs))
	}
	for _, k := range []string{"method", "path"} {
		if rapid.Bool().Draw(t, k+"?") {
			request = append(request, member(k, strs))
		}
	}
	if rapid.Bool().Draw(t, "key?") {
		headers = append(headers, member(rapid.SampledFrom([]string{"x-api-key", `x-api-\u006bey`}).Draw(t, "key-key"), strs))
	}
	top = append(top, junk("top")...)
	request = append(request, junk("request")...)
	headers = append(headers, junk("headers")...)
	for _, ms := range []*[]jsonMember{&top, &request, &headers} {
		perm := rapid.Permutation(*ms).Draw(t, "order")
		*ms = perm
	}
	return top, request, headers
}

// genJSONValue draws any JSON value.
func genJSONValue(t *rapid.T, depth int, label string) string {
	switch k := rapid.IntRange(0, 5).Draw(t, label+"-kind"); {
	case k == 0 && depth < 3:
		var b strings.Builder
		b.WriteByte('{')
		for i := range rapid.IntRange(0, 3).Draw(t, label+"-members") {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%s":%s`, rapid.SampledFrom([]string{"a", "b", `\"q`, "time"}).Draw(t, label+"-key"), genJSONValue(t, depth+1, label))
		}
		return b.String() + "}"
	case k == 1 && depth < 3:
		var vs []string
		for range rapid.IntRange(0, 3).Draw(t, label+"-items") {
			vs = append(vs, genJSONValue(t, depth+1, label))
		}
		return "[" + strings.Join(vs, ", ") + "]"
	case k == 2:
		return rapid.SampledFrom([]string{"true", "false", "null"}).Draw(t, label+"-lit")
	case k == 3:
		return rapid.SampledFrom([]string{"0", "-1.5", "1e3", "12345678901234567890", "-0.0E-2"}).Draw(t, label+"-num")
	}
	return rapid.SampledFrom([]string{`"plain"`, `""`, `"esc\"aped\\"`, `"\\\\"`, `"\u00e9\ud83d\ude00"`, `"tab\tnl\n"`, `"\ud800"`, `"é"`, `"}],{["`}).Draw(t, label+"-str")
}

// renderJSONLine writes the members as a line, with white space drawn
// between its tokens.
func renderJSONLine(t *rapid.T, top, request, headers []jsonMember) string {
	ws := func() string { return rapid.SampledFrom([]string{"", "", "", " ", "\t "}).Draw(t, "ws") }
	object := func(ms []jsonMember, inner string) string {
		var b strings.Builder
		b.WriteString("{" + ws())
		for i, m := range ms {
			if i > 0 {
				b.WriteString("," + ws())
			}
			fmt.Fprintf(&b, `"%s"%s:%s%s%s`, m.key, ws(), ws(), m.val, ws())
		}
		if inner != "" {
			if len(ms) > 0 {
				b.WriteString("," + ws())
			}
			b.WriteString(inner)
		}
		return b.String() + "}"
	}
	req := ""
	if len(request) > 0 || len(headers) > 0 {
		req = `"request":` + object(request, `"headers":`+object(headers, ""))
	}
	return ws() + object(top, req) + ws()
}

// badJunk are values no JSON reader accepts, but whose end is where a
// skipping reader looks for it.
var badJunk = []string{`01`, `1.`, `-`, `1e`, `1.2.3`, `"\q"`, "\"a\x01b\"", `"\u12G4"`, `{"a" 1}`, `[1,]`, `{,}`, strings.Repeat("[", 300) + strings.Repeat("]", 300)}

// jsonOutcome is what a line comes to: the request parsed from it, or
// the error refusing it.
func jsonOutcome(p *parsed, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("at %d method %q target %q status %d key %q", p.at, p.method, p.target, p.status, p.keyv)
}

// outcomes parses line with the extractor (quick, then careful), the
// careful path alone, and the checking extractor that was (the oracle).
// The extractor has read the lines before first, as a Reader's has: its
// quick path expects the keys they had.
func outcomes(t *rapid.T, line string, before ...string) (fast, careful, checking string) {
	k, err := ParseKey(JSONL, jsonTestKey)
	if err != nil {
		t.Fatal(err)
	}
	j, err := newJSONLParser(jsonTestFields, k)
	if err != nil {
		t.Fatal(err)
	}
	var p parsed
	for _, l := range before {
		_ = j.parse([]byte(l), &p)
	}
	p = parsed{}
	fast = jsonOutcome(&p, j.parse([]byte(line), &p))
	p = parsed{}
	err = j.ex.carefully([]byte(line))
	if err == nil {
		err = j.fill(&p, &j.ex.vals)
	}
	careful = jsonOutcome(&p, err)
	p = parsed{}
	o := newCheckingExtractor(j.ex.paths)
	err = o.extract([]byte(line))
	if err == nil {
		err = j.fill(&p, &o.vals)
	}
	return fast, careful, jsonOutcome(&p, err)
}

// TestJSONSkippingAgainstChecking is the skipping extractor against the
// checking one it replaced, on lines drawn by genJSONLine:
//
//   - undamaged, or damaged only where the line is read (a kept value, a
//     walked object's punctuation, what stands around the object): the
//     same request, or the same refusal with the same message;
//   - cut off anywhere, or a string or object skipped left open: both
//     refuse;
//   - damaged only inside a value no path reads (badJunk): the request of
//     the undamaged line, where the checking extractor refuses;
//   - any byte changed anywhere: if the checking extractor takes the line,
//     the same request; if the skipping one refuses it, so does the
//     checking one.
//
// And always: the quick path and the careful path alone agree, to the
// message, after the same line undamaged (the quick path expects its
// keys), another line, or none.
func TestJSONSkippingAgainstChecking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		top, request, headers := genJSONLine(t)
		clean := renderJSONLine(t, top, request, headers)
		line := clean
		damage := rapid.SampledFrom([]string{"none", "read", "unclosed", "junk", "byte"}).Draw(t, "damage")
		switch damage {
		case "unclosed":
			line = clean[:rapid.IntRange(0, strings.LastIndexByte(clean, '}')).Draw(t, "cut")]
			if junk := junkOf(top, request, headers); len(junk) > 0 && rapid.Bool().Draw(t, "open?") {
				m := rapid.SampledFrom(junk).Draw(t, "junk")
				m.val = rapid.SampledFrom([]string{`"open`, `{"open":1`, `[`}).Draw(t, "open")
				line = renderJSONLine(t, top, request, headers)
			}
		case "read":
			line = damageRead(t, top, request, headers, clean)
		case "junk":
			junk := junkOf(top, request, headers)
			if len(junk) == 0 {
				t.Skip("no junk to damage")
			}
			m := rapid.SampledFrom(junk).Draw(t, "damaged")
			m.val = rapid.SampledFrom(badJunk).Draw(t, "bad")
			line = renderJSONLine(t, top, request, headers)
		case "byte":
			b := []byte(clean)
			i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
			switch rapid.IntRange(0, 2).Draw(t, "how") {
			case 0:
				b[i] = rapid.SampledFrom([]byte(`{}[]":,\ 0a.-e"`)).Draw(t, "byte")
			case 1:
				b = append(b[:i], b[i+1:]...)
			case 2:
				b = append(b[:i], append([]byte{rapid.SampledFrom([]byte(`{}[]":,\ 0"`)).Draw(t, "byte")}, b[i:]...)...)
			}
			line = string(b)
		}
		// After the undamaged line, a line of other keys, both, or none.
		var before []string
		switch rapid.IntRange(0, 3).Draw(t, "before") {
		case 0:
			before = []string{clean}
		case 1, 2:
			top, request, headers := genJSONLine(t)
			before = []string{renderJSONLine(t, top, request, headers), clean}[:rapid.IntRange(1, 2).Draw(t, "befores")]
		}
		fast, careful, checking := outcomes(t, line, before...)
		if fast != careful {
			t.Fatalf("%s\nquick path: %s\ncareful:    %s", line, fast, careful)
		}
		switch damage {
		case "none", "read":
			if fast != checking {
				t.Fatalf("%s\nskipping: %s\nchecking: %s", line, fast, checking)
			}
		case "junk":
			_, _, want := outcomes(t, clean)
			if fast != want {
				t.Fatalf("%s\nskipping: %s\nchecking, undamaged: %s\n(%s)", line, fast, want, clean)
			}
			if !strings.HasPrefix(checking, "error: ") {
				t.Fatalf("%s: the checking extractor takes the damage: %s", line, checking)
			}
		case "unclosed":
			// Both refuse, but not always with one message: cut in a
			// number no path reads, the checking extractor wants a
			// digit, the skipping one the object's "," or "}"; a string
			// left open runs on to the next quote, which the checking
			// extractor may refuse for a tab on the way.
			if !strings.HasPrefix(fast, "error: ") || !strings.HasPrefix(checking, "error: ") {
				t.Fatalf("%s\nskipping: %s\nchecking: %s", line, fast, checking)
			}
		case "byte":
			fastRefuses, checkingRefuses := strings.HasPrefix(fast, "error: "), strings.HasPrefix(checking, "error: ")
			if !checkingRefuses && fast != checking || fastRefuses && !checkingRefuses {
				t.Fatalf("%s\nskipping: %s\nchecking: %s", line, fast, checking)
			}
		}
	})
}

// damageRead breaks the line where the extractor reads it: a value it
// keeps, the punctuation of an object it walks, what stands around the
// object, a skipped value that is no value (a literal misspelt, brackets
// that do not match: where a value ends is read). The members' values it leaves valid.
func damageRead(t *rapid.T, top, request, headers []jsonMember, clean string) string {
	var kept []*jsonMember
	for _, ms := range [][]jsonMember{top, request, headers} {
		for i := range ms {
			if !ms[i].junk {
				kept = append(kept, &ms[i])
			}
		}
	}
	junk := junkOf(top, request, headers)
	switch how := rapid.IntRange(0, 4).Draw(t, "read-damage"); {
	case how == 0 && len(kept) > 0:
		m := rapid.SampledFrom(kept).Draw(t, "kept")
		m.val = rapid.SampledFrom([]string{`01`, `1.`, `-`, `"\q"`, "\"a\x01b\"", `"\u12G4"`, `"open`, `tru`, `nul`, `x`, `{"a" 1}`, `[1,]`}).Draw(t, "bad-kept")
		return renderJSONLine(t, top, request, headers)
	case how == 4 && len(junk) > 0:
		// Not a value at all: a skip must know where a value ends.
		m := rapid.SampledFrom(junk).Draw(t, "junk")
		m.val = rapid.SampledFrom([]string{`tru`, `nul`, `fals`, `x`, `[[]`, `[}`, `{"a":1]`}).Draw(t, "not-a-value")
		return renderJSONLine(t, top, request, headers)
	case how == 1:
		return rapid.SampledFrom([]string{"[", "x", `"`, "1"}).Draw(t, "before") + clean
	case how == 2:
		return clean + rapid.SampledFrom([]string{"x", "{}", ",", "}"}).Draw(t, "after")
	}
	// A walked object's punctuation: drop the colon or comma, or the
	// key's opening quote, of the first place the pattern stands outside
	// the members' values.
	s := renderJSONLine(t, top, request, headers)
	drop := rapid.SampledFrom([]string{`":`, `",`, `{"`}).Draw(t, "drop")
	for _, ms := range [][]jsonMember{top, request, headers} {
		for _, m := range ms {
			if strings.Contains(m.val, drop) {
				return s // the values hold it: dropping it there would damage a value
			}
		}
	}
	if i := strings.Index(s, drop); i >= 0 {
		return s[:i+1] + s[i+2:]
	}
	return s
}

// junkOf returns the members no path reads.
func junkOf(member ...[]jsonMember) []*jsonMember {
	var junk []*jsonMember
	for _, ms := range member {
		for i := range ms {
			if ms[i].junk {
				junk = append(junk, &ms[i])
			}
		}
	}
	return junk
}
