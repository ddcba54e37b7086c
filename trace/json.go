package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// A small JSON reader that walks one object and keeps the values of a few
// fields, for JSON lines: encoding/json would build a map or reflect into
// a struct for every line, ten times the cost of the rest of a line's
// work. It checks the whole line is JSON (so a line cut off mid-write is
// an error, not a request with the fields it happened to have) but keeps
// only what was asked for.

// maxJSONDepth bounds the nesting of arrays and objects in a line.
const maxJSONDepth = 256

// jsonKind is the kind of a value found.
type jsonKind uint8

const (
	jsonNone   jsonKind = iota // the field is not in the line
	jsonString                 // its value is a string
	jsonNumber                 // a number, as written
	jsonBool                   // true or false, as written
	jsonNull                   // null
	jsonNested                 // an object or an array
)

func (k jsonKind) String() string {
	return [...]string{"missing", "a string", "a number", "a boolean", "null", "an object or array"}[k]
}

// jsonValue is a field's value. For a string, b is its text unescaped.
type jsonValue struct {
	kind jsonKind
	b    []byte
}

// maxJSONFields is how many fields one extractor looks for.
const maxJSONFields = 6

// jsonMatch is a field still being looked for, and the part of its dotted
// path not yet matched.
type jsonMatch struct {
	slot int
	rest string
}

// jsonExtractor finds the values of fields named by dotted paths in JSON
// objects. A path's dots separate nested objects' keys, but a key may
// itself hold dots: "a.b.c" finds {"a":{"b":{"c":1}}}, {"a.b":{"c":1}} and
// {"a.b.c":1}. When a path matches more than once in a line, the last
// match counts: {"a":1,"a":2} gives 2, as encoding/json does, and
// {"a.b":1,"a":{"b":2}} gives 2 (encoding/json would not look inside
// "a"'s object when a later "a" replaces it; this keeps what it found).
type jsonExtractor struct {
	paths   []string
	vals    [maxJSONFields]jsonValue
	scratch [maxJSONFields][]byte // unescaped strings
	matches []jsonMatch           // a stack; see object
	keybuf  []byte
	b       []byte
	i       int
}

var errJSONDepth = fmt.Errorf("nested more than %d deep", maxJSONDepth)

// extract reads the object in line and fills e.vals, one for each path.
func (e *jsonExtractor) extract(line []byte) error {
	e.b, e.i = line, 0
	for s := range e.paths {
		e.vals[s] = jsonValue{}
	}
	e.matches = e.matches[:0]
	for s, p := range e.paths {
		e.matches = append(e.matches, jsonMatch{slot: s, rest: p})
	}
	e.ws()
	if e.i >= len(e.b) || e.b[e.i] != '{' {
		return fmt.Errorf("%s is not a JSON object (want one {...} a line)", excerpt(e.b[e.i:]))
	}
	if err := e.object(0, len(e.paths), 1); err != nil {
		return err
	}
	e.ws()
	if e.i < len(e.b) {
		return fmt.Errorf("%s after the JSON object (want one object a line)", excerpt(e.b[e.i:]))
	}
	return nil
}

func (e *jsonExtractor) ws() {
	for e.i < len(e.b) {
		switch e.b[e.i] {
		case ' ', '\t', '\r', '\n':
			e.i++
		default:
			return
		}
	}
}

func (e *jsonExtractor) syntax(want string) error {
	if e.i >= len(e.b) {
		return fmt.Errorf("the JSON ends early (want %s; is the line cut off?)", want)
	}
	return fmt.Errorf("JSON: %s at byte %d (want %s)", excerpt(e.b[e.i:]), e.i+1, want)
}

// object reads the object at e.i, whose fields may hold the values
// e.matches[from:to] look for.
//
// The matches of nested objects are pushed on e.matches and popped after,
// rather than kept in arrays of each call: a call that recurses makes its
// arrays escape to the heap, an allocation a field.
func (e *jsonExtractor) object(from, to, depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	e.i++ // '{'
	e.ws()
	if e.i < len(e.b) && e.b[e.i] == '}' {
		e.i++
		return nil
	}
	for {
		e.ws()
		if e.i >= len(e.b) || e.b[e.i] != '"' {
			return e.syntax(`a field name in quotes`)
		}
		raw, escaped, err := e.str()
		if err != nil {
			return err
		}
		key := raw
		if escaped && to > from {
			e.keybuf = unescape(e.keybuf[:0], raw)
			key = e.keybuf
		}
		e.ws()
		if e.i >= len(e.b) || e.b[e.i] != ':' {
			return e.syntax(`":" after a field name`)
		}
		e.i++
		e.ws()
		// Which of the matches this field ends (leaf, a bit a slot) or
		// leads into (pushed).
		var leaf uint
		sub := len(e.matches)
		for m := from; m < to; m++ {
			rest := e.matches[m].rest
			if len(rest) < len(key) || rest[:len(key)] != string(key) { // no allocation
				continue
			}
			switch r := rest[len(key):]; {
			case r == "":
				leaf |= 1 << e.matches[m].slot
			case r[0] == '.':
				e.matches = append(e.matches, jsonMatch{slot: e.matches[m].slot, rest: r[1:]})
			}
		}
		err = e.value(leaf, sub, len(e.matches), depth)
		e.matches = e.matches[:sub]
		if err != nil {
			return err
		}
		if done, err := e.afterMember('}'); done || err != nil {
			return err
		}
	}
}

