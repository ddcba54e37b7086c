package live

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
)

// closedPort is a loopback URL nothing listens on: a port taken and let go,
// so a connection to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// burstOf is a scenario of one client sending n requests at once, 100 ms
// in, with no retries.
func burstOf(n int, servers int) sim.Scenario {
	sc := bucketScenario(sim.Shared, servers)
	sc.Duration = time.Second
	sc.Clients = []sim.Client{{Name: "c", APIKey: "k", Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: n, At: 100 * time.Millisecond}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	return sc
}

// TestLoadCountsNoAnswerApart: a request refused at the TCP level got no
// answer, and no limiter decided it: it is counted as no answer, never as
// rejected, and a run none of whose requests were answered is an error
// naming the first transport error.
func TestLoadCountsNoAnswerApart(t *testing.T) {
	res, err := Load(context.Background(), burstOf(5, 1), LoadOptions{Targets: []string{closedPort(t)}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Clients[0]
	if c.Sent != 5 || c.NoAnswer != 5 || c.Rejected != 0 || c.Allowed != 0 || c.IdealAllowed != 0 {
		t.Errorf("client: sent %d, no answer %d, rejected %d, allowed %d, ideal %d; want 5, 5, 0, 0, 0", c.Sent, c.NoAnswer, c.Rejected, c.Allowed, c.IdealAllowed)
	}
	if res.Audit.TransportErrors != 5 || !strings.Contains(res.Audit.FirstTransportError, "refused") {
		t.Errorf("audit: %d transport errors, first %q; want 5, a refused connection", res.Audit.TransportErrors, res.Audit.FirstTransportError)
	}
	var na *NoAnswerError
	if err := res.CheckAnswered(); !errors.As(err, &na) || na.TransportErrors != 5 || !strings.Contains(err.Error(), "refused") {
		t.Errorf("CheckAnswered: %v, want a NoAnswerError of 5 transport errors saying the connection was refused", err)
	}
	if f := sim.Findings(res.Result); len(f) == 0 || f[0].Kind != sim.FindingNoAnswer {
		t.Errorf("findings %+v, want no-answer first", f)
	}
}

// TestLoadSomeAnsweredIsNoError: with one target of two refusing
// connections, round-robin sends it every other request; those count as
// no answer, the rest as decided, and the run is not an error.
func TestLoadSomeAnsweredIsNoError(t *testing.T) {
	sc := burstOf(10, 2)
	fleet := startFleet(t, bucketScenario(sim.Shared, 1), "memory")
	res, err := Load(context.Background(), sc, LoadOptions{Targets: []string{fleet.URLs[0], closedPort(t)}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Clients[0]
	if c.Sent != 10 || c.NoAnswer != 5 || c.Allowed+c.Rejected != 5 {
		t.Errorf("client: sent %d, no answer %d, allowed %d + rejected %d; want 10, 5, and 5 decided", c.Sent, c.NoAnswer, c.Allowed, c.Rejected)
	}
	if res.Audit.TransportErrors != 5 {
		t.Errorf("audit: %d transport errors, want 5", res.Audit.TransportErrors)
	}
	if err := res.CheckAnswered(); err != nil {
		t.Errorf("CheckAnswered: %v, want nil: half the requests were answered", err)
	}
}
