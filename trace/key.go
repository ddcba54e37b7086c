package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"

	"github.com/ratelim/ratelim/internal/clientip"
)

// Key says which part of a logged request names the limiter key it counts
// against, as the middleware's key function does for a live request. Make
// one with ParseKey; the zero Key is the format's default, "ip" for
// combined and ALB logs and the field "key" for JSONL and CSV.
//
// A key is the value as logged (a user agent is the whole user agent), but
// for an address, which is named as httplimit names a client: "ip:" and
// the IPv4 address, or the IPv6 network of Options.IPv6PrefixLen bits it
// is in ("ip:2001:db8:1:2::/64"), so that a limit found by replaying a log
// holds for the middleware. An address the log has that is not an IP
// address (a host name) is "ip:" and the name, as the middleware keys a
// peer it cannot parse.
type Key struct {
	format Format
	kind   keyKind
	name   string // the field, column or query parameter
}

type keyKind int

const (
	keyIP    keyKind = iota + 1 // the client address
	keyUser                     // combined's remote user
	keyUA                       // the user agent
	keyPath                     // the path, without the query string
	keyQuery                    // a query parameter of the request's URI
	keyField                    // a JSONL field or CSV column, as it is
	keyAddr                     // a JSONL field or CSV column holding an address
)

// ParseKey reads a key spec for logs of format f, as a --key flag gives it.
//
// For combined and ALB logs: "ip" (the client address), "user" (the
// remote user, combined only), "ua" (the user agent), "path" (without the
// query string), or "query:NAME" (the query parameter NAME of the
// request's URI, percent-decoded).
//
// For JSONL and CSV logs: "NAME", the field or column of that name (a
// dotted path for nested JSON objects, "request.headers.x-api-key");
// "ip:NAME", that field read as an address and named as "ip" is; or
// "query:NAME", a query parameter of the path field.
func ParseKey(f Format, s string) (Key, error) {
	s = strings.TrimSpace(s)
	prefix, name, hasName := strings.Cut(s, ":")
	switch f {
	case Combined, ALB:
		want := "ip, ua, path or query:NAME"
		if f == Combined {
			want = "ip, user, ua, path or query:NAME"
		}
		switch {
		case s == "ip":
			return Key{format: f, kind: keyIP}, nil
		case s == "user" && f == Combined:
			return Key{format: f, kind: keyUser}, nil
		case s == "ua":
			return Key{format: f, kind: keyUA}, nil
		case s == "path":
			return Key{format: f, kind: keyPath}, nil
		case prefix == "query" && hasName && name != "":
			return Key{format: f, kind: keyQuery, name: name}, nil
		}
		return Key{}, fmt.Errorf("%q is not a key of a %s log (want %s)", s, f, want)
	case JSONL, CSV:
		switch {
		case s == "":
		case prefix == "ip" && hasName && name != "":
			return Key{format: f, kind: keyAddr, name: name}, nil
		case prefix == "query" && hasName && name != "":
			return Key{format: f, kind: keyQuery, name: name}, nil
		default:
			return Key{format: f, kind: keyField, name: s}, nil
		}
		return Key{}, fmt.Errorf("an empty key is not a key of a %s log (want a field name, ip:FIELD or query:NAME)", f)
	}
	return Key{}, fmt.Errorf("trace: no log format given for key %q", s)
}

// String returns the spec ParseKey reads.
func (k Key) String() string {
	switch k.kind {
	case keyIP:
		return "ip"
	case keyUser:
		return "user"
	case keyUA:
		return "ua"
	case keyPath:
		return "path"
	case keyQuery:
		return "query:" + k.name
	case keyField:
		return k.name
	case keyAddr:
		return "ip:" + k.name
	}
	return ""
}

func defaultKey(f Format) Key {
	switch f {
	case JSONL, CSV:
		return Key{format: f, kind: keyField, name: "key"}
	}
	return Key{format: f, kind: keyIP}
}

// interner returns one string for equal byte slices it has seen, so that
// a stream of requests from a few thousand clients allocates a few
// thousand strings, not one a line. It forgets everything when it holds
// max strings: memory stays bounded whatever the log, at the cost of
// allocating again for keys seen before the reset. A recentStrings in
// front of its map answers most look-ups without hashing.
type interner struct {
	m      map[string]string
	max    int
	recent recentStrings
}

func newInterner(max int) *interner { return &interner{m: make(map[string]string), max: max} }

func (in *interner) get(b []byte) string {
	slot := in.recent.slot(b)
	if slot.from == string(b) { // a compare, no allocation
		return slot.to
	}
	s, ok := in.m[string(b)] // the lookup does not allocate
	if !ok {
		if len(in.m) >= in.max {
			clear(in.m)
		}
		s = string(b)
		in.m[s] = s
	}
	slot.from, slot.to = s, s
	return s
}

