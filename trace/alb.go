package trace

import (
	"bytes"
	"fmt"
)

// The fields of an ALB access log line that a Reader reads, counted from
// 0, in the order AWS documents them ("Access log entries", Application
// Load Balancers): type time elb client:port target:port
// request_processing_time target_processing_time response_processing_time
// elb_status_code target_status_code received_bytes sent_bytes "request"
// "user_agent" ssl_cipher ssl_protocol target_group_arn "trace_id"
// "domain_name" "chosen_cert_arn" matched_rule_priority
// request_creation_time "actions_executed" ...
const (
	albTime        = 1
	albClient      = 3
	albStatus      = 8 // elb_status_code: what the client got
	albRequest     = 12
	albUserAgent   = 13
	albCreation    = 21 // request_creation_time
	albFieldsKnown = albCreation + 1
)

type albParser struct {
	kind  keyKind
	times timeCache
}

func (a *albParser) parse(line []byte, p *parsed) error {
	var f [albFieldsKnown][]byte
	rest := line
	for i := range f {
		if len(rest) == 0 {
			return fmt.Errorf("the line has %d fields, an ALB log line at least %d (want type time elb client:port ... request_creation_time ...)", i, albFieldsKnown)
		}
		var err error
		if f[i], rest, err = field(rest); err != nil {
			return fmt.Errorf("field %d: %w", i+1, err)
		}
	}
	// request_creation_time is "-" on no line AWS documents; should one
	// come, the time the response was sent is the best left.
	t := f[albCreation]
	if absent(t) {
		t = f[albTime]
	}
	at, err := a.times.parseRFC3339(t)
	if err != nil {
		return err
	}
	if p.status, err = status(f[albStatus]); err != nil {
		return err
	}
	p.at = at
	p.method, p.target = requestLine(f[albRequest])
	switch a.kind {
	case keyIP:
		p.keyv = albHost(f[albClient])
	case keyUA:
		p.keyv = f[albUserAgent]
	default: // path, query
		p.keyv = p.target
	}
	return nil
}

// albHost returns the address of ALB's client:port field. The port is
// always there and changes with every connection, so it is cut here,
// before the address is looked up among those seen: "192.0.2.1:4711" and
// "[2001:db8::1]:4711" give the address, and so does an IPv6 address
// written without brackets, "2001:db8::1:4711", whose last colon is the
// port's.
func albHost(b []byte) []byte {
	if len(b) > 0 && b[0] == '[' {
		if i := bytes.IndexByte(b, ']'); i > 0 {
			return b[1:i]
		}
		return b
	}
	if i := bytes.LastIndexByte(b, ':'); i > 0 {
		return b[:i]
	}
	return b
}
