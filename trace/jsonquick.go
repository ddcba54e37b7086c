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
	for s := range e.paths {
		e.vals[s] = jsonValue{}
	}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = e.quickObject(e.root, i, 1)
	return i >= 0 && skipSpace(line, i) == len(line)
}

// quickObject reads the object at e.b[i] for n's fields, as object does
// without all, and returns the index after it, or -1 to give up.
func (e *jsonExtractor) quickObject(n *jsonNode, i, depth int) int {
	b := e.b
	if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1
	}
	for member := 0; ; member++ {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		j, f := n.expected(b, i, member)
		if j < 0 {
			j, f = e.quickKey(n, i)
			if j < 0 {
				return -1
			}
			n.expect(b[i+1:j], f, member)
		}
		// The colon and the value's first byte, white space around
		// them skipped where there is any: most lines have none.
		if i = j + 1; i < len(b) && b[i] != ':' {
			i = skipSpace(b, i)
		}
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		if i++; i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case f != nil && f.leaf != 0 && c == '"':
			// A string kept: as scalar reads it, but without a call
			// when it has no escape.
			if j = plainEnd(b, i+1); j < len(b) && b[j] == '"' {
				e.keep(f.leaf, jsonValue{kind: jsonString, b: b[i+1 : j]})
				i = j + 1
				break
			}
			e.i = i
			if e.scalar(f.leaf) != nil {
				return -1
			}
			i = e.i
		case f != nil && f.leaf != 0:
			e.i = i
			if e.value(f.leaf, f.child, depth) != nil {
				return -1
			}
			i = e.i
		case f != nil && f.child != nil && c == '{':
			i = e.quickObject(f.child, i, depth+1)
		case c == '"':
			// stringEnd, its first word looked at here.
			if i+9 <= len(b) {
				if m := stopMask(binary.LittleEndian.Uint64(b[i+1:])); m != 0 {
					if j = i + 1 + bits.TrailingZeros64(m)/8; b[j] == '"' {
						i = j + 1
						break
					}
				}
			}
			i = stringEnd(b, i)
		case c == '-' || ('0' <= c && c <= '9'):
			i = numberEnd(b, i)
		default: // a literal, an object or array skipped, or no value
			e.i = i
			if e.skip(depth) != nil {
				return -1
			}
			i = e.i
		}
		if i < 0 {
			return -1
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			if i++; i < len(b) && b[i] <= ' ' {
				i = skipSpace(b, i)
			}
		case '}':
			return i + 1
		default:
			return -1
		}
	}
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

// jsonSeen is a key an object of a node had in the line before, at the
// same place: a log's lines are most often written by one statement, with
// the same keys in the same order, and a key found where it was before is
// found with one comparison, not scanned for its end and looked up.
type jsonSeen struct {
	key   []byte     // as written: plain text, no escape, quote or control character
	head  uint64     // its first 8 bytes, as keyWord reads them
	tail  uint64     // its next 8 bytes, likewise, for a key of 9 to 16
	field *jsonField // what it is to n; nil for none of its keys
}

// maxSeen is how many keys of an object a node remembers.
const maxSeen = 32

// expected returns, if the key at b[i] is the one the member-th member of
// n's object had before, the index of its closing quote and its field;
// else -1. A key that matches is plain text (it was, when it was seen)
// followed by its quote, so it ends there, as a scan would find.
func (n *jsonNode) expected(b []byte, i, member int) (int, *jsonField) {
	if member >= len(n.seen) || i+9 > len(b) {
		return -1, nil
	}
	s := &n.seen[member]
	l := len(s.key)
	end := i + 1 + l
	if end >= len(b) || b[end] != '"' || keyWord(b, i+1, l) != s.head {
		return -1, nil
	}
	switch {
	case l <= 8:
	case l <= 16 && i+17 <= len(b): // a word, not a call to memequal
		if keyWord(b, i+9, l-8) != s.tail {
			return -1, nil
		}
	case string(s.key[8:]) != string(b[i+9:end]):
		return -1, nil
	}
	return end, s.field
}

// expect remembers key, of field f, as the member-th member of n's object.
func (n *jsonNode) expect(key []byte, f *jsonField, member int) {
	switch {
	case member < len(n.seen):
	case member == len(n.seen) && member < maxSeen:
		n.seen = append(n.seen, jsonSeen{})
	default:
		return
	}
	s := &n.seen[member]
	var head, tail [8]byte
	copy(head[:], key)
	if len(key) > 8 {
		copy(tail[:], key[8:])
	}
	s.key, s.field = append(s.key[:0], key...), f
	s.head, s.tail = binary.LittleEndian.Uint64(head[:]), binary.LittleEndian.Uint64(tail[:])
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
