// The key rule: how the fleet's servers key a request, exactly as the
// scenario's limit.key says and by nothing else the client chose (keyFor,
// KeyRule).

package live

import (
	"net/netip"

	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/sim"
)

// requestKey is how the fleet's servers key a request: exactly as the
// scenario's limit.key says, and nothing else.
type requestKey struct {
	fn       httplimit.KeyFunc
	required bool   // a request without the attribute is refused with 400
	name     string // what the key is read from, for that 400's body
	rule     string // the whole rule, for an operator (KeyRule)
}

// keyFor is the key the scenario's limit.key names. A limit keyed by API key
// reads APIKeyHeader alone and one keyed by user UserHeader alone: a client
// that sends another header instead, or rotates one the limit does not read,
// stays in its bucket, and a request without the header is refused with 400
// (never keyed by something else the client chose). A limit keyed by IP
// reads the client's address alone (X-Forwarded-For only from a trusted
// proxy), which every request has. Auto is the simulator's rule, the API
// key, else the user, else the address: the scenario asked for that
// precedence.
func keyFor(by sim.KeyBy, trusted []netip.Prefix) requestKey {
	header := func(name, prefix string) requestKey {
		return requestKey{fn: httplimit.KeyByHeader(name, prefix), required: true, name: "the " + name + " header",
			rule: "keyed by the " + name + " header alone; a request without it gets 400"}
	}
	switch by {
	case sim.KeyAPIKey:
		return header(APIKeyHeader, httplimit.KeyPrefixAPIKey)
	case sim.KeyUser:
		return header(UserHeader, httplimit.KeyPrefixUser)
	case sim.KeyIP:
		return requestKey{fn: httplimit.KeyByIP(httplimit.KeyOptions{TrustedProxies: trusted}),
			rule: "keyed by the client's address alone (" + ForwardedHeader + " only from a trusted proxy)"}
	}
	return requestKey{fn: httplimit.KeyBy(httplimit.KeyOptions{Header: APIKeyHeader, UserHeader: UserHeader, TrustedProxies: trusted}),
		rule: "keyed by " + APIKeyHeader + ", else " + UserHeader + ", else the client's address"}
}

// KeyRule says, for an operator, how a fleet serving a limit keyed by by
// keys its requests (keyFor's rule).
func KeyRule(by sim.KeyBy) string { return keyFor(by, nil).rule }
