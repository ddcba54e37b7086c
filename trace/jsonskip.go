package trace

import "bytes"

// Skipping the values of a JSON line that no path reads: where each ends,
// found without checking what is inside it.

// skip passes over the value at e.i, which no path reads, finding where
// it ends without checking what is inside it: a string's escapes and
// control characters, a number's grammar, an object's or array's
// members. What it does check is what finding the end takes (a closing
// quote, the brackets' balance, a literal's letters, a value at all), so
// a line cut off inside a skipped value is an error still.
//
// Where skipping finds an error, the value is read again, checked, for
// the error the checking reader gives: the same message, at the same
// byte, as when nothing was skipped.
func (e *jsonExtractor) skip(depth int) error {
	if e.i >= len(e.b) {
		return e.syntax("a value")
	}
	start := e.i
	var ok bool
	switch c := e.b[e.i]; {
	case c == '"':
		ok = e.skipString()
	case c == '{' || c == '[':
		ok = e.skipNested()
	case c == '-' || ('0' <= c && c <= '9'):
		e.i = numberEnd(e.b, e.i)
		return nil
	default:
		_, err := e.literal()
		return err
	}
	if ok {
		return nil
	}
	e.i = start
	if err := e.value(0, nil, depth); err != nil {
		return err
	}
	return e.syntax("the end of the value") // not reached: the checking reader found the end
}

// numberByte marks the bytes a JSON number is written with.
var numberByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eE") {
		t[c] = true
	}
	return t
}()

// skipString moves past the string at e.i and reports whether it ends
// in the line.
func (e *jsonExtractor) skipString() bool {
	end := stringEnd(e.b, e.i)
	if end < 0 {
		return false
	}
	e.i = end
	return true
}

// stringEnd returns the index after the string whose opening quote is
// b[i], or -1 if it does not end in b. A quote ends it unless an odd
// number of backslashes stand before it (escaping the quote; an even
// number escape each other). What is between the quotes is not checked.
func stringEnd(b []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i - 1
		for b[k] == '\\' { // stops at the opening quote at the latest
			k--
		}
		i++
		if (i-2-k)%2 == 0 {
			return i
		}
	}
}

// numberEnd returns the index after the number that starts at b[i]: the
// bytes a number is written with, not checked for a number's grammar.
func numberEnd(b []byte, i int) int {
	for i++; i < len(b) && numberByte[b[i]]; i++ {
	}
	return i
}

// skipNested moves past the object or array at e.i and reports whether
// it ends in the line: where each bracket opened outside a string has
// closed, each by its own kind (a "]" closing a "{" is no end: an array
// left open would otherwise be closed by the brackets of the objects
// around it). It sets no bound on depth: e.closers grows as deep as the
// brackets go, and is kept for the next line.
func (e *jsonExtractor) skipNested() bool {
	b := e.b
	closers := e.closers[:0]
	defer func() { e.closers = closers }()
	for i := e.i; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			closers = append(closers, c+2) // '}' is '{'+2, ']' is '['+2
		case '}', ']':
			if closers[len(closers)-1] != c {
				return false
			}
			if closers = closers[:len(closers)-1]; len(closers) == 0 {
				e.i = i + 1
				return true
			}
		case '"':
			if i = stringEnd(b, i); i < 0 {
				return false
			}
			i--
		}
	}
	return false
}
