package live

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
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
	wallClock(t)
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
	wallClock(t)
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

func TestParseRetryAfter(t *testing.T) {
	served := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	date := served.Format(http.TimeFormat)
	for _, tc := range []struct {
		name, value, date string
		now               time.Time
		want              time.Duration
	}{
		{"zero", "0", date, served, 0},
		{"one", "1", date, served, time.Second},
		{"longest that fits", "9223372036", date, served, 9223372036 * time.Second},
		{"one past: never", "9223372037", date, served, algorithms.Never},
		{"31 digits: never", "1" + strings.Repeat("0", 30), date, served, algorithms.Never},
		{"spaces around", " 5 ", date, served, 5 * time.Second},
		{"leading zeros", "007", date, served, 7 * time.Second},
		{"exponent: malformed", "1e30", date, served, 0},
		{"negative: malformed", "-1", date, served, 0},
		{"plus sign: malformed", "+5", date, served, 0},
		{"fraction: malformed", "1.5", date, served, 0},
		{"empty", "", date, served, 0},
		{"words", "abc", date, served, 0},
		{"date from Date", served.Add(90 * time.Second).Format(http.TimeFormat), date, served.Add(time.Hour), 90 * time.Second},
		{"RFC 850 date", served.Add(30 * time.Second).Format(time.RFC850), date, served, 30 * time.Second},
		{"asctime date", served.Add(30 * time.Second).Format(time.ANSIC), date, served, 30 * time.Second},
		{"date, no Date: from now, rounded up", served.Add(90 * time.Second).Format(http.TimeFormat), "", served.Add(300 * time.Millisecond), 90 * time.Second},
		{"date, bad Date: from now", served.Add(10 * time.Second).Format(http.TimeFormat), "yesterday", served, 10 * time.Second},
		{"date in the past", served.Add(-time.Minute).Format(http.TimeFormat), date, served, 0},
		{"date in year 9999", "Fri, 31 Dec 9999 23:59:59 GMT", date, served, algorithms.Never},
	} {
		if got := parseRetryAfter(tc.value, tc.date, tc.now); got != tc.want {
			t.Errorf("%s: Retry-After %q, Date %q: %v, want %v", tc.name, tc.value, tc.date, got, tc.want)
		}
	}
}

