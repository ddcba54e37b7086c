package httplimit

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ReadRateLimit reads the quota left and the time to its reset from an
// answer's RateLimit header fields, as a client would: the structured
// `RateLimit: "default";r=0;t=3` (parsed strictly, RFC 9651), else the
// older RateLimit-Remaining / RateLimit-Reset pair. ok is false when the
// answer carries neither, or a RateLimit field that does not parse or has
// no r.
func ReadRateLimit(h http.Header) (remaining int64, reset time.Duration, ok bool) {
	if v := h.Get(fieldRateLimit); v != "" {
		items, err := parseSFList(v)
		if err != nil || len(items) == 0 {
			return 0, 0, false
		}
		r, hasR := items[0].params["r"]
		if !hasR || r < 0 {
			return 0, 0, false
		}
		return r, time.Duration(max(items[0].params["t"], 0)) * time.Second, true
	}
	if v := h.Get("RateLimit-Remaining"); v != "" {
		r, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || r < 0 {
			return 0, 0, false
		}
		t, err := strconv.ParseInt(strings.TrimSpace(h.Get("RateLimit-Reset")), 10, 64)
		if err != nil || t < 0 {
			t = 0
		}
		return r, time.Duration(t) * time.Second, true
	}
	return 0, 0, false
}

// sfItem is one member of a Structured Field List whose bare item is a
// String and whose parameters are Integers or Booleans, the shape of
// RateLimit-Policy and RateLimit.
type sfItem struct {
	name   string
	params map[string]int64
	order  []string
}

// parseSFList parses a Structured Field List (RFC 9651, sections 3.1 and
// 4.2.1) of String items with Integer parameters, strictly: anything the
// RFC's parser would fail on, or a bare item or parameter value of another
// type, is an error.
func parseSFList(s string) ([]sfItem, error) {
	p := &sfParser{s: s}
	p.skip(' ')
	var items []sfItem
	for {
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		p.skip(' ', '\t')
		if p.eof() {
			return items, nil
		}
		if p.s[p.i] != ',' {
			return nil, fmt.Errorf("at %d: want ',' after a list member, got %q", p.i, p.s[p.i])
		}
		p.i++
		p.skip(' ', '\t')
		if p.eof() {
			return nil, fmt.Errorf("trailing ','")
		}
	}
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

func (p *sfParser) skip(cs ...byte) {
	for !p.eof() && strings.IndexByte(string(cs), p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sfParser) item() (sfItem, error) {
	name, err := p.str()
	if err != nil {
		return sfItem{}, err
	}
	it := sfItem{name: name, params: map[string]int64{}}
	for !p.eof() && p.s[p.i] == ';' {
		p.i++
		p.skip(' ')
		key, err := p.key()
		if err != nil {
			return sfItem{}, err
		}
		v := int64(1) // a Boolean true
		if !p.eof() && p.s[p.i] == '=' {
			p.i++
			if v, err = p.integer(); err != nil {
				return sfItem{}, fmt.Errorf("parameter %s: %v", key, err)
			}
		}
		if _, dup := it.params[key]; !dup {
			it.order = append(it.order, key)
		}
		it.params[key] = v
	}
	return it, nil
}

func (p *sfParser) str() (string, error) {
	if p.eof() || p.s[p.i] != '"' {
		return "", fmt.Errorf("at %d: want a String", p.i)
	}
	p.i++
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.eof() || (p.s[p.i] != '"' && p.s[p.i] != '\\') {
				return "", fmt.Errorf("bad escape in String")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", fmt.Errorf("byte %#x in String", c)
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("unterminated String")
}

func (p *sfParser) key() (string, error) {
	start := p.i
	if p.eof() || !(p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] == '*') {
		return "", fmt.Errorf("at %d: want a key", p.i)
	}
	for !p.eof() && strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789_-.*", p.s[p.i]) >= 0 {
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *sfParser) integer() (int64, error) {
	start := p.i
	if !p.eof() && p.s[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if n := p.i - digits; n == 0 || n > 15 {
		return 0, fmt.Errorf("want an Integer of 1 to 15 digits, got %q", p.s[start:p.i])
	}
	if !p.eof() && p.s[p.i] == '.' {
		return 0, fmt.Errorf("a Decimal, want an Integer")
	}
	return strconv.ParseInt(p.s[start:p.i], 10, 64)
}
