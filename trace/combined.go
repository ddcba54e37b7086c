package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// parsed is what a line parser finds in one line. Its slices point into
// the line (or the parser's scratch space): they are valid until the next
// line is read.
type parsed struct {
	at     int64  // arrival, in nanoseconds since 1970 UTC
	method []byte // empty when the request line is malformed
	target []byte // the request's URI, with its query string
	status int    // 0 when the log does not say
	keyv   []byte // the key's value as logged; for a query key, the URI
}

// lineParser reads one line of a log.
type lineParser interface {
	parse(line []byte, p *parsed) error
}

// token returns b's first space-separated field and what follows the
// spaces after it.
func token(b []byte) (tok, rest []byte) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return b, nil
	}
	tok, rest = b[:i], b[i+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return tok, rest
}

var errUnterminated = errors.New(`a quoted field has no closing quote (want "..." with \" for a quote inside)`)

// quoted returns the content of the quoted field that b starts with, as
// written (a \" inside stays \"), and what follows the spaces after it.
func quoted(b []byte) (field, rest []byte, err error) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, fmt.Errorf("%s where a quoted field should be (want \"...\")", excerpt(b))
	}
	i := 1
	for {
		j := bytes.IndexAny(b[i:], `"\`)
		if j < 0 {
			return nil, nil, errUnterminated
		}
		i += j
		if b[i] == '"' {
			break
		}
		i += 2 // a backslash escapes the byte after it
		if i >= len(b) {
			return nil, nil, errUnterminated
		}
	}
	field, rest = b[1:i], b[i+1:]
	if len(rest) > 0 && rest[0] != ' ' {
		return nil, nil, fmt.Errorf("%s right after a quoted field (want a space)", excerpt(rest))
	}
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return field, rest, nil
}

// field returns b's next field, quoted or not, and what follows it.
func field(b []byte) (f, rest []byte, err error) {
	if len(b) > 0 && b[0] == '"' {
		return quoted(b)
	}
	f, rest = token(b)
	return f, rest, nil
}

// excerpt quotes the start of b for an error message.
func excerpt(b []byte) string {
	if len(b) == 0 {
		return "the end of the line"
	}
	if len(b) > 40 {
		return fmt.Sprintf("%q…", b[:40])
	}
	return fmt.Sprintf("%q", b)
}

// requestLine splits "GET /a?b=c HTTP/1.1" into its method and target. A
// request line that is not one ("-", the bytes of a TLS handshake sent to
// a plain HTTP port, which nginx logs with a 400) has neither: the request
// still arrived, so it is kept, with an empty method and path.
func requestLine(b []byte) (method, target []byte) {
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp > 32 {
		return nil, nil
	}
	method = b[:sp]
	if absent(method) { // ALB's "- http://host:80- -"
		return nil, nil
	}
	for _, c := range method {
		if !isTchar(c) {
			return nil, nil
		}
	}
	target = b[sp+1:]
	if sp := bytes.IndexByte(target, ' '); sp >= 0 {
		target = target[:sp]
	}
	if target = originForm(target); target == nil {
		return nil, nil
	}
	return method, target
}

// originForm returns target as a path and query: an absolute URI
// ("http://host:80/a?b", as ALB logs every request and a proxy receives
// them) loses its scheme and authority. It returns nil if target is
// neither.
func originForm(target []byte) []byte {
	if len(target) > 0 && (target[0] == '/' || target[0] == '*') {
		return target
	}
	i := bytes.Index(target, schemeSep)
	if i <= 0 {
		return nil
	}
	rest := target[i+3:]
	j := bytes.IndexAny(rest, "/?")
	if j < 0 {
		return slash
	}
	// "http://host?q" has an empty path, which HTTP reads as "/": the
	// record's path is made "/" where it is built.
	return rest[j:]
}

// isTchar reports whether c may appear in an HTTP token, as a method is.
func isTchar(c byte) bool {
	switch {
	case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// status reads an HTTP status code: three digits, or "-" (none, 0).
func status(b []byte) (int, error) {
	if absent(b) {
		return 0, nil
	}
	if len(b) != 3 || b[0] < '1' || b[0] > '9' || b[1] < '0' || b[1] > '9' || b[2] < '0' || b[2] > '9' {
		return 0, fmt.Errorf("status %s is not an HTTP status (want three digits, e.g. 200)", excerpt(b))
	}
	return int(b[0]-'0')*100 + int(b[1]-'0')*10 + int(b[2]-'0'), nil
}

// combinedParser reads the combined and common log formats:
//
//	host ident user [time] "request" status bytes ["referer" "user agent" ...]
type combinedParser struct {
	kind  keyKind
	times timeCache
}

func (c *combinedParser) parse(line []byte, p *parsed) error {
	host, rest := token(line)
	_, rest = token(rest) // ident (RFC 1413), which no one runs
	user, rest := token(rest)
	if len(rest) == 0 || rest[0] != '[' {
		return fmt.Errorf("%s where the time should be (want a combined log line: host ident user [time] \"request\" status bytes ...)", excerpt(rest))
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return fmt.Errorf("the time has no closing ] (want [10/Oct/2000:13:55:36 -0700])")
	}
	at, err := c.times.parseCLF(rest[1:end])
	if err != nil {
		return err
	}
	rest = rest[end+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	req, rest, err := quoted(rest)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	st, rest := token(rest)
	if p.status, err = status(st); err != nil {
		return err
	}
	_, rest = token(rest) // bytes sent
	var ua []byte
	if len(rest) > 0 {
		if _, rest, err = quoted(rest); err != nil { // referer
			return fmt.Errorf("referer: %w", err)
		}
		if len(rest) > 0 {
			if ua, _, err = quoted(rest); err != nil {
				return fmt.Errorf("user agent: %w", err)
			}
		}
	}
	p.at = at
	p.method, p.target = requestLine(req)
	switch c.kind {
	case keyIP:
		p.keyv = host
	case keyUser:
		p.keyv = user
	case keyUA:
		p.keyv = ua
	default: // path, query
		p.keyv = p.target
	}
	return nil
}

var (
	slash     = []byte("/")
	schemeSep = []byte("://")
)
