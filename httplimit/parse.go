package httplimit

import (
	"errors"
	"fmt"
	"math"
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
		r, hasR := items[0].integer("r")
		if !hasR || r < 0 {
			return 0, 0, false
		}
		t, _ := items[0].integer("t")
		return r, seconds(t), true
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
		return r, seconds(t), true
	}
	return 0, 0, false
}

// ErrNoFields is what [ReadFields] returns for an answer with no RateLimit
// field: one the limiter did not decide (a fail policy, an exempt key), or
// from a server that sends none.
var ErrNoFields = errors.New("httplimit: no RateLimit field")

// Reading is what a client reads in an answer's structured RateLimit
// fields: the policy RateLimit names, with its r and t, and the policies
// RateLimit-Policy lists.
type Reading struct {
	// Policy is the name of the policy RateLimit speaks for: the binding
	// one, the one that refused a 429.
	Policy string
	// Remaining is its r, Reset its t (0 when absent).
	Remaining int64
	Reset     time.Duration
	// Policies are RateLimit-Policy's members in order, Name, Limit (q)
	// and Window (w, 0 when absent) set; nil when the answer has no
	// RateLimit-Policy.
	Policies []Quota
}

// Quota returns the quota RateLimit-Policy lists under the name RateLimit
// gives, and reports whether it lists one.
func (r Reading) Quota() (Quota, bool) {
	for _, q := range r.Policies {
		if q.Name == r.Policy {
			return q, true
		}
	}
	return Quota{}, false
}

// ReadFields reads an answer's RateLimit and RateLimit-Policy fields, each
// parsed strictly as a Structured Field List (RFC 9651; a field sent on
// several lines is one list, its lines joined by commas). RateLimit's
// first member is the policy read; it must have an r of 0 or more, and a t,
// if any, of 0 or more. Every RateLimit-Policy member must have a q of 0 or
// more and a w, if any, above 0. The error is [ErrNoFields] when the answer
// has no RateLimit field, and says what is wrong otherwise.
func ReadFields(h http.Header) (Reading, error) {
	v := joinedValues(h, fieldRateLimit)
	if v == "" {
		return Reading{}, ErrNoFields
	}
	items, err := parseSFList(v)
	if err != nil {
		return Reading{}, fmt.Errorf("httplimit: RateLimit %q: %v", v, err)
	}
	it := items[0]
	r, hasR := it.integer("r")
	t, hasT := it.integer("t")
	if !hasR || r < 0 || t < 0 || (!hasT && it.booleans["t"]) {
		return Reading{}, fmt.Errorf("httplimit: RateLimit %q: want r ≥ 0 and t, if any, ≥ 0", v)
	}
	rd := Reading{Policy: it.name, Remaining: r, Reset: seconds(t)}
	if v := joinedValues(h, fieldPolicy); v != "" {
		items, err := parseSFList(v)
		if err != nil {
			return rd, fmt.Errorf("httplimit: RateLimit-Policy %q: %v", v, err)
		}
		rd.Policies = make([]Quota, len(items))
		for i, it := range items {
			q, hasQ := it.integer("q")
			w, hasW := it.integer("w")
			if !hasQ || q < 0 || (hasW && w <= 0) || (!hasW && it.booleans["w"]) {
				return rd, fmt.Errorf("httplimit: RateLimit-Policy %q: member %d wants q ≥ 0 and w, if any, > 0", v, i+1)
			}
			rd.Policies[i] = Quota{Name: it.name, Limit: q, Window: seconds(w)}
		}
	}
	return rd, nil
}

// seconds is n whole seconds, 0 for n ≤ 0, capped at the longest
// Duration: a Retry-After of a request that can never pass says
// 9223372037 s, a nanosecond count past int64.
func seconds(n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	if n > math.MaxInt64/int64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(n) * time.Second
}

// joinedValues is field's value, its lines joined as RFC 9110 joins a
// list field's.
func joinedValues(h http.Header, field string) string {
	vs := h[field]
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	return strings.Join(vs, ", ")
}

// sfItem is one member of a Structured Field List whose bare item is a
// String and whose parameters are Integers or Booleans, the shape of
// RateLimit-Policy and RateLimit.
type sfItem struct {
	name   string
	params map[string]int64 // a Boolean as 1 or 0, and in booleans
	order  []string
	// booleans are the parameters whose value is a Boolean, not an
	// Integer: `;flag` or `;flag=?1`.
	booleans map[string]bool
}

// integer returns the Integer parameter key, and reports whether it has
// one (a Boolean is not one).
func (it sfItem) integer(key string) (int64, bool) {
	v, ok := it.params[key]
	return v, ok && !it.booleans[key]
}

// parseSFList parses a Structured Field List (RFC 9651, sections 3.1 and
// 4.2.1) of String items with Integer or Boolean parameters, strictly:
// anything the RFC's parser would fail on, or a bare item or parameter
// value of another type, is an error.
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
		v, boolean := int64(1), true // a bare key is a Boolean true
		switch {
		case strings.HasPrefix(p.s[p.i:], "=?1"), strings.HasPrefix(p.s[p.i:], "=?0"):
			v = int64(p.s[p.i+2] - '0')
			p.i += 3
		case !p.eof() && p.s[p.i] == '=':
			p.i++
			if v, err = p.integer(); err != nil {
				return sfItem{}, fmt.Errorf("parameter %s: %v", key, err)
			}
			boolean = false
		}
		if boolean {
			if it.booleans == nil {
				it.booleans = map[string]bool{}
			}
			it.booleans[key] = true
		} else {
			delete(it.booleans, key)
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
