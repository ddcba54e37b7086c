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
// work. It checks what it reads: the line is one object, the objects it
// walks to reach a field are well formed (so a line cut off mid-write is
// an error, not a request with the fields it happened to have), and the
// values it keeps are JSON. The value of a field no path reads it only
// skips, finding its end without checking what is inside: a string's
// escapes and control characters, a number's digits, the members of an
// object or array. Checking them cost two thirds of a JSONL log's reading
// (issue 29), for text no request is made of.
//
// Its parts: the fields looked for, a tree of keys (jsonpaths.go); the
// careful path, which reads any line and says what is wrong with one it
// refuses (here); the skipping of values (jsonskip.go); and the quick path
// that reads the usual line first (jsonquick.go).

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

// jsonExtractor finds the values of fields named by dotted paths in JSON
// objects (see newJSONNode for how a path matches). When a path matches
// more than once in a line, the last match counts: {"a":1,"a":2} gives 2,
// as encoding/json does, and {"a.b":1,"a":{"b":2}} gives 2 (encoding/json
// would not look inside "a"'s object when a later "a" replaces it; this
// keeps what it found).
type jsonExtractor struct {
	paths   []string
	root    *jsonNode
	vals    [maxJSONFields]jsonValue
	scratch [maxJSONFields][]byte // unescaped strings
	keybuf  []byte
	closers []byte // the brackets a skipped value has yet to close; see skipNested
	b       []byte
	i       int
}

// newJSONExtractor returns an extractor of paths, at most maxJSONFields.
func newJSONExtractor(paths []string) jsonExtractor {
	return jsonExtractor{paths: paths, root: newJSONNode(paths)}
}

var errJSONDepth = fmt.Errorf("nested more than %d deep", maxJSONDepth)

// extract reads the object in line and fills e.vals, one for each path.
func (e *jsonExtractor) extract(line []byte) error {
	if e.quick(line) {
		return nil
	}
	return e.carefully(line)
}

// carefully is extract without the quick path: it reads any line, and
// says what is wrong with one it refuses.
func (e *jsonExtractor) carefully(line []byte) error {
	if err := e.start(line); err != nil {
		return err
	}
	if err := e.object(e.root, false, 1); err != nil {
		return err
	}
	return e.end()
}

// start sets e to read line, which must open an object, with no value
// found yet.
func (e *jsonExtractor) start(line []byte) error {
	e.b, e.i = line, 0
	for s := range e.paths {
		e.vals[s] = jsonValue{}
	}
	e.ws()
	if e.i >= len(e.b) || e.b[e.i] != '{' {
		return fmt.Errorf("%s is not a JSON object (want one {...} a line)", excerpt(e.b[e.i:]))
	}
	return nil
}

// end checks nothing follows the line's object.
func (e *jsonExtractor) end() error {
	e.ws()
	if e.i < len(e.b) {
		return fmt.Errorf("%s after the JSON object (want one object a line)", excerpt(e.b[e.i:]))
	}
	return nil
}

func (e *jsonExtractor) ws() { e.i = skipSpace(e.b, e.i) }

func (e *jsonExtractor) syntax(want string) error {
	if e.i >= len(e.b) {
		return fmt.Errorf("the JSON ends early (want %s; is the line cut off?)", want)
	}
	return fmt.Errorf("JSON: %s at byte %d (want %s)", excerpt(e.b[e.i:]), e.i+1, want)
}

// object reads the object at e.i, looking in it for n's fields (none if
// n is nil). With all, it checks every value in it; without, only those
// it keeps or walks into, and skips the rest.
func (e *jsonExtractor) object(n *jsonNode, all bool, depth int) error {
	if empty, err := e.open(depth, '}'); empty || err != nil {
		return err
	}
	for {
		key, err := e.name(n != nil)
		if err != nil {
			return err
		}
		var f jsonField
		if n != nil {
			if found := n.find(key); found != nil {
				f = *found
			}
		}
		switch {
		case all || f.leaf != 0:
			err = e.value(f.leaf, f.child, depth)
		case f.child != nil && e.i < len(e.b) && e.b[e.i] == '{':
			err = e.object(f.child, false, depth+1)
		default:
			err = e.skip(depth)
		}
		if err != nil {
			return err
		}
		if done, err := e.afterMember('}'); done || err != nil {
			return err
		}
	}
}

