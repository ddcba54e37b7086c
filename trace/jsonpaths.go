package trace

import "encoding/binary"

// The fields a JSON-lines extractor looks for, as a tree of keys built
// once from their dotted paths.

// jsonNode is what an extractor looks for in one object: the keys that
// end a path (leaf, a bit a slot) or lead into an object holding the rest
// of one (child). Built once from the paths, it is the same for every
// line.
type jsonNode struct {
	fields []jsonField
	byLen  [maxKeyLen + 1]int32 // 1 + the index of the first field of a length (the last for longer), or 0
	// seen are the keys of its object in the line before, for the quick
	// path (see jsonSeen); the one thing in a node a line changes.
	seen []jsonSeen
}

// maxKeyLen is the longest key jsonNode.byLen tells apart by length.
const maxKeyLen = 63

// jsonField is a key of a jsonNode.
type jsonField struct {
	key     string
	head    uint64    // the key's first 8 bytes (fewer: zeros after), as wordAt reads them
	leaf    uint      // the slots whose path ends at this key
	child   *jsonNode // what to look for inside its value, if it is an object; nil for nothing
	sameLen int32     // 1 + the index of the next field of its length in byLen, or 0
}

// newJSONNode returns the tree of the paths, path i in slot i. A path's
// dots separate nested objects' keys, but a key may itself hold dots, so
// "a.b.c" is looked for as the key "a.b.c", as "c" under "a.b", and as
// "b.c" and "c" under "a".
func newJSONNode(paths []string) *jsonNode {
	root := &jsonNode{}
	for slot, p := range paths {
		root.add(p, slot)
	}
	return root
}

func (n *jsonNode) add(path string, slot int) {
	for i := range len(path) + 1 {
		switch {
		case i == len(path):
			n.field(path).leaf |= 1 << slot
		case path[i] == '.':
			f := n.field(path[:i])
			if f.child == nil {
				f.child = &jsonNode{}
			}
			f.child.add(path[i+1:], slot)
		}
	}
}

// field returns n's field of key, adding it if there is none.
func (n *jsonNode) field(key string) *jsonField {
	if f := n.find([]byte(key)); f != nil {
		return f
	}
	l := min(len(key), maxKeyLen)
	var head [8]byte
	copy(head[:], key)
	n.fields = append(n.fields, jsonField{key: key, head: binary.LittleEndian.Uint64(head[:]), sameLen: n.byLen[l]})
	n.byLen[l] = int32(len(n.fields))
	return &n.fields[len(n.fields)-1]
}

// find returns n's field of key, or nil. A node holds a few keys, and
// most keys of a line are none of them: the fields of key's length are
// looked up by it, and there is rarely more than one (quicker than a
// map, which must hash the key first).
func (n *jsonNode) find(key []byte) *jsonField {
	for k := n.byLen[min(len(key), maxKeyLen)]; k != 0; {
		f := &n.fields[k-1]
		if f.key == string(key) {
			return f
		}
		k = f.sameLen
	}
	return nil
}

// findAt is find of the key b[from:to], for a b that holds 8 bytes from
// from on: its first 8 bytes are compared as one word, with no call (a
// string comparison calls memequal, dearer than the compare itself for a
// short key), and the rest, if any, as a string.
func (n *jsonNode) findAt(b []byte, from, to int) *jsonField {
	l := to - from
	k := n.byLen[min(l, maxKeyLen)]
	if k == 0 {
		return nil
	}
	w := keyWord(b, from, l)
	for k != 0 {
		f := &n.fields[k-1]
		if f.head == w && (l <= 8 || f.key[8:] == string(b[from+8:to])) {
			return f
		}
		k = f.sameLen
	}
	return nil
}
