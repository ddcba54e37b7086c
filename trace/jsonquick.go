package trace

import (
	"encoding/binary"
	"math/bits"
)

// The quick path of jsonExtractor.extract. The careful path (object,
// value, skip) keeps its place in e.i and returns an error from every
// step, so that a line it refuses says where and why; that costs a load
// and a store of e.i and a call for each key, colon, value and comma, more
// than the work itself on a line of short fields. The quick path reads the
// usual line with its place in a local variable, and gives the rest (an
// escaped or malformed key, a line cut off, any error) to the careful path,
// which reads it again from the start and says what is wrong.

// quick extracts the values of line as carefully does, and reports
// whether it did. It accepts no line carefully refuses, and finds the
// same values in the lines it accepts: it checks and keeps a value by the
// careful path's value, skips one by the same rules as skip, and hands
// on a key with an escape (which must be unescaped to be matched) or a
// control character (which carefully refuses).
func (e *jsonExtractor) quick(line []byte) bool {
	e.b = line
	e.vals = [maxJSONFields]jsonValue{}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = e.quickObject(e.root, i, 1)
	return i >= 0 && skipSpace(line, i) == len(line)
}

// quickObject reads the object at e.b[i] for n's fields, as object does
// without all, and returns the index after it, or -1 to give up. Each
// member is a name (quickName, or one comparison when it is the name the
// line before had there), a value, and a comma or the closing brace.
// White space after a comma is skipped by quickName, when the name the
// line before had there (which starts with its quote) does not match, not
// looked for after every comma.
func (e *jsonExtractor) quickObject(n *jsonNode, i, depth int) int {
	b := e.b
	if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1
	}
	for member := 0; ; member++ {
		j, f := -1, (*jsonField)(nil)
		if member < len(n.seen) {
			j, f = n.seen[member].match(b, i), n.seen[member].field
		}
		if j < 0 {
			if j, f = e.quickName(n, i, member); j < 0 {
				return -1
			}
		}
		// The value's first byte; most lines have no white space before.
		if j >= len(b) {
			return -1
		}
		c := b[j]
		if c <= ' ' {
			if j = skipSpace(b, j); j >= len(b) {
				return -1
			}
			c = b[j]
		}
		switch {
		case f == nil || (f.leaf == 0 && (f.child == nil || c != '{')): // skipped, as skip does
			switch {
			case c == '"':
				if i = shortStringEnd(b, j); i < 0 {
					i = stringEnd(b, j)
				}
			case c == '-' || ('0' <= c && c <= '9'):
				i = numberEnd(b, j)
			default:
				i = e.quickSkip(j, depth)
			}
		case f.leaf == 0: // an object holding the rest of a path
			i = e.quickObject(f.child, j, depth+1)
		case c == '"': // a string kept: plainEnd, written out to save a call
			rest := b[j+1:] // what is left of the line, a word at a time
			for len(rest) >= 8 {
				if m := stopMask(binary.LittleEndian.Uint64(rest)); m != 0 {
					rest = rest[bits.TrailingZeros64(m)/8:]
					break
				}
				rest = rest[8:]
			}
			if len(rest) < 8 { // the last bytes, fewer than a word
				rest = rest[plainEnd(rest, 0):]
			}
			if len(rest) > 0 && rest[0] == '"' {
				i = len(b) - len(rest) + 1 // after the closing quote
				e.keep(f.leaf, jsonValue{kind: jsonString, b: b[j+1 : i-1]})
				break
			}
			i = e.quickKept(f, j, depth) // escaped, or not a string's end
		default:
			i = e.quickKept(f, j, depth)
		}
		if uint(i) >= uint(len(b)) { // given up (-1), or cut off
			return -1
		}
		c = b[i]
		if c <= ' ' {
			if i = skipSpace(b, i); i >= len(b) {
				return -1
			}
			c = b[i]
		}
		switch i++; c {
		case ',':
		case '}':
			return i
		default:
			return -1
		}
	}
}

// quickName reads the name at e.b[i] (after white space) of the
// member-th member of an object of n's, and the colon after it,
// remembering the name for the next line (see jsonSeen); it returns the
// index after the colon and the name's field, if it is one of n's, or -1
// to give up.
func (e *jsonExtractor) quickName(n *jsonNode, i, member int) (int, *jsonField) {
	b := e.b
	i = skipSpace(b, i)
	if member < len(n.seen) { // a name match could not tell with its words
		if s := &n.seen[member]; s.matchBytes(b, i) >= 0 {
			return i + len(s.name), s.field
		}
	}
	if i >= len(b) || b[i] != '"' {
		return -1, nil
	}
	j, f := e.quickKey(n, i)
	if j < 0 {
		return -1, nil
	}
	colon := j + 1
	if colon < len(b) && b[colon] != ':' {
		colon = skipSpace(b, colon)
	}
	if colon >= len(b) || b[colon] != ':' {
		return -1, nil
	}
	n.expect(b[i+1:j], colon == j+1, f, member)
	return colon + 1, f
}

