package trace

import (
	"bytes"
	"fmt"
	"math/bits"
	"time"
)

// slot indexes the parts of a request a JSONL or CSV log has fields for.
const (
	slotTime = iota
	slotMethod
	slotPath
	slotStatus
	slotKey
	numSlots
)

// columns are the fields a structured (JSONL or CSV) parser looks for,
// by slot: their names, and whether a line must have them.
type columns struct {
	names    [numSlots]string // "" for a part the log does not have
	required uint             // a bit a slot: 1<<s if a line must have the field of slot s
	unit     time.Duration
	kind     keyKind
	times    timeCache
}

func newColumns(f Format, fields Fields, k Key) (columns, error) {
	t, method, path, st, unit, err := fields.resolve()
	if err != nil {
		return columns{}, err
	}
	c := columns{unit: unit, kind: k.kind}
	for s, fn := range [...]fieldName{slotTime: t, slotMethod: method, slotPath: path, slotStatus: st} {
		c.names[s] = fn.name
		if fn.required {
			c.required |= 1 << s
		}
	}
	switch k.kind {
	case keyQuery:
		if path.name == "" {
			return columns{}, fmt.Errorf("trace: key %s reads the path field's query string, but the path field is %q (none)", k, fields.Path)
		}
		c.names[slotKey] = path.name
	case keyField, keyAddr:
		c.names[slotKey] = k.name
	default:
		return columns{}, fmt.Errorf("trace: key %s is not a key of a %s log", k, f)
	}
	return c, nil
}

// finish fills p from the values found in a line. have has bit 1<<s set
// if the line has the field of slot s at all.
func (c *columns) finish(p *parsed, vals *[numSlots][]byte, have uint, numericTime bool) error {
	if missing := c.required &^ have; missing != 0 {
		s := bits.TrailingZeros(missing) // the first slot missing
		return fmt.Errorf("no %q field (want the request's %s there)", c.names[s], [...]string{"time", "method", "path", "status"}[s])
	}
	var err error
	tv := vals[slotTime]
	if numericTime {
		p.at, err = parseNumber(tv, c.unit)
	} else {
		p.at, err = c.times.parseAnyTime(tv, c.unit)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.names[slotTime], err)
	}
	if p.status, err = status(vals[slotStatus]); err != nil {
		return fmt.Errorf("%s: %w", c.names[slotStatus], err)
	}
	p.method = vals[slotMethod]
	if absent(p.method) {
		p.method = nil
	}
	p.target = vals[slotPath]
	if absent(p.target) {
		p.target = nil
	} else if c := p.target[0]; c != '/' && c != '*' && bytes.Contains(p.target, schemeSep) {
		// originForm keeps a target that starts so; the look for the
		// scheme's "://" is for the others.
		if t := originForm(p.target); t != nil {
			p.target = t
		}
	}
	p.keyv = vals[slotKey]
	if c.kind == keyQuery {
		p.keyv = p.target
	}
	return nil
}

// jsonlParser reads JSON lines with an extractor that looks for the
// columns' fields.
type jsonlParser struct {
	columns
	ex   jsonExtractor
	slot [numSlots]int // the extractor's slot of each of ours, or noSlot
}

// noSlot is the extractor's slot of a part the log has no field for: one
// no path has (there are fewer paths than slots), so it is always
// missing, and fill need not tell such parts from the others.
const noSlot = maxJSONFields - 1

// A part of a request has a path, unless two share one: fewer paths
// than the extractor has slots.
var _ [maxJSONFields - 1 - numSlots]struct{}

func newJSONLParser(fields Fields, k Key) (*jsonlParser, error) {
	c, err := newColumns(JSONL, fields, k)
	if err != nil {
		return nil, err
	}
	j := &jsonlParser{columns: c}
	var paths []string
	for s, name := range c.names {
		j.slot[s] = -1
		if name == "" {
			continue
		}
		// Two parts may share a field (the key is the path for a query
		// key); the extractor looks for each field once.
		for es, p := range paths {
			if p == name {
				j.slot[s] = es
			}
		}
		if j.slot[s] < 0 {
			j.slot[s] = len(paths)
			paths = append(paths, name)
		}
	}
	for s, es := range j.slot {
		if es < 0 {
			j.slot[s] = noSlot
		}
	}
	j.ex = newJSONExtractor(paths)
	return j, nil
}

func (j *jsonlParser) parse(line []byte, p *parsed) error {
	if err := j.ex.extract(line); err != nil {
		return err
	}
	return j.fill(p, &j.ex.vals)
}

// fill fills p from the values an extractor found in a line.
func (j *jsonlParser) fill(p *parsed, found *[maxJSONFields]jsonValue) error {
	var vals [numSlots][]byte
	var have uint
	numericTime := false
	for s, es := range j.slot {
		v := &found[es]
		switch v.kind {
		case jsonNone, jsonNull:
			continue
		case jsonNested:
			return fmt.Errorf("%s is %s (want a string or a number)", j.names[s], v.kind)
		case jsonNumber:
			numericTime = numericTime || s == slotTime
		}
		vals[s] = v.b
		have |= 1 << s
	}
	return j.finish(p, &vals, have, numericTime)
}