// TestAuditTakesLongRetryAfters: over HTTP, 429s whose Retry-After is
// correct however long (9223372037 s, a nanosecond count past int64, with
// a RateLimit t as long; an HTTP-date) are no breach, and a client
// honouring a Retry-After of centuries does not hold the run: the retry
// would come after the scenario's end, so it is not waited for. The
// server answers each client's key the same way every time.
func TestAuditTakesLongRetryAfters(t *testing.T) {
	wallClock(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UTC().Truncate(time.Second)
		w.Header().Set("Date", now.Format(http.TimeFormat))
		retryAfter, reset := "9223372037", "9223372037"
		switch r.Header.Get(APIKeyHeader) {
		case "centuries":
			retryAfter, reset = "9223372036", "9223372036"
		case "dated":
			retryAfter, reset = now.Add(5*time.Second).Format(http.TimeFormat), "5"
		}
		w.Header().Set("Retry-After", retryAfter)
		w.Header().Set("RateLimit-Policy", `"default";q=10;w=1`)
		w.Header().Set("RateLimit", `"default";r=0;t=`+reset)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	sc := burstOf(2, 1)
	for _, key := range []string{"never", "centuries", "dated"} {
		c := sc.Clients[0]
		c.Name, c.APIKey, c.Retry = key, key, sim.Retry{Policy: sim.RetryAfter, Max: 3}
		sc.Clients = append(sc.Clients, c)
	}
	sc.Clients = sc.Clients[1:]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := Load(ctx, sc, LoadOptions{Targets: []string{srv.URL}})
	if err != nil {
		t.Fatalf("%v: the run waited on a Retry-After past its end", err)
	}
	for _, c := range res.Clients {
		if c.Rejected != 2 || c.Retries != 0 {
			t.Errorf("%s: rejected %d, retried %d; want 2 rejected, no retry sent (none is due within the run)", c.Name, c.Rejected, c.Retries)
		}
	}
	if a := res.Audit; a.Breaches() != 0 {
		t.Errorf("correct answers counted as breaches: %+v", a)
	}
}

// TestAuditTakesNeverFromTheFleet: a request costing more than the
// bucket holds can never pass; the fleet says so with the longest
// Retry-After a header holds (999999999999999 s, as RateLimit's t), which
// the audit takes as correct, and a cheap request on the same key after
// it is refused with a short reset that did not go back: the never was
// that request's, not the key's.
func TestAuditTakesNeverFromTheFleet(t *testing.T) {
	wallClock(t)
	sc := burstOf(3, 1)
	sc.Limit.Params = algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Minute}, Burst: 10}
	costly := &sc.Clients[0]
	costly.Traffic[0].Cost = 50 // the bucket holds 10
	costly.Traffic[0].At = 300 * time.Millisecond
	costly.Retry = sim.Retry{Policy: sim.RetryAfter, Max: 3}
	// The same key, cheap, before (12 for a bucket of 10: two refused,
	// t = 60) and after (two more refused, t = 60 again).
	sc.Clients = append(sc.Clients, sim.Client{Name: "cheap", APIKey: "k", Retry: sim.Retry{Policy: sim.RetryNone},
		Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: 12, At: 100 * time.Millisecond}, {Pattern: sim.Burst, Count: 2, At: 500 * time.Millisecond}}})
	fleet := startFleet(t, sc, "memory")
	res, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Clients[0]; c.Rejected != 3 || c.Retries != 0 {
		t.Errorf("rejected %d, retried %d; want 3 rejected, none retried (never worth it)", c.Rejected, c.Retries)
	}
	if c := res.Clients[1]; c.Allowed != 10 || c.Rejected != 4 {
		t.Errorf("the cheap client: %d allowed, %d refused; want 10 and 4", c.Allowed, c.Rejected)
	}
	if a := res.Audit; a.Breaches() != 0 {
		t.Errorf("the fleet's never counted as breaches: %+v", a)
	}
}

// TestControlRefusesServersItHasNot: over HTTP on the control listener of
// a fleet of 4, a fault naming a server the fleet has not, or one twice,
// a partition that does not name every server once, or a field its kind
// does not read, is refused with 400 and the message a scenario file's
// fault gets (sim.Fault.Check), naming the field; the valid ones are
// applied (204).
func TestControlRefusesServersItHasNot(t *testing.T) {
	fleet := startFleet(t, bucketScenario(sim.SplitBrain, 4), "memory")
	client := &http.Client{Timeout: 5 * time.Second}
	post := func(query string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, fleet.ControlURL+FaultPath+"?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+fleet.Token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	for _, tc := range []struct{ query, want string }{
		{"kind=partition&start=1&groups=0,1|2,99", "groups[1][1]: server 99 does not exist (want 0 to 3"},
		{"kind=partition&start=0&groups=0,1|2,99", "groups[1][1]: server 99 does not exist (want 0 to 3"},
		{"kind=partition&start=1&groups=0,-1|2,3", "groups[0][1]: server -1 does not exist (want 0 to 3"},
		{"kind=partition&start=1&groups=0,1|1,2", "groups[1][0]: server 1 is already in groups[0] (want each server in one group only)"},
		{"kind=partition&start=1&groups=0,0|2,3", "groups[0][1]: server 0 is listed twice (want each server once)"},
		{"kind=partition&start=1&groups=0|1", "groups: servers 2 and 3 are in no group (want every server from 0 to 3 in exactly one group)"},
		{"kind=partition&start=1&groups=0,1,2,3", "groups: 1 group is no partition (want at least two groups"},
		{"kind=partition&start=1", "groups: 0 group is no partition (want at least two groups"},
		{"kind=partition&start=1&groups=0,x", `groups: "x" is not a server number`},
		{"kind=crash&start=1&servers=99", "servers[0]: server 99 does not exist (want 0 to 3"},
		{"kind=crash&start=1&servers=-1", "servers[0]: server -1 does not exist (want 0 to 3"},
		{"kind=crash&start=1&servers=1,1", "servers[1]: server 1 is listed twice (want each server once)"},
		{"kind=crash&start=1&servers=0,1,2,3", "servers: every server crashes"},
		{"kind=crash&start=1", "servers: empty (want the servers that crash, e.g. [1])"},
		{"kind=outage&start=1&servers=4", "servers: not a field of fault kind outage (want start, end, region)"},
		{"kind=outage&start=1&groups=9", "groups: not a field of fault kind outage (want start, end, region)"},
		{"kind=outage&start=yes", `start: "yes" is neither 1`},
	} {
		if code, body := post(tc.query); code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want 400 saying %q", tc.query, code, body, tc.want)
		}
	}
	for _, query := range []string{
		"kind=partition&start=1&groups=0,1|2,3", "kind=partition&start=0&groups=0,1|2,3",
		"kind=crash&start=1&servers=3", "kind=crash&start=0&servers=3",
	} {
		if code, body := post(query); code != http.StatusNoContent {
			t.Errorf("%s: %d %q, want 204", query, code, body)
		}
	}
}