// value reads and checks the value at e.i, keeping it in the slots of
// leaf and looking inside it, if it is an object, for child's fields.
func (e *jsonExtractor) value(leaf uint, child *jsonNode, depth int) error {
	var err error
	switch {
	case e.i < len(e.b) && e.b[e.i] == '{':
		err = e.object(child, true, depth+1)
	case e.i < len(e.b) && e.b[e.i] == '[':
		err = e.array(depth + 1)
	default:
		return e.scalar(leaf)
	}
	if err == nil {
		e.keep(leaf, jsonValue{kind: jsonNested})
	}
	return err
}

// keep sets the value of the slots of leaf to v.
func (e *jsonExtractor) keep(leaf uint, v jsonValue) {
	for ; leaf != 0; leaf &= leaf - 1 {
		e.vals[bits.TrailingZeros(leaf)] = v
	}
}

// scalar reads and checks the string, number, or true, false or null at
// e.i, keeping it in the slots of leaf.
func (e *jsonExtractor) scalar(leaf uint) error {
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
	case c == '-' || ('0' <= c && c <= '9'):
		start := e.i
		if err := e.number(); err != nil {
			return err
		}
		v = jsonValue{kind: jsonNumber, b: e.b[start:e.i]}
	default:
		lit, err := e.literal()
		if err != nil {
			return err
		}
		v = lit
	}
	e.keep(leaf, v)
	return nil
}

func (e *jsonExtractor) array(depth int) error {
	if empty, err := e.open(depth, ']'); empty || err != nil {
		return err
	}
	for {
		e.ws()
		if err := e.value(0, nil, depth); err != nil {
			return err
		}
		if done, err := e.afterMember(']'); done || err != nil {
			return err
		}
	}
}

// open enters the object or array at e.i, nested depth deep, and reports
// whether it is empty (then it has read its close too).
func (e *jsonExtractor) open(depth int, close byte) (empty bool, err error) {
	if depth > maxJSONDepth {
		return false, errJSONDepth
	}
	e.i++ // '{' or '['
	e.ws()
	if e.i < len(e.b) && e.b[e.i] == close {
		e.i++
		return true, nil
	}
	return false, nil
}

// name reads an object member's name and the ':' after it, returning
// the name unescaped if unescaping, else as written (between the quotes).
func (e *jsonExtractor) name(unescaping bool) (key []byte, err error) {
	e.ws()
	if e.i >= len(e.b) || e.b[e.i] != '"' {
		return nil, e.syntax(`a field name in quotes`)
	}
	key, escaped, err := e.str()
	if err != nil {
		return nil, err
	}
	if escaped && unescaping {
		e.keybuf = unescape(e.keybuf[:0], key)
		key = e.keybuf
	}
	e.ws()
	if e.i >= len(e.b) || e.b[e.i] != ':' {
		return nil, e.syntax(`":" after a field name`)
	}
	e.i++
	e.ws()
	return key, nil
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

// literal reads the true, false or null at e.i.
func (e *jsonExtractor) literal() (jsonValue, error) {
	for _, l := range [...]struct {
		text string
		kind jsonKind
	}{{"true", jsonBool}, {"false", jsonBool}, {"null", jsonNull}} {
		if len(e.b)-e.i >= len(l.text) && string(e.b[e.i:e.i+len(l.text)]) == l.text {
			v := jsonValue{kind: l.kind, b: e.b[e.i : e.i+len(l.text)]}
			if l.kind == jsonNull {
				v.b = nil
			}
			e.i += len(l.text)
			return v, nil
		}
	}
	return jsonValue{}, e.syntax("a value")
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
		if i = plainEnd(b, i); i >= len(b) {
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

// plainEnd returns the index of the first strStop byte from b[i] on, or
// len(b): where a string's plain text ends.
func plainEnd(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && !strStop[b[i]] {
		i++
	}
	return i
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

// stopMask marks, in the high bit of each, the bytes of x (little
// endian: b[0] lowest) that are strStop bytes, with the bit tricks of
// "Bit Twiddling Hacks" (haszero, hasless): a string's plain text is
// skipped 8 bytes at a time. The lowest bit set is exact; bits above it
// may be set for bytes that are not stops (a borrow carries up from the
// stop), so only the lowest may be trusted.
func stopMask(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (x - ones*0x20) & ^x & highs // a byte < 0x20
	q := x ^ (ones * '"')
	quote := (q - ones) & ^q & highs
	bs := x ^ (ones * '\\')
	back := (bs - ones) & ^bs & highs
	return less | quote | back
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