// shortStringEnd returns, if the string opened by the quote b[i] has its
// closing quote in the word after the opening one, with no backslash before it, the
// index after the closing quote; else -1. Most skipped values are such
// strings: this is the one way of skipping the quick path takes without
// a call. As stringEnd, it does not look at what the string holds.
func shortStringEnd(b []byte, i int) int {
	if i+9 > len(b) {
		return -1
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := binary.LittleEndian.Uint64(b[i+1:])
	q, bs := x^(ones*'"'), x^(ones*'\\')
	m := ((q-ones)&^q | (bs-ones)&^bs) & highs // the lowest bit set is exact, as in stopMask
	if j := i + 1 + bits.TrailingZeros64(m)/8; m != 0 && b[j] == '"' {
		return j + 1
	}
	return -1
}

// quickSkip passes over the value at e.b[i], which no path reads and
// which is no string or number (quickObject passes over those): a
// literal, an object or array, or no value. It returns the index after
// it, or -1 to give up.
func (e *jsonExtractor) quickSkip(i, depth int) int {
	e.i = i
	if e.skip(depth) != nil {
		return -1
	}
	return e.i
}

// quickKept reads and checks the value at e.b[i], kept in f's slots, as
// value does, and returns the index after it, or -1 to give up: a value
// other than the plain string quickObject keeps itself. A number of plain
// digits is kept as it is written, with no more calls.
func (e *jsonExtractor) quickKept(f *jsonField, i, depth int) int {
	b := e.b
	if c := b[i]; '1' <= c && c <= '9' {
		j := i + 1
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == len(b) || !numberByte[b[j]] {
			// What number would read: digits, then no fraction or
			// exponent.
			e.keep(f.leaf, jsonValue{kind: jsonNumber, b: b[i:j]})
			return j
		}
	}
	e.i = i
	if e.value(f.leaf, f.child, depth) != nil {
		return -1
	}
	return e.i
}

// skipSpace returns the index of the first byte from b[i] on that is not
// JSON's white space, or len(b).
func skipSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// quickKey reads the key at e.b[i] in an object of n's, returning the
// index of its closing quote and its field, if it is one of n's; or -1 if
// it has an escape or a control character, or does not end.
func (e *jsonExtractor) quickKey(n *jsonNode, i int) (int, *jsonField) {
	b := e.b
	// plainEnd, its first word looked at here (most keys end in it) to
	// save a call.
	j := i + 1
	if j+8 <= len(b) {
		if m := stopMask(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			j += bits.TrailingZeros64(m) / 8
		} else {
			j = plainEnd(b, j+8)
		}
	} else {
		j = plainEnd(b, j)
	}
	if j >= len(b) || b[j] != '"' {
		return -1, nil
	}
	switch {
	case n.byLen[min(j-i-1, maxKeyLen)] == 0: // no key of its length: no call
		return j, nil
	case i+9 <= len(b):
		return j, n.findAt(b, i+1, j)
	}
	return j, n.find(b[i+1 : j])
}

// jsonSeen is the name an object of a node had in the line before, at the
// same place: a log's lines are most often written by one statement, with
// the same keys in the same order, and a name found where it was before is
// found with two comparisons of whole words, not scanned for its end and
// looked up.
type jsonSeen struct {
	// name is the member's name as the line wrote it, from the opening
	// quote to the colon (`"key":`): a plain key (no escape, quote or
	// control character) and no white space before the colon. Empty for
	// a name not remembered, which matches nothing.
	name []byte
	// word is name's first 16 bytes as two little-endian words, zeros
	// after its end, which mask clears in the line's words.
	word, mask [2]uint64
	field      *jsonField // what it is to n; nil for none of its keys
}

// maxSeen is how many keys of an object a node remembers.
const maxSeen = 32

// match returns, if b[i:] starts with s's name, the index after its
// colon; else -1. A name that matches is a plain key (it was, when it was
// seen) and its closing quote and colon, so it ends there, as a scan
// would find. It compares two words, with no call (match is inlined):
// for a name of more than 16 bytes, or one with fewer than 16 bytes of
// the line from it, it returns -1, and quickName compares the bytes
// (matchBytes).
func (s *jsonSeen) match(b []byte, i int) int {
	if uint(len(s.name)-1) >= 16 || i+16 > len(b) { // no name (0-1 wraps), or a long one
		return -1
	}
	w := b[i : i+16]
	if binary.LittleEndian.Uint64(w)&s.mask[0] != s.word[0] || binary.LittleEndian.Uint64(w[8:])&s.mask[1] != s.word[1] {
		return -1
	}
	return i + len(s.name)
}

// matchBytes is match for a long name, one near the end of the line, or
// none.
func (s *jsonSeen) matchBytes(b []byte, i int) int {
	if len(s.name) == 0 || len(b)-i < len(s.name) || string(b[i:i+len(s.name)]) != string(s.name) {
		return -1
	}
	return i + len(s.name)
}

// expect remembers key, of field f, as the name of the member-th member of
// n's object; colonNext says whether the colon follows its closing quote
// (a name with white space before its colon is not remembered: it would
// never match).
func (n *jsonNode) expect(key []byte, colonNext bool, f *jsonField, member int) {
	switch {
	case member < len(n.seen):
	case member == len(n.seen) && member < maxSeen:
		n.seen = append(n.seen, jsonSeen{})
	default:
		return
	}
	s := &n.seen[member]
	s.name, s.field = s.name[:0], f
	if !colonNext {
		return
	}
	s.name = append(append(append(s.name, '"'), key...), '"', ':')
	var w [16]byte
	copy(w[:], s.name)
	for k := range s.word {
		s.word[k] = binary.LittleEndian.Uint64(w[8*k:])
		s.mask[k] = 0
		if l := len(s.name) - 8*k; l >= 8 {
			s.mask[k] = ^uint64(0)
		} else if l > 0 {
			s.mask[k] = 1<<(8*l) - 1
		}
	}
}

// keyWord is the first 8 bytes of the l-byte key at b[from] (fewer: zeros
// after) as a little-endian word; b holds 8 bytes from from on.
func keyWord(b []byte, from, l int) uint64 {
	w := binary.LittleEndian.Uint64(b[from:])
	if l < 8 {
		w &= 1<<(8*l) - 1
	}
	return w
}
