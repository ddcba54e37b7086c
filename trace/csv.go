package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// csvParser reads lines of comma-separated values, one request a line.
// It splits a line itself rather than with encoding/csv, which lets a
// quoted field span lines (so a line's length would no longer bound what
// is buffered), allocates for every line, and only splitting a log takes
// as long as this Reader's whole reading of it (BenchmarkEncodingCSV
// beside BenchmarkReader/csv).
type csvParser struct {
	columns
	col     [numSlots]int // the column of each slot, or -1
	ncols   int           // how many the header names
	fields  [][]byte
	scratch []byte
	spans   []csvSpan
}

// csvSpan is where in scratch a field made of a quoted one is: scratch
// may move as it grows, so the field is sliced from it once it is done.
type csvSpan struct{ field, from, to int }

// newCSVParser reads the header line and finds the columns' fields in it.
func newCSVParser(fields Fields, k Key, header []byte) (*csvParser, error) {
	c, err := newColumns(CSV, fields, k)
	if err != nil {
		return nil, err
	}
	p := &csvParser{columns: c}
	names, err := p.split(header, -1)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	p.ncols = len(names)
	have := make([]string, len(names))
	for i, n := range names {
		have[i] = string(bytes.TrimSpace(n))
	}
	for s, name := range c.names {
		p.col[s] = -1
		if name == "" {
			continue
		}
		for i, h := range have {
			if h == name {
				p.col[s] = i
				break
			}
		}
		if p.col[s] < 0 && (c.required&(1<<s) != 0 || s == slotKey) {
			return nil, fmt.Errorf("header: no column %q (want one of %s)", name, strings.Join(have, ", "))
		}
	}
	return p, nil
}

var errCSVQuote = errors.New(`a quoted field has no closing quote on its line (want "..." with "" for a quote inside; a field cannot span lines)`)

// split returns line's fields: all of them if n < 0, else at least the
// first n+1 (or an error if the line has fewer). A quoted field's
// doubled quotes are made single in p.scratch, so the fields are valid
// until the next split.
func (p *csvParser) split(line []byte, n int) ([][]byte, error) {
	p.fields = p.fields[:0]
	p.scratch = p.scratch[:0]
	p.spans = p.spans[:0]
	rest := line
	for {
		if n >= 0 && len(p.fields) > n {
			break
		}
		if len(rest) > 0 && rest[0] == '"' {
			// Quoted: "" is a quote; the field ends at a lone quote.
			i := 1
			start := len(p.scratch)
			plain := true
			for {
				j := bytes.IndexByte(rest[i:], '"')
				if j < 0 {
					return nil, errCSVQuote
				}
				if i+j+1 < len(rest) && rest[i+j+1] == '"' {
					p.scratch = append(p.scratch, rest[i:i+j+1]...)
					i += j + 2
					plain = false
					continue
				}
				if plain {
					p.fields = append(p.fields, rest[1:i+j])
				} else {
					p.scratch = append(p.scratch, rest[i:i+j]...)
					p.spans = append(p.spans, csvSpan{len(p.fields), start, len(p.scratch)})
					p.fields = append(p.fields, nil)
				}
				rest = rest[i+j+1:]
				break
			}
			if len(rest) > 0 && rest[0] != ',' {
				return nil, fmt.Errorf("%s right after a quoted field (want a comma)", excerpt(rest))
			}
		} else {
			j := bytes.IndexByte(rest, ',')
			if j < 0 {
				j = len(rest)
			}
			p.fields = append(p.fields, rest[:j])
			rest = rest[j:]
		}
		if len(rest) == 0 {
			break
		}
		rest = rest[1:] // the comma
		if len(rest) == 0 {
			p.fields = append(p.fields, rest) // a last, empty field
			break
		}
	}
	for _, s := range p.spans {
		p.fields[s.field] = p.scratch[s.from:s.to]
	}
	if n >= 0 && len(p.fields) <= n {
		return nil, fmt.Errorf("the line has %d columns, the header %d (want one value a column)", len(p.fields), p.ncols)
	}
	return p.fields, nil
}

func (p *csvParser) parse(line []byte, out *parsed) error {
	last := -1
	for _, c := range p.col {
		last = max(last, c)
	}
	fs, err := p.split(line, last)
	if err != nil {
		return err
	}
	var vals [numSlots][]byte
	var have uint
	for s, c := range p.col {
		if c >= 0 {
			vals[s] = bytes.TrimSpace(fs[c])
			have |= 1 << s
		}
	}
	return p.finish(out, &vals, have, false)
}
