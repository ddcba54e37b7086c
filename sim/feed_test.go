package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// sliceFeed is a feed of arrivals held in a slice, read afresh at each Open.
type sliceFeed struct {
	arrivals []Arrival
	opened   *int
	closed   *int
	failAt   int // Next fails at this index when > 0
}

func (f sliceFeed) feed(first, clients int) Feed {
	return Feed{Name: "slice", FirstClient: first, Clients: clients, Requests: int64(len(f.arrivals)), Open: func() (FeedReader, error) {
		if f.opened != nil {
			*f.opened++
		}
		return &sliceReader{f: f}, nil
	}}
}

type sliceReader struct {
	f sliceFeed
	i int
}

func (r *sliceReader) Next() (Arrival, error) {
	if r.f.failAt > 0 && r.i == r.f.failAt {
		return Arrival{}, errors.New("line 7: broken")
	}
	if r.i >= len(r.f.arrivals) {
		return Arrival{}, io.EOF
	}
	r.i++
	return r.f.arrivals[r.i-1], nil
}

func (r *sliceReader) Close() error {
	if r.f.closed != nil {
		*r.f.closed++
	}
	return nil
}

// feedScenario is a scenario of synthetic traffic, and the same scenario
// with that traffic's arrivals sent by one feed instead.
func feedScenario(t *testing.T, kind TopologyKind, servers int) (generated, fed Scenario) {
	t.Helper()
	generated = hammer(kind, servers, RoundRobin)
	generated.Clients = []Client{
		{Name: "a", APIKey: "a", Traffic: []Traffic{{Pattern: Poisson, Rate: perSecond(40)}}, Retry: Retry{Policy: RetryAfter, Max: 3}},
		{Name: "b", APIKey: "b", Traffic: []Traffic{{Pattern: Burst, Count: 60, At: 2 * time.Second, Cost: 2}}, Retry: Retry{Policy: RetryImmediate, Max: 2}},
		{Name: "c", APIKey: "a", Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(7)}}, Retry: Retry{Policy: RetryNone}},
	}
	var arrivals []Arrival
	if err := Arrivals(generated, func(a Arrival) bool { arrivals = append(arrivals, a); return true }); err != nil {
		t.Fatal(err)
	}
	fed = generated
	fed.Clients = append([]Client(nil), generated.Clients...)
	for i := range fed.Clients {
		fed.Clients[i].Traffic = nil
	}
	fed.Feeds = []Feed{sliceFeed{arrivals: arrivals}.feed(0, 3)}
	return generated, fed
}

func figures(t *testing.T, r *Result) string {
	t.Helper()
	b, err := json.Marshal(struct {
		C []ClientResult
		K []KeyResult
		T []TimelineRow
	}{r.Clients, r.Keys, r.Timeline})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A feed of a scenario's own arrivals gives the run those arrivals give:
// the same decisions, retries and timeline, on the memory store and on
// Redis, where requests are decided in batches.
func TestFeedIsTheTrafficItCarries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    TopologyKind
		servers int
		store   string
	}{
		{"shared", Shared, 1, ""},
		{"local", Local, 3, ""},
		{"racy", Racy, 2, ""},
		{"miniredis", Shared, 2, "miniredis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			generated, fed := feedScenario(t, tc.kind, tc.servers)
			generated.Topology.Store, fed.Topology.Store = tc.store, tc.store
			want, got := mustRun(t, generated), mustRun(t, fed)
			if figures(t, got) != figures(t, want) {
				t.Fatalf("fed run differs from the generated one:\n got %s\nwant %s", figures(t, got), figures(t, want))
			}
			var retries, rejected int64
			for _, c := range want.Clients {
				retries, rejected = retries+c.Retries, rejected+c.Rejected
			}
			if retries == 0 || rejected == 0 {
				t.Fatalf("the scenario retries nothing or rejects nothing: it tests too little (%+v)", want.Clients)
			}
			if n := fed.Feeds[0].Requests; Estimate(fed) != n {
				t.Errorf("Estimate = %d, want the feed's %d", Estimate(fed), n)
			}
		})
	}
}

// Each run reads its feed from the start, and closes it.
func TestFeedIsReadAfreshByEachRun(t *testing.T) {
	_, fed := feedScenario(t, Shared, 1)
	opened, closed := 0, 0
	sf := sliceFeed{arrivals: nil, opened: &opened, closed: &closed}
	var arrivals []Arrival
	if err := Arrivals(fed, func(a Arrival) bool { arrivals = append(arrivals, a); return true }); err != nil {
		t.Fatal(err)
	}
	sf.arrivals = arrivals
	fed.Feeds = []Feed{sf.feed(0, 3)}
	a, b := mustRun(t, fed), mustRun(t, fed)
	if figures(t, a) != figures(t, b) || opened != 2 || closed != 2 {
		t.Fatalf("two runs: same figures %v, opened %d closed %d (want true, 2, 2)", figures(t, a) == figures(t, b), opened, closed)
	}
	if _, err := Run(context.Background(), fed, Options{}); err != nil || closed != 3 {
		t.Fatalf("third run: %v, closed %d", err, closed)
	}
}

func TestFeedErrors(t *testing.T) {
	at := func(client int, d time.Duration) Arrival { return Arrival{Client: client, At: d} }
	for _, tc := range []struct {
		name     string
		arrivals []Arrival
		failAt   int
		want     string
	}{
		{"read error", []Arrival{at(0, 0), at(0, time.Second)}, 1, "slice: line 7: broken"},
		{"back in time", []Arrival{at(0, 2*time.Second), at(0, time.Second)}, 0, "before the one before it"},
		{"not its client", []Arrival{at(0, 0), at(2, time.Second)}, 0, "not one of the feed's 2 from 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := hammer(Shared, 1, RoundRobin)
			sc.Clients = []Client{{Name: "a", APIKey: "a"}, {Name: "b", APIKey: "b"}, {Name: "c", APIKey: "c", Traffic: sc.Clients[0].Traffic}}
			sc.Feeds = []Feed{sliceFeed{arrivals: tc.arrivals, failAt: tc.failAt}.feed(0, 2)}
			_, err := Run(context.Background(), sc, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if err := Arrivals(sc, func(Arrival) bool { return true }); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Arrivals: err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients = append(sc.Clients, Client{Name: "idle", APIKey: "i"})
	if _, err := Run(context.Background(), sc, Options{}); err == nil || !strings.Contains(err.Error(), `"idle" sends nothing`) {
		t.Fatalf("a client with neither traffic nor feed: err = %v", err)
	}
	sc.Feeds = []Feed{sliceFeed{}.feed(1, 2)}
	if _, err := Run(context.Background(), sc, Options{}); err == nil || !strings.Contains(err.Error(), "clients 1 to 2, and there are 2") {
		t.Fatalf("a feed past the clients: err = %v", err)
	}
}

// Arrivals past the run's end are not sent, and the feed is not read on.
func TestFeedStopsAtTheEnd(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients = []Client{{Name: "a", APIKey: "a"}}
	var arrivals []Arrival
	for i := range 30 {
		arrivals = append(arrivals, Arrival{At: time.Duration(i) * 500 * time.Millisecond, Cost: 1})
	}
	sc.Feeds = []Feed{sliceFeed{arrivals: arrivals}.feed(0, 1)}
	r := mustRun(t, sc)
	if r.Clients[0].Sent != 20 {
		t.Fatalf("sent %d, want the 20 arrivals before 10s", r.Clients[0].Sent)
	}
	if got := r.Clients[0].Allowed; got != 20 {
		t.Fatalf("allowed %d of 20 within a burst of 20", got)
	}
}
