package trace

// checkingExtractor is the JSON extractor as it was before issue 29, kept
// as the oracle of the one that skips: it checks every byte of a line
// (every string's escapes, every number's grammar, every member of every
// object and array), and finds its fields by matching each key against
// the rest of every dotted path, not by a tree built once. It shares the
// readers of one value with jsonExtractor (str, number, literal): they
// are what both check of the values they read.
type checkingExtractor struct {
	jsonExtractor
	matches []checkingMatch // a stack; see object
}

// checkingMatch is a field still being looked for, and the part of its
// dotted path not yet matched.
type checkingMatch struct {
	slot int
	rest string
}

func newCheckingExtractor(paths []string) *checkingExtractor {
	return &checkingExtractor{jsonExtractor: jsonExtractor{paths: paths}}
}

// extract reads the object in line and fills e.vals, one for each path.
func (e *checkingExtractor) extract(line []byte) error {
	if err := e.start(line); err != nil {
		return err
	}
	e.matches = e.matches[:0]
	for s, p := range e.paths {
		e.matches = append(e.matches, checkingMatch{slot: s, rest: p})
	}
	if err := e.object(0, len(e.paths), 1); err != nil {
		return err
	}
	return e.end()
}

// object reads the object at e.i, whose fields may hold the values
// e.matches[from:to] look for.
func (e *checkingExtractor) object(from, to, depth int) error {
	if empty, err := e.open(depth, '}'); empty || err != nil {
		return err
	}
	for {
		key, err := e.name(to > from)
		if err != nil {
			return err
		}
		var leaf uint
		sub := len(e.matches)
		for m := from; m < to; m++ {
			rest := e.matches[m].rest
			if len(rest) < len(key) || rest[:len(key)] != string(key) {
				continue
			}
			switch r := rest[len(key):]; {
			case r == "":
				leaf |= 1 << e.matches[m].slot
			case r[0] == '.':
				e.matches = append(e.matches, checkingMatch{slot: e.matches[m].slot, rest: r[1:]})
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
// looking inside it, if it is an object, for e.matches[from:to]. Arrays
// and scalars it reads as jsonExtractor.value does, checking all.
func (e *checkingExtractor) value(leaf uint, from, to, depth int) error {
	if e.i >= len(e.b) || e.b[e.i] != '{' {
		return e.jsonExtractor.value(leaf, nil, depth)
	}
	if err := e.object(from, to, depth+1); err != nil {
		return err
	}
	e.keep(leaf, jsonValue{kind: jsonNested})
	return nil
}