// recentSize is how many strings a recentStrings holds: a log's few
// thousand clients' keys mostly find their own slot.
const recentSize = 1 << 12

// recentStrings maps some strings to others it was given lately: a cache
// with a slot for each hash of a string, which a string written there
// replaces. A look-up is a cheap hash of a few words and one comparison
// where a map's is a hash of every byte, a probe and a comparison: about
// a third of the cost, and the reader looks up three strings a line.
// Its memory is fixed; a log that collides often (by chance or design)
// only goes to the map behind it more often.
type recentStrings struct {
	slots *[recentSize]recentSlot // allocated at the first look-up
}

type recentSlot struct{ from, to string }

// slot returns the slot of b: it holds b if from is b.
func (r *recentStrings) slot(b []byte) *recentSlot {
	if r.slots == nil {
		r.slots = new([recentSize]recentSlot)
	}
	const mul = 0x9e3779b97f4a7c15 // 2⁶⁴ ÷ φ: spreads the bits up
	var w uint64
	if len(b) >= 8 {
		w = binary.LittleEndian.Uint64(b) ^ binary.LittleEndian.Uint64(b[len(b)-8:])*mul
	} else {
		for _, c := range b {
			w = w<<8 | uint64(c)
		}
	}
	h := (w ^ uint64(len(b))) * mul >> (64 - 12)
	return &r.slots[h%recentSize]
}

// keyer turns the logged value of a key into the key.
type keyer struct {
	kind   keyKind
	name   string
	v6bits int
	maxLen int
	keys   *interner
	addrs  map[string]recentSlot // an address as logged → it (from) and its key (to)
	recent recentStrings         // in front of addrs
	buf    []byte
}

// absent reports whether a logged value means "none": loggers write "-"
// or nothing for what they do not have.
func absent(b []byte) bool { return len(b) == 0 || (len(b) == 1 && b[0] == '-') }

// key returns the key of a request whose key value is v (for a query key,
// v is the request's URI). It returns "" when the request has no key.
func (k *keyer) key(v []byte) (string, error) {
	switch k.kind {
	case keyQuery:
		var ok bool
		if v, ok = queryParam(v, k.name); !ok {
			return "", nil
		}
		if bytes.ContainsAny(v, "%+") {
			s, err := url.QueryUnescape(string(v))
			if err != nil {
				return "", fmt.Errorf("query parameter %s=%q: %v", k.name, v, err)
			}
			v = append(k.buf[:0], s...)
		}
	case keyPath:
		if i := bytes.IndexByte(v, '?'); i >= 0 {
			v = v[:i]
		}
	}
	if absent(v) {
		return "", nil
	}
	if k.kind == keyIP || k.kind == keyAddr {
		return k.addr(v)
	}
	if len(v) > k.maxLen {
		return "", fmt.Errorf("key is %d bytes long (want at most %d; see Options.MaxKey)", len(v), k.maxLen)
	}
	return k.keys.get(v), nil
}

// addr returns the key of an address as logged (with or without a port).
func (k *keyer) addr(v []byte) (string, error) {
	slot := k.recent.slot(v)
	if len(v) > 0 && slot.from == string(v) {
		return slot.to, nil
	}
	if known, ok := k.addrs[string(v)]; ok {
		*slot = known
		return known.to, nil
	}
	if len(v) > k.maxLen {
		return "", fmt.Errorf("address is %d bytes long (want at most %d; see Options.MaxKey)", len(v), k.maxLen)
	}
	raw := string(v)
	var key string
	if a, ok := clientip.ParseHop(raw); ok {
		k.buf = clientip.AppendKey(k.buf[:0], a, k.v6bits)
		key = k.keys.get(k.buf)
	} else {
		key = clientip.Prefix + raw
	}
	if len(k.addrs) >= k.keys.max {
		clear(k.addrs)
	}
	*slot = recentSlot{from: raw, to: key}
	k.addrs[raw] = *slot
	return key, nil
}

// queryParam returns the raw value of the first query parameter name in
// uri, and whether there is one.
func queryParam(uri []byte, name string) ([]byte, bool) {
	i := bytes.IndexByte(uri, '?')
	if i < 0 {
		return nil, false
	}
	q := uri[i+1:]
	if j := bytes.IndexByte(q, '#'); j >= 0 {
		q = q[:j]
	}
	for len(q) > 0 {
		var pair []byte
		if j := bytes.IndexByte(q, '&'); j >= 0 {
			pair, q = q[:j], q[j+1:]
		} else {
			pair, q = q, nil
		}
		n, v := pair, []byte(nil)
		if j := bytes.IndexByte(pair, '='); j >= 0 {
			n, v = pair[:j], pair[j+1:]
		}
		if string(n) == name {
			return v, true
		}
	}
	return nil, false
}