// headStatus sends a GET whose head (request line, headers, the blank
// line) is exactly size bytes, padded by one header, on a connection of
// its own, and returns the status of the answer.
func headStatus(t *testing.T, server string, size int) int {
	t.Helper()
	head := "GET /api HTTP/1.1\r\nHost: " + server + "\r\nX-API-Key: k\r\nConnection: close\r\nX-Padding: "
	const end = "\r\n\r\n"
	if pad := size - len(head) - len(end); pad < 0 {
		t.Fatalf("a head of %d bytes cannot be built", size)
	} else {
		head += strings.Repeat("x", pad) + end
	}
	conn, err := net.DialTimeout("tcp", server, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a head of %d bytes: %v", size, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRequestHeadBound: a fleet server reads a request head of up to
// maxRequestHead bytes (16 KiB, as the README says) and answers 431 to one
// byte more, found by bisection over HTTP on loopback.
func TestRequestHeadBound(t *testing.T) {
	fleet := startFleet(t, bucketScenario(sim.Shared, 1), "memory")
	server := strings.TrimPrefix(fleet.URLs[0], "http://")
	answered, refused := 1<<10, 64<<10 // the largest head known answered, the smallest known refused
	if got := headStatus(t, server, answered); got == http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a head of %d bytes: 431", answered)
	}
	if got := headStatus(t, server, refused); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a head of %d bytes: %d, want 431", refused, got)
	}
	for refused-answered > 1 {
		mid := (answered + refused) / 2
		if headStatus(t, server, mid) == http.StatusRequestHeaderFieldsTooLarge {
			refused = mid
		} else {
			answered = mid
		}
	}
	t.Logf("largest head answered: %d bytes; %d refused with 431", answered, refused)
	if answered != maxRequestHead || maxRequestHead != 16<<10 {
		t.Errorf("the largest head answered is %d bytes, want %d (16 KiB)", answered, 16<<10)
	}
}

// TestAuditCountsOtherStatuses: a target answering 404 (a wrong URL) and
// 500 refuses by no rate limit: the audit says how many such answers the
// rejected include.
func TestAuditCountsOtherStatuses(t *testing.T) {
	wallClock(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	res, err := Load(context.Background(), burstOf(4, 1), LoadOptions{Targets: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Clients[0]; c.Rejected != 4 || res.Audit.OtherStatus != 4 {
		t.Errorf("rejected %d, audit other_status %d; want 4 and 4", c.Rejected, res.Audit.OtherStatus)
	}
	if err := res.CheckAnswered(); err != nil {
		t.Errorf("CheckAnswered: %v, want nil: every request got an HTTP answer", err)
	}
}