// value reads the value at e.i, keeping it in the slots of leaf and
// looking inside it, if it is an object, for e.matches[from:to].
func (e *jsonExtractor) value(leaf uint, from, to, depth int) error {
	if e.i >= len(e.b) {
		return e.syntax("a value")
	}
	var v jsonValue
	switch c := e.b[e.i]; {
	case c == '"':
		raw, escaped, err := e.str()
		if err != nil {
			return err
		}
		v = jsonValue{kind: jsonString, b: raw}
		if escaped && leaf != 0 {
			s := bits.TrailingZeros(leaf)
			e.scratch[s] = unescape(e.scratch[s][:0], raw)
			v.b = e.scratch[s]
		}
	case c == '{':
		if err := e.object(from, to, depth+1); err != nil {
			return err
		}
		v = jsonValue{kind: jsonNested}
	case c == '[':
		if err := e.array(depth + 1); err != nil {
			return err
		}
		v = jsonValue{kind: jsonNested}
	case c == '-' || ('0' <= c && c <= '9'):
		start := e.i
		if err := e.number(); err != nil {
			return err
		}
		v = jsonValue{kind: jsonNumber, b: e.b[start:e.i]}
	case c == 't':
		if err := e.literal("true"); err != nil {
			return err
		}
		v = jsonValue{kind: jsonBool, b: e.b[e.i-4 : e.i]}
	case c == 'f':
		if err := e.literal("false"); err != nil {
			return err
		}
		v = jsonValue{kind: jsonBool, b: e.b[e.i-5 : e.i]}
	case c == 'n':
		if err := e.literal("null"); err != nil {
			return err
		}
		v = jsonValue{kind: jsonNull}
	default:
		return e.syntax("a value")
	}
	for ; leaf != 0; leaf &= leaf - 1 {
		e.vals[bits.TrailingZeros(leaf)] = v
	}
	return nil
}

func (e *jsonExtractor) array(depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	e.i++ // '['
	e.ws()
	if e.i < len(e.b) && e.b[e.i] == ']' {
		e.i++
		return nil
	}
	for {
		e.ws()
		if err := e.value(0, 0, 0, depth); err != nil {
			return err
		}
		if done, err := e.afterMember(']'); done || err != nil {
			return err
		}
	}
}

// afterMember reads what follows an object's or array's member: a ',' and
// another member to come, or close, the container's end (done).
func (e *jsonExtractor) afterMember(close byte) (done bool, err error) {
	e.ws()
	if e.i < len(e.b) {
		switch e.b[e.i] {
		case ',':
			e.i++
			return false, nil
		case close:
			e.i++
			return true, nil
		}
	}
	return false, e.syntax(`"," or "` + string(close) + `"`)
}

func (e *jsonExtractor) literal(want string) error {
	if len(e.b)-e.i < len(want) || string(e.b[e.i:e.i+len(want)]) != want {
		return e.syntax("a value")
	}
	e.i += len(want)
	return nil
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (e *jsonExtractor) number() error {
	b, i := e.b, e.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digitsFrom := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsFrom(i)
	default:
		e.i = i
		return e.syntax("a digit")
	}
	if i < len(b) && b[i] == '.' {
		j := digitsFrom(i + 1)
		if j == i+1 {
			e.i = j
			return e.syntax("a digit after the decimal point")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsFrom(i)
		if j == i {
			e.i = j
			return e.syntax("a digit in the exponent")
		}
		i = j
	}
	e.i = i
	return nil
}

var errJSONControl = errors.New("JSON: a control character inside a string (want it escaped, e.g. \\n)")

// str reads the string at e.i and returns its text as written (between
// the quotes), and whether it has escapes, having checked them.
func (e *jsonExtractor) str() (raw []byte, escaped bool, err error) {
	b := e.b
	start := e.i + 1
	i := start
	for {
		for i+8 <= len(b) && !wordHasStop(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			e.i = i
			return nil, false, e.syntax(`a closing quote`)
		}
		switch c := b[i]; {
		case c == '"':
			e.i = i + 1
			return b[start:i], escaped, nil
		case c < 0x20:
			return nil, false, errJSONControl
		}
		// A backslash.
		escaped = true
		if i+1 >= len(b) {
			e.i = i + 1
			return nil, false, e.syntax("an escape")
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
				e.i = i
				return nil, false, e.syntax(`\u and four hex digits`)
			}
			i += 6
		default:
			e.i = i
			return nil, false, e.syntax(`an escape: \" \\ \/ \b \f \n \r \t or \uXXXX`)
		}
	}
}

// strStop marks the bytes that end a run of plain text in a JSON string:
// the quote, the backslash and the control characters. One table look-up
// a byte is about twice as fast as three comparisons.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// wordHasStop reports whether any of the 8 bytes of x is a strStop byte,
// with the bit tricks of "Bit Twiddling Hacks" (haszero, hasless): a
// string's plain text is skipped 8 bytes at a time. It may not say which
// byte; the byte loop after it finds that.
func wordHasStop(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (x - ones*0x20) & ^x & highs // a byte < 0x20
	q := x ^ (ones * '"')
	quote := (q - ones) & ^q & highs
	bs := x ^ (ones * '\\')
	back := (bs - ones) & ^bs & highs
	return less|quote|back != 0
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if _, ok := unhex(c); !ok {
			return false
		}
	}
	return true
}

func unhex(c byte) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		v, _ := unhex(c)
		r = r<<4 | v
	}
	return r
}

// unescape appends the text of the JSON string raw (checked by str) to
// dst. A \u escape of half a surrogate pair without its other half is
// U+FFFD, as encoding/json makes it.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				return append(dst, raw[i:]...)
			}
			dst = append(dst, raw[i:i+j]...)
			i += j
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16IsHigh(r) && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := hex4(raw[i+2:]); utf16IsLow(lo) {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r) // a lone surrogate is appended as U+FFFD
			continue
		default: // " \ /
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

func utf16IsHigh(r rune) bool { return 0xD800 <= r && r < 0xDC00 }
func utf16IsLow(r rune) bool  { return 0xDC00 <= r && r < 0xE000 }
